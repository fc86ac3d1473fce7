package wasmrt

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt/instrument"
)

// Mount is a folder of the host that a pre-initialisation sees, read-only,
// at Guest.
type Mount struct {
	Host, Guest string
}

// PreinitOptions says how to pre-initialise a module.
type PreinitOptions struct {
	// Export is the initialisation's entry point, called once after
	// WASI's _initialize. Required.
	Export string
	// Input is the entry point's input (the Extism kernel's input).
	Input []byte
	// Mounts are the folders the initialisation reads, read-only. The
	// module that results has none.
	Mounts []Mount
	// Host serves the ABI's host functions during the initialisation;
	// nil: NoHost. The guest's log records go to the runtime's logger.
	Host Host
}

// Preinitialize instantiates wasm, runs WASI's _initialize and then
// o.Export with o.Input, and returns a module that starts where that
// instance ended: its memory and mutable globals as they were, without
// _initialize and o.Export (see instrument.Snapshot). It is how a Python
// module starts in milliseconds: CPython's start-up and the import of the
// author's files run once, when the module is built. The initialisation
// runs under the runtime's memory limit, without loop checks (it ends
// when ctx ends), with the Mounts as its only files.
func (r *Runtime) Preinitialize(ctx context.Context, wasm []byte, o PreinitOptions) ([]byte, error) {
	if o.Export == "" {
		return nil, errors.New("pre-initialising: no entry point named")
	}
	prepared, globals, err := instrument.ExportGlobals(wasm)
	if err != nil {
		return nil, fmt.Errorf("pre-initialising: %w", err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(r.opts.MemoryLimitPages))
	defer rt.Close(context.Background())
	if err := r.instantiateHostModules(ctx, rt); err != nil {
		return nil, err
	}
	code, err := compileModule(ctx, rt, prepared)
	if err != nil {
		return nil, fmt.Errorf("pre-initialising: %w: %w", ErrCompile, err)
	}
	inst, err := r.preinitInstance(ctx, rt, code, o.Mounts)
	if err != nil {
		return nil, err
	}
	defer inst.close()
	host := o.Host
	if host == nil {
		host = NoHost{}
	}
	for _, fn := range []string{"_initialize", o.Export} {
		if fn == "_initialize" && !inst.has(fn) {
			continue
		}
		callCtx := withCall(ctx, &call{host: host, kernel: inst.kernel, memory: inst.mod.Memory()})
		var input []byte
		if fn == o.Export {
			input = o.Input
		}
		if _, cerr := inst.invoke(callCtx, fn, input); cerr != nil {
			if cerr.Detail != "" {
				r.opts.Logger.Error("the module's initialisation failed", "export", fn, "detail", cerr.Detail)
			}
			return nil, fmt.Errorf("pre-initialising: %s: %w", fn, cerr)
		}
	}
	st, err := snapshotState(inst, globals)
	if err != nil {
		return nil, err
	}
	st.Drop = []string{"_initialize", o.Export}
	out, err := instrument.Snapshot(wasm, st)
	if err != nil {
		return nil, fmt.Errorf("pre-initialising: %w", err)
	}
	return out, nil
}

// preinitInstance instantiates code with mounts as its file system.
func (r *Runtime) preinitInstance(ctx context.Context, rt wazero.Runtime, code wazero.CompiledModule, mounts []Mount) (*instance, error) {
	fs := wazero.NewFSConfig()
	for _, m := range mounts {
		fs = fs.WithReadOnlyDirMount(m.Host, m.Guest)
	}
	stderr := &headBuffer{max: stderrBytes}
	sleeps := &sleeper{}
	config := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithStderr(stderr).
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(sleeps.sleep).
		WithRandSource(rand.Reader).
		WithFSConfig(fs)
	mod, err := rt.InstantiateModule(ctx, code, config)
	if err != nil {
		return nil, fmt.Errorf("pre-initialising: instantiating the module: %w", err)
	}
	return &instance{
		mod:     mod,
		exports: map[string]api.Function{},
		kernel:  newKernel(uint64(r.opts.MemoryLimitPages) * wasmPage),
		stderr:  stderr,
		sleeps:  sleeps,
	}, nil
}

// snapshotState reads an instance's memory and the mutable globals that
// instrument.ExportGlobals exported.
func snapshotState(inst *instance, globals []uint32) (instrument.State, error) {
	mem := inst.mod.Memory()
	if mem == nil {
		return instrument.State{}, errors.New("pre-initialising: the module has no memory")
	}
	b, ok := mem.Read(0, mem.Size())
	if !ok {
		return instrument.State{}, errors.New("pre-initialising: cannot read the memory")
	}
	st := instrument.State{Memory: bytes.Clone(b), Globals: map[uint32]uint64{}}
	for _, idx := range globals {
		g := inst.mod.ExportedGlobal(fmt.Sprintf("%s%d", instrument.ExportedGlobalPrefix, idx))
		if g == nil {
			return st, fmt.Errorf("pre-initialising: global %d was not exported", idx)
		}
		st.Globals[idx] = g.Get()
	}
	return st, nil
}
