package wasmrt

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt/instrument"
)

// maxMemoryLimitPages is the most pages a wasm32 memory can have (4 GiB).
const maxMemoryLimitPages = 65536

// Runtime loads modules and owns their compiled code. It is safe for
// concurrent use. Close it to free every module it loaded.
type Runtime struct {
	opts   Options
	kernel []goFunc // extism:host/env
	host   []goFunc // abi.HostNamespace

	mu       sync.Mutex
	compiled map[string]*compiled // by digest
	modules  map[*Module]struct{}
	closed   bool

	compiles     atomic.Int64 // test seam: how many times code was compiled
	compileNanos atomic.Int64 // test seam: how long the last compile took
}

// compiled is the code of one digest, shared by the modules loaded from it
// and by those that differ only in what Runtime.split takes out of them.
type compiled struct {
	digest string
	done   chan struct{}  // closed when code or err is set
	rt     wazero.Runtime // with the host modules the code imports
	code   wazero.CompiledModule
	cache  wazero.CompilationCache // nil without Options.CacheDir
	// interruptible: the code checks the interrupt flag in its loops;
	// otherwise it was compiled with wazero's context checks.
	interruptible bool
	// unmap releases the mapped file code was compiled from (the kept
	// rewrite), once the code is closed; nil when code is in the heap.
	unmap func()
	err   error
	refs  int // guarded by Runtime.mu
}

// New returns a runtime with opts (see [Options] for the defaults).
func New(opts Options) (*Runtime, error) {
	opts = opts.withDefaults()
	if opts.MemoryLimitPages > maxMemoryLimitPages {
		return nil, fmt.Errorf("wasmrt: MemoryLimitPages %d is above the wasm32 maximum of %d", opts.MemoryLimitPages, maxMemoryLimitPages)
	}
	r := &Runtime{
		opts:     opts,
		compiled: map[string]*compiled{},
		modules:  map[*Module]struct{}{},
	}
	r.kernel = r.kernelFunctions()
	r.host = r.hostFunctions()
	return r, nil
}

// Digest returns the digest by which the runtime knows wasm:
// "sha256:" and the hex of its SHA-256.
func Digest(wasm []byte) string {
	sum := sha256.Sum256(wasm)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Load compiles wasm (or reuses the code compiled for the same digest),
// instantiates it, reads and validates its manifest and checks its exports.
// name identifies the module in errors and logs (e.g. its file or
// reference). Errors are a [*LoadError].
func (r *Runtime) Load(ctx context.Context, name string, wasm []byte) (*Module, error) {
	digest := Digest(wasm)
	fail := func(err error) (*Module, error) {
		return nil, &LoadError{Module: name, Digest: digest, Err: err}
	}
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		return fail(fmt.Errorf("%w (it starts with %q): pass the .wasm file built with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared",
			ErrNotWasm, head(wasm, 8)))
	}
	code, st := r.split(wasm)
	c, err := r.acquire(ctx, Digest(code), code)
	if err != nil {
		st.close()
		return fail(err)
	}
	m, err := newModule(ctx, r, c, st, name, digest)
	if err != nil {
		r.release(c)
		st.close()
		return fail(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		m.closeLocked()
		return fail(ErrClosed)
	}
	r.modules[m] = struct{}{}
	return m, nil
}

// Close closes every module loaded by the runtime; later loads fail.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	modules := make([]*Module, 0, len(r.modules))
	for m := range r.modules {
		modules = append(modules, m)
	}
	r.mu.Unlock()
	for _, m := range modules {
		m.Close()
	}
	return nil
}

// acquire returns the compiled code of digest, compiling it unless another
// load did or is doing so; every acquire is paired with a release.
func (r *Runtime) acquire(ctx context.Context, digest string, wasm []byte) (*compiled, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	c, found := r.compiled[digest]
	if !found {
		c = &compiled{digest: digest, done: make(chan struct{})}
		r.compiled[digest] = c
	}
	c.refs++
	r.mu.Unlock()

	if !found {
		c.err = r.compile(ctx, c, wasm)
		close(c.done)
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		r.release(c)
		return nil, ctx.Err()
	}
	if c.err != nil {
		r.release(c)
		return nil, c.err
	}
	return c, nil
}

// release drops a reference to c and frees its code after the last one.
func (r *Runtime) release(c *compiled) {
	r.mu.Lock()
	c.refs--
	last := c.refs == 0
	if last && r.compiled[c.digest] == c {
		delete(r.compiled, c.digest)
	}
	r.mu.Unlock()
	if !last {
		return
	}
	<-c.done
	ctx := context.Background()
	if c.rt != nil {
		_ = c.rt.Close(ctx) // closes the code too
	}
	if c.cache != nil {
		_ = c.cache.Close(ctx) // frees the native code of this digest
	}
	if c.unmap != nil {
		c.unmap() // wazero's decoded module refers to the mapped bytes until now
	}
}

