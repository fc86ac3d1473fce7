package execution

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/util/flowcontrol"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// rates keeps one token bucket per module for the Kubernetes requests and
// Events of its handlers (settings.Isolation.QPS and Burst, or the
// module's own limits), so that a module that floods the API server waits
// for itself and not the others.
type rates struct {
	limits func(module string) settings.ModuleLimits

	mu      sync.Mutex
	buckets map[string]*bucket
	counts  map[string]*BoundHits
}

// BoundHits count how often one module hit its bounds in its calls.
type BoundHits struct {
	// Throttled counts its requests and Events that waited for its rate
	// limit; Timeouts its calls stopped by wasm.callTimeout; OutOfMemory
	// its calls that ran out of memory (its instance's limit or its
	// budget).
	Throttled, Timeouts, OutOfMemory uint64
}

// count adds to module's hits under r.mu.
func (r *rates) count(module string, add func(*BoundHits)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[string]*BoundHits{}
	}
	h := r.counts[module]
	if h == nil {
		h = &BoundHits{}
		r.counts[module] = h
	}
	add(h)
}

// Hits returns how often module hit its bounds in its calls.
func (e *Executor) Hits(module string) BoundHits {
	e.rates.mu.Lock()
	defer e.rates.mu.Unlock()
	if h := e.rates.counts[module]; h != nil {
		return *h
	}
	return BoundHits{}
}

// countFailure counts a call the sandbox ended for a bound.
func (e *Executor) countFailure(module string, callErr error) {
	cerr := (*wasmrt.CallError)(nil)
	if !errors.As(callErr, &cerr) {
		return
	}
	switch cerr.Kind {
	case wasmrt.KindTimeout:
		e.rates.count(module, func(h *BoundHits) { h.Timeouts++ })
	case wasmrt.KindOutOfMemory:
		e.rates.count(module, func(h *BoundHits) { h.OutOfMemory++ })
	}
}

// bucket is one module's token bucket and the limits it was built for.
type bucket struct {
	qps     float32
	burst   int
	limiter flowcontrol.RateLimiter
}

// limiter returns module's token bucket (nil: unlimited), built again when
// its limits changed.
func (r *rates) limiter(module string) flowcontrol.RateLimiter {
	l := r.limits(module)
	if l.QPS <= 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buckets[module]
	if b == nil || b.qps != l.QPS || b.burst != l.Burst {
		b = &bucket{qps: l.QPS, burst: l.Burst, limiter: flowcontrol.NewTokenBucketRateLimiter(l.QPS, max(l.Burst, 1))}
		r.buckets[module] = b
	}
	return b.limiter
}

// throttled wraps a call's host functions so that the guest's Kubernetes
// requests and Events wait for its module's rate limit.
func (e *Executor) throttled(module string, host wasmrt.Host) wasmrt.Host {
	lim := e.rates.limiter(module)
	if lim == nil {
		return host
	}
	return &throttleHost{Host: host, module: module, limiter: lim, rates: e.rates}
}

// throttleHost waits for a module's token bucket before each Kubernetes
// request and Event of the wrapped host.
type throttleHost struct {
	wasmrt.Host
	module  string
	limiter flowcontrol.RateLimiter
	rates   *rates
}

// wait takes a token, waiting at most until ctx ends (the call's timeout).
func (h *throttleHost) wait(ctx context.Context) *abi.HostError {
	if h.limiter.TryAccept() {
		return nil
	}
	start := time.Now()
	err := h.limiter.Wait(ctx)
	metrics.ModuleThrottled(h.module, time.Since(start))
	h.rates.count(h.module, func(c *BoundHits) { c.Throttled++ })
	if err != nil {
		return &abi.HostError{Code: 429, Reason: "TooManyRequests", Origin: abi.OriginHost,
			Message: "the module's Kubernetes request rate limit (isolation.qps) left no room before the call's timeout"}
	}
	return nil
}

// Kube carries out the guest's request once the module's rate allows it.
func (h *throttleHost) Kube(ctx context.Context, req abi.KubeRequest) abi.KubeResponse {
	if err := h.wait(ctx); err != nil {
		return abi.KubeResponse{Error: err}
	}
	return h.Host.Kube(ctx, req)
}

// PostEvent posts the guest's Event once the module's rate allows it.
func (h *throttleHost) PostEvent(ctx context.Context, ev abi.EventRequest) error {
	if err := h.wait(ctx); err != nil {
		return err
	}
	return h.Host.PostEvent(ctx, ev)
}

// LogAttrs forwards the wrapped host's log attributes.
func (h *throttleHost) LogAttrs() []slog.Attr {
	if la, ok := h.Host.(wasmrt.LogAttrser); ok {
		return la.LogAttrs()
	}
	return nil
}
