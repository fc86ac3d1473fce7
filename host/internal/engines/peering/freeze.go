package peering

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
)

// Manual is a record written by hand: `kopf-wasm freeze` and `kopf-wasm
// resume`, as Kopf's commands.
type Manual struct {
	// Name of the peering object.
	Name string
	// Namespaces whose KopfPeering is written; empty with Clusterwide
	// false means the ClusterKopfPeering, as Clusterwide does.
	Namespaces  []string
	Clusterwide bool
	// ID is the record's identity; empty: [ManualIdentity].
	ID string
	// Priority and Lifetime of a freeze; Message is written with it.
	Priority int
	Lifetime time.Duration
	Message  string
}

// Freeze writes a record of the manual peer, so that every host of a lower
// (or the same) priority in that peering pauses until the record's
// lifetime has passed or [Unfreeze] removes it.
func Freeze(ctx context.Context, kc *kube.Client, m Manual) error {
	rec := Peer{ID: m.id(), Priority: m.Priority, Lifetime: m.Lifetime, LastSeen: time.Now(), Message: m.Message}
	return m.write(ctx, kc, map[string]any{rec.ID: rec.Record()})
}

// Unfreeze removes the manual peer's record (Kopf's resume).
func Unfreeze(ctx context.Context, kc *kube.Client, m Manual) error {
	return m.write(ctx, kc, map[string]any{m.id(): nil})
}

func (m Manual) id() string {
	if m.ID != "" {
		return m.ID
	}
	return ManualIdentity()
}

// write patches the status of every peering object the command names.
func (m Manual) write(ctx context.Context, kc *kube.Client, status map[string]any) error {
	clusterwide := m.Clusterwide || len(m.Namespaces) == 0
	res, err := kc.PeeringResource(ctx, clusterwide)
	if err != nil {
		return fmt.Errorf("peering %q: the peering CRD is not installed (deploy/peering/crds.yaml): %w", m.Name, err)
	}
	namespaces := m.Namespaces
	if clusterwide {
		namespaces = []string{""}
	}
	for _, ns := range namespaces {
		if err := kc.PatchPeering(ctx, res, ns, m.Name, status); err != nil {
			where := fmt.Sprintf("%s %q", res.Kind, m.Name)
			if ns != "" {
				where += fmt.Sprintf(" in namespace %q", ns)
			}
			if errors.Is(err, kube.ErrGone) {
				return fmt.Errorf("%s does not exist: create it first (deploy/peering/objects.yaml has examples): %w", where, err)
			}
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	return nil
}
