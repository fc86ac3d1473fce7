package reactor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// runHandlers calls every awakened due handler of the cause, in
// registration order, and folds each outcome into the state and the patch.
func (c *cyc) runHandlers(state *persistence.State, due []*registry.Handler, now time.Time) error {
	byID := map[string]*registry.Handler{}
	for _, h := range due {
		byID[h.ID()] = h
	}
	body, err := json.Marshal(c.cause.Body)
	if err != nil {
		return fmt.Errorf("encode the object: %w", err)
	}
	for _, id := range state.Awakened(now) {
		h := byID[id]
		if h == nil {
			continue
		}
		limits := persistence.LimitsFor(h.Spec, c.o.opts.Settings.Execution.DefaultBackoff)
		rec := state.Record(id)
		if step, failed := persistence.Check(limits, rec, time.Now()); failed {
			state.Set(id, step.Record)
			c.report(h, step)
			continue
		}
		if err := c.runHandler(h, state, limits, rec, body); err != nil {
			return err
		}
	}
	return nil
}

// runHandler calls one handler and folds its outcome.
func (c *cyc) runHandler(h *registry.Handler, state *persistence.State, limits persistence.Limits, rec persistence.Record, body []byte) error {
	req, err := c.request(h, rec, body)
	if err != nil {
		return err
	}
	resp, callErr := c.o.modules[h.Module].Handle(c.ctx, req, c.host())
	if callErr != nil && c.ctx.Err() != nil {
		return c.ctx.Err() // shutting down: not the handler's fault
	}
	var out abi.Outcome
	if resp != nil {
		out = resp.Outcome
	}
	step := persistence.Classify(limits, rec, time.Now(), out, callErr)
	state.Set(h.ID(), step.Record)
	c.report(h, step)
	if resp == nil {
		return nil
	}
	if resp.Memo != nil {
		c.memo = resp.Memo
	}
	if err := c.patch.MergeHandlerPatch(h.ID(), resp.Patch); err != nil {
		c.o.log.Error(fmt.Sprintf("Handler '%s' returned a patch that cannot be applied: %v", h.ID(), err), objectAttrs(c.obj)...)
	}
	// Results of delete handlers are not stored: the object is going away,
	// and storing them would cost a request before the finalizer is released.
	if step.Deliver && c.cause.Reason != abi.ReasonDelete {
		if err := c.patch.AddResult(h.ID(), resp.Result); err != nil {
			c.o.log.Error(fmt.Sprintf("Handler '%s' returned a result that cannot be stored: %v", h.ID(), err), objectAttrs(c.obj)...)
		}
	}
	return nil
}

// request builds the handler's kwargs.
func (c *cyc) request(h *registry.Handler, rec persistence.Record, body []byte) (*abi.Request, error) {
	old, new, diff := c.cause.ForHandler(h)
	req := &abi.Request{
		Handler: h.ID(), Kind: h.Kind(), Reason: c.cause.Reason, Resource: c.resourceRef(),
		Body: body, Name: c.obj.GetName(), Namespace: c.obj.GetNamespace(), UID: string(c.obj.GetUID()),
		Retry: rec.Retries, Started: rec.Started, Runtime: rec.Runtime(time.Now()).Seconds(),
		Param: h.Spec.Options.Param, Memo: c.memo,
	}
	var err error
	if req.Old, err = rawOrNil(old); err != nil {
		return nil, err
	}
	if req.New, err = rawOrNil(new); err != nil {
		return nil, err
	}
	if req.Diff, err = diff.ABI(); err != nil {
		return nil, err
	}
	return req, nil
}

func (c *cyc) resourceRef() *abi.ResourceRef {
	ref := c.res.ResourceRef
	ref.Kind = c.obj.GetKind()
	return &ref
}

func (c *cyc) host() *guestHost {
	return &guestHost{kube: c.o.kube, about: kube.RefOf(c.obj), posting: c.o.opts.Settings.Posting}
}

// report logs a handler's step as Kopf words it, and posts a Warning Event
// for failures when posting is on.
func (c *cyc) report(h *registry.Handler, step persistence.Step) {
	attrs := append(objectAttrs(c.obj), "handler", h.ID(), "module", h.Module)
	p := c.o.opts.Settings.Posting
	if step.Err == nil {
		msg := fmt.Sprintf("Handler '%s' succeeded.", h.ID())
		c.o.log.Info(msg, attrs...)
		if p.Enabled && p.Level <= settings.LevelInfo {
			_ = c.o.kube.PostEvent(c.ctx, kube.RefOf(c.obj), abi.EventRequest{Type: "Normal", Reason: "Success", Message: msg})
		}
		return
	}
	msg := fmt.Sprintf("Handler '%s' failed: %v", h.ID(), step.Err)
	if !step.Finished {
		msg = fmt.Sprintf("Handler '%s' failed and will try again in %s: %v", h.ID(), step.Delay, step.Err)
	}
	c.o.log.Error(msg, attrs...)
	if p.Enabled {
		_ = c.o.kube.PostEvent(c.ctx, kube.RefOf(c.obj), abi.EventRequest{Type: "Warning", Reason: "Error", Message: msg})
	}
}

// when asks a guest to evaluate a handler's callback filter.
func (o *Operator) when(ctx context.Context, obj *unstructured.Unstructured, memo []byte) registry.WhenFunc {
	return func(h *registry.Handler, cause *registry.Cause) (bool, error) {
		body, err := json.Marshal(cause.Body)
		if err != nil {
			return false, err
		}
		req := &abi.Request{Call: abi.CallWhen, Handler: h.ID(), Kind: h.Kind(), Reason: cause.Reason,
			Body: body, Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: string(obj.GetUID()),
			Param: h.Spec.Options.Param, Memo: memo}
		resp, err := o.modules[h.Module].Handle(ctx, req, nil)
		if err != nil {
			return false, fmt.Errorf("callback filter of handler '%s': %w", h.ID(), err)
		}
		return resp.Matched != nil && *resp.Matched, nil
	}
}

func rawOrNil(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

// objectAttrs are the log attributes naming an object.
func objectAttrs(obj *unstructured.Unstructured) []any {
	return []any{slog.Group("object", "kind", obj.GetKind(), "namespace", obj.GetNamespace(), "name", obj.GetName())}
}

// processing names a cause's processing as Kopf's log lines do.
func processing(r abi.Reason) string {
	switch r {
	case abi.ReasonCreate:
		return "Creation"
	case abi.ReasonUpdate:
		return "Updating"
	case abi.ReasonDelete:
		return "Deletion"
	case abi.ReasonResume:
		return "Resuming"
	}
	return title(r)
}

func title(r abi.Reason) string {
	s := string(r)
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