// compile compiles wasm into c, in a wazero runtime of its own that
// serves the host modules the guest imports (WASI, the Extism kernel and
// abi.HostNamespace). With a cache directory, each digest gets its own
// cache object on the shared directory, so that closing it frees the
// digest's native code.
func (r *Runtime) compile(ctx context.Context, c *compiled, wasm []byte) error {
	r.compiles.Add(1)
	defer func(start time.Time) { r.compileNanos.Store(int64(time.Since(start))) }(time.Now())
	code, unmap, interruptible := r.interruptible(c.digest, wasm)
	c.unmap = unmap
	var err error
	rc := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(!interruptible && !r.opts.noInterrupt).
		WithMemoryLimitPages(r.opts.MemoryLimitPages)
	if r.opts.CacheDir != "" {
		if c.cache, err = wazero.NewCompilationCacheWithDir(r.opts.CacheDir); err != nil {
			return fmt.Errorf("compilation cache %s: %w", r.opts.CacheDir, err)
		}
		rc = rc.WithCompilationCache(c.cache)
	}
	c.rt = wazero.NewRuntimeWithConfig(ctx, rc)
	c.interruptible = interruptible
	if err := r.instantiateHostModules(ctx, c.rt); err != nil {
		return err
	}
	allocated := allocatedBytes()
	c.code, err = compileModule(ctx, c.rt, code)
	if err != nil && c.unmap != nil {
		// The kept rewrite does not compile: it is damaged (cut short
		// by a crash, say), not the module. Drop it and rewrite again.
		r.opts.Logger.Warn("the kept rewrite of the module does not compile; rewriting it", "digest", c.digest, "error", err)
		c.unmap()
		c.unmap = nil
		_ = os.Remove(r.instrumentedPath(c.digest))
		if code, c.unmap, interruptible = r.interruptible(c.digest, wasm); interruptible {
			c.code, err = compileModule(ctx, c.rt, code)
		}
	}
	if err != nil {
		return fmt.Errorf("%w: %w; rebuild it with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared and the kopf-wasm guest SDK", ErrCompile, err)
	}
	releaseBodies(c.code)
	freeCompileGarbage(allocated)
	if c.unmap != nil {
		dropResident(code) // the mapped rewrite: read again only to make an instance
	}
	return nil
}

// compileModule is rt.CompileModule made safe for a malformed module,
// which must not end the host. wazero (v1.11, v1.12) trusts parts of a
// module it has not checked yet: its decoder allocates by counts before it
// reads what they promise (instrument.Bounded checks them first: a failed
// allocation ends the process, whatever recovers), and its validator
// panics on a call to a function whose type index is out of range (the
// panic is returned as an error).
func compileModule(ctx context.Context, rt wazero.Runtime, code []byte) (mod wazero.CompiledModule, err error) {
	if err := instrument.Bounded(code); err != nil {
		return nil, err
	}
	defer func() {
		if v := recover(); v != nil {
			mod, err = nil, fmt.Errorf("wazero failed validating it: %v", v)
		}
	}()
	return rt.CompileModule(ctx, code)
}

// compileGarbage is how much a compile must allocate for its garbage to be
// given back at once: a cold compile of a 3.4 MB module allocates ~60 MB,
// a look-up in the compilation cache ~6 MB.
const compileGarbage = 32 << 20

// freeCompileGarbage returns the garbage of a compile that allocated more
// than compileGarbage since allocated (allocatedBytes) to the system. The
// heap a cold compile grew to (some 35 MB of garbage for a 4 MB module)
// would otherwise stay resident as headroom for the host's later
// allocations; cold compiles are rare and take seconds, so the forced
// collection (tens of ms) does not matter, while a cached load skips it.
func freeCompileGarbage(allocated uint64) {
	if allocatedBytes()-allocated > compileGarbage {
		debug.FreeOSMemory()
	}
}

// allocatedBytes returns the bytes the process has allocated on the heap
// so far (cumulative).
func allocatedBytes() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// instantiateHostModules makes rt serve the imports of guests.
func (r *Runtime) instantiateHostModules(ctx context.Context, rt wazero.Runtime) error {
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return fmt.Errorf("instantiating WASI: %w", err)
	}
	if err := instantiateHostModule(ctx, rt, extismNamespace, r.kernel); err != nil {
		return fmt.Errorf("instantiating %s: %w", extismNamespace, err)
	}
	if err := instantiateHostModule(ctx, rt, abi.HostNamespace, r.host); err != nil {
		return fmt.Errorf("instantiating %s: %w", abi.HostNamespace, err)
	}
	return nil
}

func head(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
