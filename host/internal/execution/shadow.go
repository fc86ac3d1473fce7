package execution

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/rollout"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// shadowed reports whether calls of this kind are repeated on a shadow
// version: changing and event handlers and timers (daemons run for as
// long as their object; a second one per object would double what they
// hold, and their outcome comes only when they end).
func shadowed(k abi.HandlerKind) bool {
	return k.IsChanging() || k == abi.KindEvent || k == abi.KindTimer
}

// shadow repeats a call the serving version answered (resp, err) on the
// module's shadow version, if it has one, and compares the answers. It
// does not wait: the shadow call runs on a goroutine of its own, with
// its own instances, after the serving call has answered, so it adds
// nothing to the serving call but this function's few allocations; when
// settings.Rollouts.ShadowConcurrency shadow calls are in flight the call
// is not shadowed and counted as skipped. The shadow's host calls are
// answered as the serving one's are, but its Events are not posted and
// its Kubernetes writes are sent as dry runs (dryRun=All): nothing it
// does is stored, and its outcome, result and patch are only compared.
func (e *Executor) shadow(h *registry.Handler, subj *Subject, req *abi.Request, resp *abi.Response, err error) {
	if e.opts.Shadow == nil || subj == nil || !shadowed(h.Kind()) {
		return
	}
	mod, counters := e.opts.Shadow(h.Module)
	if mod == nil {
		return
	}
	select {
	case e.shadows <- struct{}{}:
	default:
		counters.Skip()
		metrics.ShadowSkipped(h.Module)
		return
	}
	again := *req // the serving call is done with req; only the deadline changes
	host := e.withIndices(h.Module, &shadowHost{Host: e.Host(subj), cluster: e.opts.Cluster})
	e.shadowing.Add(1)
	go func() {
		defer e.shadowing.Done()
		defer func() { <-e.shadows }()
		ctx, cancel := context.WithTimeout(context.Background(), e.shadowTimeout())
		defer cancel()
		again.Deadline = e.deadline(ctx, e.opts.Clock.Now(), false)
		got, gotErr := mod.Handle(ctx, &again, host)
		failed := gotErr != nil || got == nil || got.Outcome.Status != abi.OutcomeSuccess
		counters.Call(failed)
		metrics.RolloutCall(h.Module, rollout.Shadow, failed)
		diffs := rollout.Compare(resp, err, got, gotErr)
		if len(diffs) == 0 {
			return
		}
		what := fmt.Sprintf("handler '%s' of %s: %s", h.ID(), objectName(subj), strings.Join(diffs, "; "))
		counters.Differed(what)
		metrics.ShadowDiffered(h.Module)
		e.log.Warn(fmt.Sprintf("The shadow version of module %q answered otherwise: %s.", h.Module, strings.Join(diffs, "; ")),
			e.attrs(subj, h)...)
	}()
}

// WaitShadows waits for the shadow calls in flight (each bounded by the
// wasm call timeout); the operator calls it when it stops.
func (e *Executor) WaitShadows() { e.shadowing.Wait() }

// shadowTimeout bounds a shadow call: the wasm call timeout, or a minute
// when calls have none.
func (e *Executor) shadowTimeout() time.Duration {
	if t := e.opts.Settings.Wasm.CallTimeout; t > 0 {
		return t
	}
	return time.Minute
}

// objectName is "namespace/name" of the subject's object.
func objectName(subj *Subject) string {
	if ns := subj.Object.GetNamespace(); ns != "" {
		return ns + "/" + subj.Object.GetName()
	}
	return subj.Object.GetName()
}

// dryRunner is the part of the cluster client that sends writes as dry
// runs (*kube.Client).
type dryRunner interface {
	DoDryRun(ctx context.Context, req abi.KubeRequest) abi.KubeResponse
}

// shadowHost is the host of a shadow call: reads as the serving call's,
// no Events, writes as dry runs.
type shadowHost struct {
	wasmrt.Host
	cluster Cluster
}

// PostEvent answers as if the Event were posted, and posts nothing.
func (h *shadowHost) PostEvent(context.Context, abi.EventRequest) error { return nil }

// Kube serves reads as the serving version's host does and sends writes
// as dry runs.
func (h *shadowHost) Kube(ctx context.Context, req abi.KubeRequest) abi.KubeResponse {
	if req.Verb == abi.VerbGet || req.Verb == abi.VerbList {
		return h.Host.Kube(ctx, req)
	}
	if d, ok := h.cluster.(dryRunner); ok {
		return d.DoDryRun(ctx, req)
	}
	return abi.KubeResponse{Error: &abi.HostError{Code: http.StatusNotImplemented, Reason: "NotAvailable", Origin: abi.OriginHost,
		Message: "a shadow version's writes are sent as dry runs, which this cluster client cannot send"}}
}
