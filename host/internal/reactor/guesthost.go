package reactor

import (
	"context"
	"errors"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// guestHost is the wasmrt.Host of one handler call: the guest's Events are
// about the object being handled and its Kubernetes requests go to the
// cluster through the kube package (the runtime has already checked them
// against the module's permissions). Index look-ups and daemon stops are
// not served by change handlers.
type guestHost struct {
	wasmrt.NoHost
	kube    *kube.Client
	about   kube.ObjectRef
	posting settings.Posting
}

var _ wasmrt.Host = (*guestHost)(nil)

// PostEvent posts the guest's Event about the handled object, unless
// posting is off.
func (h *guestHost) PostEvent(ctx context.Context, ev abi.EventRequest) error {
	switch {
	case !h.posting.Enabled:
		return nil
	case h.about.Name == "":
		return errors.New("there is no object to post an Event about in an activity handler")
	}
	return h.kube.PostEvent(ctx, h.about, ev)
}

// Kube carries out the guest's Kubernetes request.
func (h *guestHost) Kube(ctx context.Context, req abi.KubeRequest) abi.KubeResponse {
	return h.kube.Do(ctx, req)
}
