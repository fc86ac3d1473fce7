package wasmrt

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Module is a loaded module: its manifest and a pool of instances. It is
// safe for concurrent use; Close it when it is no longer needed.
type Module struct {
	rt       *Runtime
	code     *compiled
	start    start  // what its instances start with besides the code
	digest   string // of the module's bytes, which code's may not be
	name     string
	manifest abi.Manifest
	pool     *pool
	logger   *slog.Logger

	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup // calls in flight

	// budget bounds the memory of all the module's instances (budget.go);
	// limits are its own bounds, set by SetLimits.
	budget   *budget
	limitsMu sync.Mutex
	limits   *settings.ModuleLimits
}

// newModule instantiates the code once, checks the exports, reads and
// validates the manifest, and keeps the instance as the first of the pool.
func newModule(ctx context.Context, rt *Runtime, c *compiled, st start, name, digest string) (*Module, error) {
	m := &Module{rt: rt, code: c, start: st, digest: digest, name: name, logger: rt.opts.Logger.With("module", name), budget: &budget{}}
	m.manifest.Module.Name = name // until the guest says otherwise
	inst, err := newInstance(withBudget(ctx, m.budget), rt, c, st)
	if err != nil {
		return nil, fmt.Errorf("cannot instantiate the module: %w; it may import host functions of another ABI version: rebuild it with the kopf-wasm guest SDK for ABI v%d", err, abi.Version)
	}
	if err := m.init(ctx, inst); err != nil {
		inst.close()
		return nil, err
	}
	m.pool = newPool(rt.opts.PoolSize, m.newInstance)
	m.pool.recycleCalls, m.pool.recycleBytes = rt.opts.RecycleCalls, rt.opts.RecycleBytes
	m.pool.add(inst)
	return m, nil
}

// init reads the manifest with inst and checks it and the exports.
func (m *Module) init(ctx context.Context, inst *instance) error {
	if !inst.has("_initialize") && inst.has("_start") {
		return fmt.Errorf("%w: rebuild it with -buildmode=c-shared", ErrNotReactor)
	}
	if !inst.has(abi.ExportManifest) {
		return fmt.Errorf("%w: it does not export %s, so it is not a kopf-wasm module: build it with the kopf-wasm guest SDK (ABI v%d)",
			ErrMissingExport, abi.ExportManifest, abi.Version)
	}
	out, cerr := m.invoke(ctx, inst, abi.ExportManifest, nil, nil, nil)
	if cerr != nil {
		return cerr
	}
	var man abi.Manifest
	if err := json.Unmarshal(out, &man); err != nil {
		return fmt.Errorf("%w (%w): rebuild it with the kopf-wasm guest SDK for ABI v%d", ErrManifestJSON, err, abi.Version)
	}
	if man.ABIVersion != abi.Version {
		return man.Validate() // a *abi.VersionError
	}
	if !inst.has(abi.ExportHandle) {
		return fmt.Errorf("%w: it exports %s but not %s: rebuild it with the kopf-wasm guest SDK for ABI v%d",
			ErrMissingExport, abi.ExportManifest, abi.ExportHandle, abi.Version)
	}
	if err := man.Validate(); err != nil {
		return err
	}
	m.manifest = man
	return nil
}

// newInstance makes a pooled instance ready for calls: it runs the
// manifest export once, which also initialises the guest's runtime
// (_initialize), so that a handler's first call does not pay for it.
func (m *Module) newInstance(ctx context.Context) (*instance, error) {
	if m.budget.full() {
		return nil, &CallError{Module: m.manifest.Module.Name, Kind: KindOutOfMemory,
			Err: fmt.Errorf("the module's instances hold its memory budget (%d bytes, isolation.memoryBytes): no instance can start until one ends", m.budget.limit.Load())}
	}
	inst, err := newInstance(withBudget(ctx, m.budget), m.rt, m.code, m.start)
	if err != nil {
		return nil, &CallError{Module: m.manifest.Module.Name, Kind: KindInternal, Err: err}
	}
	if _, cerr := m.invoke(ctx, inst, abi.ExportManifest, nil, nil, nil); cerr != nil {
		inst.close()
		return nil, cerr
	}
	return inst, nil
}

// Manifest returns the module's validated manifest.
func (m *Module) Manifest() abi.Manifest { return m.manifest }

// Name returns the name the module was loaded with.
func (m *Module) Name() string { return m.name }

// Digest returns "sha256:<hex>" of the module's bytes.
func (m *Module) Digest() string { return m.digest }

// Stats returns the state of the module's instance pool.
func (m *Module) Stats() Stats {
	s := m.pool.stats()
	s.BudgetBytes, s.BudgetHits = m.budget.used.Load(), m.budget.hits.Load()
	return s
}

// Close stops new calls, waits for the calls in flight (at most
// [Options.Timeout]) and frees the module's instances, and its compiled
// code unless another loaded module shares it.
func (m *Module) Close() {
	m.rt.mu.Lock()
	delete(m.rt.modules, m)
	m.rt.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closeLocked()
}

// closeLocked is Close with m.mu held (or m not yet shared).
func (m *Module) closeLocked() {
	if m.closed {
		return
	}
	m.closed = true
	m.pool.close()
	m.calls.Wait()
	m.pool.drain()
	m.rt.release(m.code)
	m.start.close() // the instances' mappings are gone with them
}

// begin registers a call in flight, or fails if the module is closed.
func (m *Module) begin() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	m.calls.Add(1)
	return nil
}

// invoke calls fn on inst under the runtime's timeout, with the call's
// state in the context for the host functions.
func (m *Module) invoke(ctx context.Context, inst *instance, fn string, input []byte, req *abi.Request, host Host) ([]byte, *CallError) {
	return m.invokeFor(ctx, inst, fn, input, req, host, m.rt.opts.Timeout)
}

// invokeFor is invoke with its own timeout; zero means ctx alone bounds the
// call.
func (m *Module) invokeFor(ctx context.Context, inst *instance, fn string, input []byte, req *abi.Request, host Host, timeout time.Duration) ([]byte, *CallError) {
	if host == nil {
		host = NoHost{}
	}
	c := &call{module: m, req: req, host: host, kernel: inst.kernel, memory: inst.mod.Memory()}
	if req != nil {
		c.handler = req.Handler
	}
	callCtx, cancel := withCall(ctx, c), context.CancelFunc(func() {})
	if timeout > 0 {
		callCtx, cancel = context.WithTimeout(callCtx, timeout)
	}
	defer cancel()
	out, cerr := inst.invoke(callCtx, fn, input)
	if c.droppedLogs > 0 {
		m.rt.opts.Logger.LogAttrs(ctx, slog.LevelWarn, fmt.Sprintf("dropped %d log records of the call past wasm.logRate", c.droppedLogs), c.logAttrs()...)
	}
	if cerr == nil && len(out) > m.rt.opts.MaxOutputBytes {
		cerr = &CallError{Kind: KindOutputTooLarge,
			Err: fmt.Errorf("output of %d bytes is above the limit of %d bytes", len(out), m.rt.opts.MaxOutputBytes)}
	}
	if cerr != nil {
		if cerr.Kind == KindTimeout && ctx.Err() != nil {
			cerr.Kind = KindCanceled
		}
		cerr.Module, cerr.Handler = m.manifest.Module.Name, c.handler
	}
	return out, cerr
}
