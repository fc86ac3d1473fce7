package wasmrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// hostFunc is the body of one host function: the request's raw JSON in,
// the reply out (nil for no reply).
type hostFunc func(ctx context.Context, c *call, in []byte) any

// hostFunctions returns the host functions of abi.HostNamespace.
func (r *Runtime) hostFunctions() []goFunc {
	funcs := map[string]hostFunc{
		abi.HostLog:               r.hostLog,
		abi.HostPostEvent:         hostPostEvent,
		abi.HostKubeRequest:       hostKubeRequest,
		abi.HostIndexLookup:       hostIndexLookup,
		abi.HostSleepUntilStopped: hostSleepUntilStopped,
		abi.HostIsStopped:         hostIsStopped,
	}
	out := []goFunc{
		{abi.HostInputRead, two32, one32, hostInputRead},
		{abi.HostOutputWrite, two32, none, hostOutputWrite},
	}
	for name, fn := range funcs {
		out = append(out, goFunc{name, one64, one64, serveHostFunc(name, fn)})
	}
	return out
}

// hostInputRead copies the call's input to the guest's memory: input_read
// (ptr, len i32) -> i32, the bytes copied.
func hostInputRead(_ context.Context, c *call, s []uint64) {
	k, ptr := c.kernelOrFault(), uint32(s[0])
	n := min(uint64(uint32(s[1])), k.inputLen)
	if c.memory == nil || !c.memory.Write(ptr, k.mem[k.input:k.input+n]) {
		kernelFault("input_read: %d bytes at %d do not fit in the guest's memory", n, ptr)
	}
	s[0] = n
}

// hostOutputWrite sets the call's output from the guest's memory:
// output_write(ptr, len i32).
func hostOutputWrite(_ context.Context, c *call, s []uint64) {
	k, ptr, n := c.kernelOrFault(), uint32(s[0]), uint32(s[1])
	var out []byte
	ok := c.memory != nil
	if ok {
		out, ok = c.memory.Read(ptr, n)
	}
	if !ok {
		kernelFault("output_write: %d bytes at %d are outside the guest's memory", n, ptr)
	}
	k.setOutput(k.write(out), uint64(n))
}

// serveHostFunc adapts fn to Extism's convention for host functions: one
// i64 in (the offset of the request block in kernel memory), one i64 out
// (the offset of the reply block, or 0). A panic in fn becomes a 500 reply;
// a reply of errSleepInterrupted ends the call.
func serveHostFunc(name string, fn hostFunc) func(context.Context, *call, []uint64) {
	return func(ctx context.Context, c *call, stack []uint64) {
		k := c.kernelOrFault()
		in, err := k.bytes(stack[0])
		var reply any
		if err != nil {
			reply = abi.HostReply{Error: badRequest(name, err)}
		} else {
			reply = safeCall(ctx, c, name, fn, in)
		}
		if reply == any(errSleepInterrupted) {
			panic(errSleepInterrupted) // ends the call, as sleeper.sleep does
		}
		stack[0] = 0
		if reply == nil {
			return
		}
		b, err := json.Marshal(reply)
		if err != nil {
			b, _ = json.Marshal(abi.HostReply{Error: internalError(name, err)})
		}
		stack[0] = k.write(b)
	}
}

func safeCall(ctx context.Context, c *call, name string, fn hostFunc, in []byte) (reply any) {
	defer func() {
		if v := recover(); v != nil {
			reply = abi.HostReply{Error: internalError(name, fmt.Errorf("panic: %v", v))}
		}
	}()
	return fn(ctx, c, in)
}

func (r *Runtime) hostLog(ctx context.Context, c *call, in []byte) any {
	if !c.mayLog(r.opts) {
		if c.droppedLogs++; c.droppedLogs == 1 {
			r.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "the guest logs faster than wasm.logRate and wasm.logBurst allow; its records are dropped until it slows down", c.logAttrs()...)
		}
		return nil
	}
	var rec abi.LogRecord
	if err := json.Unmarshal(in, &rec); err != nil {
		rec = abi.LogRecord{Level: abi.LogWarn, Message: "the guest sent a log record that is not JSON: " + err.Error()}
	}
	attrs := c.logAttrs()
	keys := make([]string, 0, len(rec.Fields))
	for k := range rec.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		attrs = append(attrs, slog.Any(k, rec.Fields[k]))
	}
	r.opts.Logger.LogAttrs(ctx, slogLevel(rec.Level), rec.Message, attrs...)
	return nil
}

