package execution

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Host returns the host functions of a call about subj (nil for an
// activity): the guest's Events are about the subject, its Kubernetes
// requests go to the cluster (the runtime has already checked them against
// the module's permissions). Offline everything answers "not available".
// Index look-ups and daemon stops are not served here; engines that serve
// them wrap this host.
func (e *Executor) Host(subj *Subject) wasmrt.Host {
	if e.opts.Cluster == nil {
		return wasmrt.NoHost{}
	}
	h := &guestHost{cluster: e.opts.Cluster, posting: e.opts.Settings.Posting}
	if subj != nil {
		h.about, h.cycle = subj.Ref(), subj.Cycle
	}
	return h
}

// LogAttrs are added to the guest's log records: the processing cycle.
func (h *guestHost) LogAttrs() []slog.Attr {
	if h.cycle == "" {
		return nil
	}
	return []slog.Attr{slog.String("cycle", h.cycle)}
}

// guestHost is the wasmrt.Host of one handler call.
type guestHost struct {
	wasmrt.NoHost
	cluster Cluster
	about   kube.ObjectRef
	posting settings.Posting
	cycle   string // Subject.Cycle
}

// PostEvent posts the guest's Event about the handled object, or about
// the object the guest names (Kopf's kopf.event(objs, ...)), unless
// posting is off.
func (h *guestHost) PostEvent(ctx context.Context, ev abi.EventRequest) error {
	about := h.about
	if r := ev.About; r != nil {
		if r.APIVersion == "" || r.Kind == "" || r.Name == "" {
			return &abi.HostError{Code: http.StatusBadRequest, Reason: "BadRequest", Origin: abi.OriginHost,
				Message: "the Event's object needs apiVersion, kind and name (build it with kopf.BuildObjectReference)"}
		}
		about = kube.ObjectRef{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, UID: r.UID}
	}
	switch {
	case !h.posting.Enabled:
		return nil
	case about.Name == "":
		return errors.New("there is no object to post an Event about in an activity handler; name one")
	}
	return h.cluster.PostEvent(ctx, about, ev)
}

// Kube carries out the guest's Kubernetes request.
func (h *guestHost) Kube(ctx context.Context, req abi.KubeRequest) abi.KubeResponse {
	return h.cluster.Do(ctx, req)
}
