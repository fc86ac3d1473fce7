package offline

import (
	"context"
	"errors"
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/hosterr"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// ErrNotCalled is wrapped by the error of [Invoke] when the operator would
// not call the handler for the object (a filter does not match) and
// [Call.Force] is not set.
var ErrNotCalled = errors.New("the operator would not call the handler")

// offlineGuest prepares an offline call: it applies the handler's filters
// as the operator would (labels, annotations, field value, old/new, the
// field's change, when) and returns the host functions of the call.
func (inv Call) offlineGuest(ctx context.Context, exec *execution.Executor, h *registry.Handler, in execution.Input) (wasmrt.Host, error) {
	why, err := whyNotCalled(ctx, exec, h, in)
	if err != nil {
		return nil, fmt.Errorf("handler %s: %w", h.ID(), err)
	}
	if why != "" {
		if !inv.Force {
			return nil, fmt.Errorf("%w %s for this object: %s", ErrNotCalled, h.ID(), why)
		}
		inv.Logger.Warn(fmt.Sprintf("The operator would not call handler '%s' for this object: %s; called because the call is forced.", h.ID(), why))
	}
	if len(inv.Objects) == 0 && inv.Connect == nil {
		return wasmrt.NoHost{}, nil
	}
	guest, _ := newOfflineHost(nil, inv.KubeCalls)
	if in.Subject != nil {
		_ = guest.add(in.Subject.Object.Object) // the object itself, unless stored too
	}
	for i, obj := range inv.Objects {
		if err := guest.add(obj); err != nil {
			return nil, fmt.Errorf("%w: stored object %d: %w", hosterr.ErrUsage, i+1, err)
		}
	}
	if inv.Connect != nil {
		cluster, err := connectReadOnly(inv)
		if err != nil {
			return nil, err
		}
		guest.cluster = cluster
	}
	return guest, nil
}

// whyNotCalled asks the registry's filters, and the guest's when, about the
// offline call's object; activities and conversions have no filters.
func whyNotCalled(ctx context.Context, exec *execution.Executor, h *registry.Handler, in execution.Input) (string, error) {
	kind := h.Kind()
	if kind.IsActivity() || kind == abi.KindConvert || in.Subject == nil {
		return "", nil
	}
	cause := in.Cause
	if cause == nil {
		cause = &registry.Cause{Body: in.Subject.Object.Object}
	}
	when := exec.When(ctx, in.Subject, nil)
	if kind.IsWebhook() {
		when = exec.AdmissionWhen(ctx, in)
	}
	return registry.WhyNot(h, cause, when)
}
