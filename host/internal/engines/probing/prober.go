package probing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// Options configure a [Prober].
type Options struct {
	// Exec calls the handlers. Required.
	Exec *execution.Executor
	// Handlers returns the probe handlers of the current module set, in
	// registration order. Required.
	Handlers func() []*registry.Handler
	// Memo returns the memo a module's probes get. Optional: by default
	// the executor gives them the module's operator memo.
	Memo func(module string) json.RawMessage
	// Cache is how long a round's answer is reused
	// (settings.Execution.ProbeCache); zero calls the probes on every
	// request.
	Cache time.Duration
	// Logger receives failures. Default the executor's.
	Logger *slog.Logger
}

// Report is one round's answer.
type Report struct {
	// Results map each probe's id to its result, or to {"error": message}
	// when it failed. As Kopf's, a probe that returned nothing (or whose
	// error its errors mode ignores) is left out.
	Results map[string]json.RawMessage
	// Failed lists the ids of the probes that failed, in order.
	Failed []string
	// At is when the round was made.
	At time.Time
}

// OK reports whether every probe succeeded.
func (r Report) OK() bool { return len(r.Failed) == 0 }

// JSON is the report's body, Kopf's {probe_id: result}.
func (r Report) JSON() []byte {
	b, err := json.Marshal(r.Results)
	if err != nil { // results are valid JSON, checked when collected
		return []byte("{}")
	}
	return b
}

// Prober answers the probe handlers; see the package documentation. Safe
// for concurrent use.
type Prober struct {
	opts Options
	log  *slog.Logger

	mu   sync.Mutex // held for a whole round: no stampede
	last *Report
}

// New returns a prober.
func New(opts Options) *Prober {
	log := opts.Logger
	if log == nil {
		log = opts.Exec.Logger()
	}
	return &Prober{opts: opts, log: log}
}

// Probe returns the last round's report when it is younger than the
// cache, and otherwise makes a round: every probe handler is called once.
// The error is not a probe's failure (that is in the report) but ctx's.
func (p *Prober) Probe(ctx context.Context) (Report, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	clock := p.opts.Exec.Clock()
	if p.last != nil && p.opts.Cache > 0 && clock.Since(p.last.At) < p.opts.Cache {
		return *p.last, nil
	}
	r := Report{Results: map[string]json.RawMessage{}}
	for _, h := range p.opts.Handlers() {
		if h.Kind() != abi.KindProbe {
			continue
		}
		res, err := p.call(ctx, h)
		if ctx.Err() != nil {
			return Report{}, ctx.Err()
		}
		if err != nil {
			r.Failed = append(r.Failed, h.ID())
			res = failure(err)
			p.log.Warn(fmt.Sprintf("Probe handler '%s' failed: %v", h.ID(), err), "handler", h.ID(), "module", h.Module)
		} else {
			p.log.Debug(fmt.Sprintf("Probe handler '%s' succeeded.", h.ID()), "handler", h.ID(), "module", h.Module)
		}
		if res != nil {
			r.Results[h.ID()] = res
		}
	}
	r.At = clock.Now()
	p.last = &r
	return r, nil
}

// call makes one attempt of a probe and returns its result.
func (p *Prober) call(ctx context.Context, h *registry.Handler) (json.RawMessage, error) {
	in := execution.Input{}
	if p.opts.Memo != nil {
		in.Memo = p.opts.Memo(h.Module)
	}
	r, err := p.opts.Exec.Call(ctx, h, in, execution.CallOptions{})
	if err != nil {
		return nil, err
	}
	if r.Step.Err != nil {
		var ignored *execution.IgnoredError
		switch {
		case errors.As(r.Step.Err, &ignored):
			return nil, nil
		case r.CallErr != nil:
			return nil, r.CallErr
		case r.Response != nil && r.Response.Outcome.Message != "":
			// The guest's own words: "will retry" does not apply to a
			// probe, whose next round is its retry.
			return nil, errors.New(r.Response.Outcome.Message)
		}
		return nil, r.Step.Err
	}
	if r.Response == nil || len(r.Response.Result) == 0 || string(r.Response.Result) == "null" {
		return nil, nil
	}
	if !json.Valid(r.Response.Result) {
		return nil, errors.New("the result is not JSON")
	}
	return r.Response.Result, nil
}

func failure(err error) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	return b
}
