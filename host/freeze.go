package host

import (
	"context"
	"fmt"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/peering"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"k8s.io/client-go/rest"
)

// PeerOptions configure [Freeze] and [Unfreeze], Kopf's `kopf freeze` and
// `kopf resume`: a record written by hand into a peering object.
type PeerOptions struct {
	// RestConfig, Kubeconfig and KubeContext select the cluster as for
	// [Run].
	RestConfig              *rest.Config
	Kubeconfig, KubeContext string
	// Peering is the peering object's name. Required.
	Peering string
	// Namespaces whose KopfPeering is written; with none, or with
	// AllNamespaces, the ClusterKopfPeering.
	Namespaces    []string
	AllNamespaces bool
	// ID is the record's identity; empty: Kopf's "<user>@<host>".
	ID string
	// Priority of the frozen record (Kopf's default 100), Lifetime how long
	// it holds (whole seconds, required for Freeze), Message why (written
	// with the record; hosts log it when they pause for it).
	Priority int
	Lifetime time.Duration
	Message  string
}

// Freeze writes a peer record of Priority for Lifetime: every host of that
// peering with a lower priority pauses until the lifetime has passed or
// [Unfreeze] removes the record (hosts of the same priority pause too, as
// with any peer).
func Freeze(ctx context.Context, o PeerOptions) error {
	if o.Lifetime < time.Second {
		return fmt.Errorf("%w: freeze: the lifetime must be at least 1 second", ErrUsage)
	}
	kc, m, err := peerClient(ctx, o)
	if err != nil {
		return err
	}
	return peering.Freeze(ctx, kc, m)
}

// Unfreeze removes the record that [Freeze] wrote under the same ID
// (Kopf's resume).
func Unfreeze(ctx context.Context, o PeerOptions) error {
	kc, m, err := peerClient(ctx, o)
	if err != nil {
		return err
	}
	return peering.Unfreeze(ctx, kc, m)
}

func peerClient(ctx context.Context, o PeerOptions) (*kube.Client, peering.Manual, error) {
	m := peering.Manual{Name: o.Peering, Namespaces: o.Namespaces, Clusterwide: o.AllNamespaces, ID: o.ID,
		Priority: o.Priority, Lifetime: o.Lifetime.Truncate(time.Second), Message: o.Message}
	if o.Peering == "" {
		return nil, m, fmt.Errorf("%w: no peering name: name the peering object", ErrUsage)
	}
	if o.AllNamespaces && len(o.Namespaces) > 0 {
		return nil, m, fmt.Errorf("%w: namespaces and all-namespaces are mutually exclusive: pass one or the other", ErrUsage)
	}
	cfg, err := restConfig(o.RestConfig, o.Kubeconfig, o.KubeContext)
	if err != nil {
		return nil, m, classify(ErrKubeconfig, err)
	}
	s := settings.Default()
	kc, err := kube.New(cfg, kube.Options{Settings: &s, Logger: discardLogger})
	if err != nil {
		return nil, m, classify(ErrKubeconfig, err)
	}
	if err := kc.Ping(ctx); err != nil {
		return nil, m, classify(ErrUnreachable, err)
	}
	return kc, m, nil
}
