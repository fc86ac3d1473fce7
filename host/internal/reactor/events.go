package reactor

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
)

// Event handlers (Kopf's @kopf.on.event) see every watch event, not just
// the latest state: for resources that have them, the operator keeps the
// events of an object in its memory until the object's next cycle, which
// calls the handlers for each event in order before the changing handlers.

// wantsEvents reports whether a resource has event handlers.
func (o *Operator) wantsEvents(resource string) bool {
	s := o.served[resource]
	return s != nil && len(o.registry.Handlers(s.res.ResourceRef, abi.KindEvent)) > 0
}

// runEventHandlers calls the matching event handlers for each event. Their
// results and patches go into p (nil when the object is gone); their errors
// are logged and otherwise ignored, as in Kopf.
func (o *Operator) runEventHandlers(ctx context.Context, res kube.Resource, events []kube.Event, p *persistence.Patch) {
	for _, ev := range events {
		handlers, err := o.registry.Matching(res.ResourceRef, abi.KindEvent, ev.Object.Object, o.when(ctx, ev.Object, nil))
		if err != nil {
			o.log.Error(fmt.Sprintf("Event handlers skipped: %v", err), objectAttrs(ev.Object)...)
			continue
		}
		if len(handlers) == 0 {
			continue
		}
		raw, err := json.Marshal(ev.Object.Object)
		if err != nil {
			continue
		}
		typ := string(ev.Type)
		if ev.Initial {
			typ = ""
		}
		for _, h := range handlers {
			req := &abi.Request{Handler: h.ID(), Kind: h.Kind(), Resource: &res.ResourceRef, Body: raw,
				Name: ev.Object.GetName(), Namespace: ev.Object.GetNamespace(), UID: string(ev.Object.GetUID()),
				Param: h.Spec.Options.Param, Event: &abi.WatchEvent{Type: typ, Object: raw}}
			host := &guestHost{kube: o.kube, about: kube.RefOf(ev.Object), posting: o.opts.Settings.Posting}
			resp, err := o.modules[h.Module].Handle(ctx, req, host)
			attrs := append(objectAttrs(ev.Object), "handler", h.ID(), "module", h.Module)
			switch {
			case err != nil:
				o.log.Error(fmt.Sprintf("Handler '%s' failed with an error, which is ignored: %v", h.ID(), err), attrs...)
				continue
			case resp.Outcome.Status != abi.OutcomeSuccess:
				o.log.Error(fmt.Sprintf("Handler '%s' failed, which is ignored: %s", h.ID(), resp.Outcome.Message), attrs...)
			}
			if p == nil {
				continue
			}
			if err := p.MergeHandlerPatch(h.ID(), resp.Patch); err != nil {
				o.log.Error(fmt.Sprintf("Handler '%s' returned a patch that cannot be applied: %v", h.ID(), err), attrs...)
			}
			if resp.Outcome.Status == abi.OutcomeSuccess {
				if err := p.AddResult(h.ID(), resp.Result); err != nil {
					o.log.Error(fmt.Sprintf("Handler '%s' returned a result that cannot be stored: %v", h.ID(), err), attrs...)
				}
			}
		}
	}
}
