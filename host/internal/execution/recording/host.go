package recording

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// Host is the host of a recorded call: it passes each host call on to the
// host it wraps and notes it with its answer. Sleeps and stop checks are
// passed on and not noted (they answer nothing a replay could differ on).
type Host struct {
	wasmrt.Host
	mu    sync.Mutex
	calls []HostCall
}

var _ wasmrt.Host = (*Host)(nil)

// Wrap returns a recording host over h (nil: wasmrt.NoHost).
func Wrap(h wasmrt.Host) *Host {
	if h == nil {
		h = wasmrt.NoHost{}
	}
	return &Host{Host: h}
}

// Calls returns the host calls noted so far.
func (h *Host) Calls() []HostCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]HostCall(nil), h.calls...)
}

func (h *Host) note(c HostCall) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, c)
}

// LogAttrs passes on the wrapped host's log attributes, when it has any.
func (h *Host) LogAttrs() []slog.Attr {
	if la, ok := h.Host.(interface{ LogAttrs() []slog.Attr }); ok {
		return la.LogAttrs()
	}
	return nil
}

// PostEvent implements wasmrt.Host.
func (h *Host) PostEvent(ctx context.Context, ev abi.EventRequest) error {
	err := h.Host.PostEvent(ctx, ev)
	c := HostCall{Event: &ev}
	if err != nil {
		c.EventError = err.Error()
	}
	h.note(c)
	return err
}

// Kube implements wasmrt.Host.
func (h *Host) Kube(ctx context.Context, req abi.KubeRequest) abi.KubeResponse {
	resp := h.Host.Kube(ctx, req)
	h.note(HostCall{Kube: &req, KubeAnswer: &resp})
	return resp
}

// IndexLookup implements wasmrt.Host.
func (h *Host) IndexLookup(ctx context.Context, req abi.IndexLookupRequest) abi.IndexLookupResponse {
	resp := h.Host.IndexLookup(ctx, req)
	h.note(HostCall{Index: &req, IndexAnswer: &resp})
	return resp
}

// Replayer is the host of a replayed call: it answers each host call with
// the answer recorded for an equal call (each recorded call answers once,
// in order), and a call the recording does not hold with a 501 error that
// says so. A daemon or timer is told to stop at its first sleep or stop
// check, so that a replayed daemon ends.
type Replayer struct {
	wasmrt.NoHost
	mu     sync.Mutex
	calls  []HostCall
	used   []bool
	missed []string
}

var _ wasmrt.Host = (*Replayer)(nil)

// NewReplayer returns the host that answers from calls.
func NewReplayer(calls []HostCall) *Replayer {
	return &Replayer{calls: calls, used: make([]bool, len(calls))}
}

// Missed lists the host calls the recording did not hold, one line each.
func (r *Replayer) Missed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.missed...)
}

// find returns the first unused recorded call that match accepts.
func (r *Replayer) find(match func(HostCall) bool, what string) (HostCall, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range r.calls {
		if !r.used[i] && match(c) {
			r.used[i] = true
			return c, true
		}
	}
	r.missed = append(r.missed, what)
	return HostCall{}, false
}

// notRecorded is the answer to a host call the recording does not hold.
func notRecorded(what string) *abi.HostError {
	return &abi.HostError{Code: http.StatusNotImplemented, Reason: "NotRecorded", Origin: abi.OriginHost,
		Message: fmt.Sprintf("%s is not in the recording: the module made a call the recorded version did not", what)}
}

// PostEvent implements wasmrt.Host.
func (r *Replayer) PostEvent(_ context.Context, ev abi.EventRequest) error {
	what := fmt.Sprintf("event %s %s", ev.Type, ev.Reason)
	c, ok := r.find(func(c HostCall) bool { return c.Event != nil && reflect.DeepEqual(*c.Event, ev) }, what)
	switch {
	case !ok:
		return notRecorded(what)
	case c.EventError != "":
		return &abi.HostError{Code: http.StatusInternalServerError, Reason: "Recorded", Origin: abi.OriginHost, Message: c.EventError}
	}
	return nil
}

// Kube implements wasmrt.Host. Requests are compared redacted, as they
// were recorded.
func (r *Replayer) Kube(_ context.Context, req abi.KubeRequest) abi.KubeResponse {
	red := RedactKube(req)
	what := fmt.Sprintf("%s %s", req.Verb, kubePath(req))
	c, ok := r.find(func(c HostCall) bool { return c.Kube != nil && sameKube(*c.Kube, red) }, what)
	if !ok || c.KubeAnswer == nil {
		return abi.KubeResponse{Error: notRecorded(what)}
	}
	return *c.KubeAnswer
}

// IndexLookup implements wasmrt.Host.
func (r *Replayer) IndexLookup(_ context.Context, req abi.IndexLookupRequest) abi.IndexLookupResponse {
	what := fmt.Sprintf("index look-up %s %s", req.Index, req.Key)
	c, ok := r.find(func(c HostCall) bool { return c.Index != nil && reflect.DeepEqual(*c.Index, req) }, what)
	if !ok || c.IndexAnswer == nil {
		return abi.IndexLookupResponse{Error: notRecorded(what)}
	}
	return *c.IndexAnswer
}

// SleepUntilStopped implements wasmrt.Host: a replay does not wait, it
// stops.
func (r *Replayer) SleepUntilStopped(context.Context, time.Duration) abi.SleepResponse {
	return abi.SleepResponse{Stopped: true, Reason: "replay"}
}

// IsStopped implements wasmrt.Host: a replayed daemon is asked to stop.
func (r *Replayer) IsStopped(context.Context) abi.SleepResponse {
	return abi.SleepResponse{Stopped: true, Reason: "replay"}
}

// sameKube compares two Kubernetes requests, their bodies as JSON values.
func sameKube(a, b abi.KubeRequest) bool {
	ab, bb := a.Body, b.Body
	a.Body, b.Body = nil, nil
	return reflect.DeepEqual(a, b) && sameJSON(ab, bb)
}

// sameJSON compares two JSON texts as values (absent and null are equal).
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if len(a) > 0 && json.Unmarshal(a, &x) != nil {
		return string(a) == string(b)
	}
	if len(b) > 0 && json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// kubePath names a Kubernetes request's object as a path.
func kubePath(r abi.KubeRequest) string {
	p := r.Version + "/" + r.Resource
	if r.Group != "" {
		p = r.Group + "/" + p
	}
	if r.Namespace != "" {
		p += " in " + r.Namespace
	}
	if r.Name != "" {
		p += " " + r.Name
	}
	return p
}
