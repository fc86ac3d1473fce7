package wasmrt

import (
	"context"
	"log/slog"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// extismNamespace is the import module of the Extism kernel functions that
// go-pdk (and every Extism PDK) guests call.
const extismNamespace = "extism:host/env"

const (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// goFunc is a host function on the call in progress: its arguments and
// results are on stack, as wazero's api.GoFunction has them.
type goFunc struct {
	name            string
	params, results []api.ValueType
	fn              func(ctx context.Context, c *call, stack []uint64)
}

// Signatures of the kernel functions.
var (
	none   []api.ValueType
	one64  = []api.ValueType{i64}
	two64  = []api.ValueType{i64, i64}
	one32  = []api.ValueType{i32}
	two32  = []api.ValueType{i32, i32}
	i64i32 = []api.ValueType{i64, i32}
)

// kernelFunctions are the extism:host/env functions, served from the
// instance's [kernel].
func (r *Runtime) kernelFunctions() []goFunc {
	return []goFunc{
		{"alloc", one64, one64, onKernel(func(k *kernel, s []uint64) { s[0] = k.alloc(s[0]) })},
		{"free", one64, none, onKernel(func(k *kernel, s []uint64) { k.free(s[0]) })},
		{"length", one64, one64, onKernel(func(k *kernel, s []uint64) { s[0] = k.length(s[0]) })},
		{"length_unsafe", one64, one64, onKernel(func(k *kernel, s []uint64) { s[0] = k.length(s[0]) })},
		{"load_u8", one64, one32, onKernel(func(k *kernel, s []uint64) { s[0] = uint64(k.loadU8(s[0])) })},
		{"load_u64", one64, one64, onKernel(func(k *kernel, s []uint64) { s[0] = k.loadU64(s[0]) })},
		{"store_u8", i64i32, none, onKernel(func(k *kernel, s []uint64) { k.storeU8(s[0], uint32(s[1])) })},
		{"store_u64", two64, none, onKernel(func(k *kernel, s []uint64) { k.storeU64(s[0], s[1]) })},
		{"input_length", none, one64, onKernel(func(k *kernel, s []uint64) { s[0] = k.inputLength() })},
		{"input_offset", none, one64, onKernel(func(k *kernel, s []uint64) { s[0] = k.input })},
		{"input_load_u8", one64, one32, onKernel(func(k *kernel, s []uint64) { s[0] = uint64(k.inputLoadU8(s[0])) })},
		{"input_load_u64", one64, one64, onKernel(func(k *kernel, s []uint64) { s[0] = k.inputLoadU64(s[0]) })},
		{"output_set", two64, none, onKernel(func(k *kernel, s []uint64) { k.setOutput(s[0], s[1]) })},
		{"error_set", one64, none, onKernel(func(k *kernel, s []uint64) { k.errorAt = s[0] })},
		{"config_get", one64, one64, func(_ context.Context, _ *call, s []uint64) { s[0] = 0 }}, // no config
		{"var_get", one64, one64, varGet},
		{"var_set", two64, none, varSet},
		{"http_request", two64, one64, r.httpRequest},
		{"http_status_code", none, one32, onKernel(func(k *kernel, s []uint64) { s[0] = uint64(uint32(k.httpStatus)) })},
		{"http_headers", none, one64, httpHeaders},
		{"get_log_level", none, one32, r.getLogLevel},
		{"log_trace", one64, none, r.guestLogAt(slog.LevelDebug - 4)},
		{"log_debug", one64, none, r.guestLogAt(slog.LevelDebug)},
		{"log_info", one64, none, r.guestLogAt(slog.LevelInfo)},
		{"log_warn", one64, none, r.guestLogAt(slog.LevelWarn)},
		{"log_error", one64, none, r.guestLogAt(slog.LevelError)},
	}
}

// onKernel adapts f to a host function on the call's kernel.
func onKernel(f func(k *kernel, s []uint64)) func(context.Context, *call, []uint64) {
	return func(_ context.Context, c *call, s []uint64) { f(c.kernelOrFault(), s) }
}

// instantiateHostModule defines funcs as the host module name in rt.
func instantiateHostModule(ctx context.Context, rt wazero.Runtime, name string, funcs []goFunc) error {
	b := rt.NewHostModuleBuilder(name)
	for _, f := range funcs {
		fn := f.fn
		b.NewFunctionBuilder().
			WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) { fn(ctx, callFrom(ctx), stack) }), f.params, f.results).
			Export(f.name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

func varGet(ctx context.Context, c *call, s []uint64) {
	k := c.kernelOrFault()
	name, err := k.bytes(s[0])
	if err != nil {
		kernelFault("var_get: %v", err)
	}
	s[0] = 0
	if v, ok := k.vars[string(name)]; ok {
		s[0] = k.write(v)
	}
}

func varSet(ctx context.Context, c *call, s []uint64) {
	k := c.kernelOrFault()
	name, err := k.bytes(s[0])
	if err != nil {
		kernelFault("var_set: %v", err)
	}
	var value []byte
	if s[1] != 0 {
		if value, err = k.bytes(s[1]); err != nil {
			kernelFault("var_set %q: %v", name, err)
		}
	}
	k.setVar(string(name), value)
}

// getLogLevel tells go-pdk the least level the host logs, in Extism's
// numbering (0 trace … 4 error), so that a guest skips the rest.
func (r *Runtime) getLogLevel(ctx context.Context, c *call, s []uint64) {
	level := uint64(4)
	for i, l := range []slog.Level{slog.LevelDebug - 4, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn} {
		if r.opts.Logger.Enabled(ctx, l) {
			level = uint64(i)
			break
		}
	}
	s[0] = level
}

// guestLogAt receives what a guest logs through Extism's log functions.
func (r *Runtime) guestLogAt(level slog.Level) func(context.Context, *call, []uint64) {
	return func(ctx context.Context, c *call, s []uint64) {
		msg, err := c.kernelOrFault().bytes(s[0])
		if err != nil {
			kernelFault("log: %v", err)
		}
		attrs := append(c.logAttrs(), slog.String("source", "extism"))
		r.opts.Logger.LogAttrs(ctx, level, string(msg), attrs...)
	}
}
