package reactor

import (
	"context"
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
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
		subj := execution.NewSubject(res.ResourceRef, res.Status, ev.Object)
		handlers, err := o.registry.Matching(res.ResourceRef, abi.KindEvent, ev.Object.Object, o.exec.When(ctx, subj, nil))
		if err != nil {
			o.log.Error(fmt.Sprintf("Event handlers skipped: %v", err), subj.Attrs()...)
			continue
		}
		handlers = o.declared(handlers, subj) // with a canary, only the event's object's version
		typ := string(ev.Type)
		if ev.Initial {
			typ = ""
		}
		for _, h := range handlers {
			in := execution.Input{Subject: subj, Event: &execution.EventInput{Type: typ}}
			r, err := o.exec.Call(ctx, h, in, execution.CallOptions{})
			if err != nil {
				o.log.Error(fmt.Sprintf("Event handlers skipped: %v", err), subj.Attrs()...)
				break
			}
			o.exec.Report(ctx, subj, h, r.Step, "")
			o.exec.Fold(p, subj, h, r, true)
		}
	}
}