func hostPostEvent(ctx context.Context, c *call, in []byte) any {
	var ev abi.EventRequest
	if err := json.Unmarshal(in, &ev); err != nil {
		return abi.HostReply{Error: badRequest(abi.HostPostEvent, err)}
	}
	if err := c.host.PostEvent(ctx, ev); err != nil {
		return abi.HostReply{Error: asHostError(err)}
	}
	return abi.HostReply{}
}

func hostKubeRequest(ctx context.Context, c *call, in []byte) any {
	var req abi.KubeRequest
	if err := json.Unmarshal(in, &req); err != nil {
		return abi.KubeResponse{Error: badRequest(abi.HostKubeRequest, err)}
	}
	if herr := checkPermission(c.moduleName(), c.permissions(), &req); herr != nil {
		return abi.KubeResponse{Error: herr}
	}
	return c.host.Kube(ctx, req)
}

func hostIndexLookup(ctx context.Context, c *call, in []byte) any {
	var req abi.IndexLookupRequest
	if err := json.Unmarshal(in, &req); err != nil {
		return abi.IndexLookupResponse{Error: badRequest(abi.HostIndexLookup, err)}
	}
	return c.host.IndexLookup(ctx, req)
}

// hostSleepUntilStopped sleeps as the call's Host does. When the call's
// context ended during the sleep (its timeout, a daemon's termination, the
// host's shutdown), it ends the call instead of replying, as a WASI sleep
// is ended: the guest would otherwise resume, and one that reaches no loop
// check before it returns (the checks look at the flag once per 4096)
// would have its result taken after its timeout. Outside a daemon nothing
// asks a sleeper to stop, so its call's timeout is what ends it.
func hostSleepUntilStopped(ctx context.Context, c *call, in []byte) any {
	var req abi.SleepRequest
	if err := json.Unmarshal(in, &req); err != nil || req.Seconds < 0 {
		req.Seconds = 0
	}
	resp := c.host.SleepUntilStopped(ctx, time.Duration(req.Seconds*float64(time.Second)))
	if ctx.Err() != nil {
		return errSleepInterrupted
	}
	return resp
}

func hostIsStopped(ctx context.Context, c *call, _ []byte) any {
	return c.host.IsStopped(ctx)
}

// guestLogLevel is the lowest level of the guests' log records that the
// runtime's logger writes, as the ABI names it (abi.Request.LogLevel), or
// "" when it writes debug records: the guest SDKs then drop the records
// below it instead of building and sending them.
func (r *Runtime) guestLogLevel(ctx context.Context) abi.LogLevel {
	for _, l := range []abi.LogLevel{abi.LogDebug, abi.LogInfo, abi.LogWarn} {
		if r.opts.Logger.Enabled(ctx, slogLevel(l)) {
			if l == abi.LogDebug {
				return ""
			}
			return l
		}
	}
	return abi.LogError
}

// slogLevel is the level the host writes a guest's record at: info for a
// level the ABI does not name.
func slogLevel(l abi.LogLevel) slog.Level {
	if level, ok := l.Slog(); ok {
		return level
	}
	return slog.LevelInfo
}

func badRequest(fn string, err error) *abi.HostError {
	return &abi.HostError{Code: http.StatusBadRequest, Reason: "BadRequest", Origin: abi.OriginHost,
		Message: fmt.Sprintf("%s: the request is not valid: %v", fn, err)}
}

func internalError(fn string, err error) *abi.HostError {
	return &abi.HostError{Code: http.StatusInternalServerError, Reason: "InternalError", Origin: abi.OriginHost,
		Message: fmt.Sprintf("%s failed in the host: %v", fn, err)}
}

// asHostError keeps an *abi.HostError as it is and wraps anything else as
// a 500 of the host.
func asHostError(err error) *abi.HostError {
	var herr *abi.HostError
	if errors.As(err, &herr) {
		return herr
	}
	return &abi.HostError{Code: http.StatusInternalServerError, Reason: "InternalError",
		Origin: abi.OriginHost, Message: err.Error()}
}
