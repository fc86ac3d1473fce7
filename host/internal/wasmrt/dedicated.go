package wasmrt

import (
	"context"
	"fmt"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// HandleDedicated runs one long call — a daemon — on an instance of its
// own, outside the pool, so that a daemon sleeping for hours holds no
// instance that handler calls need. Only ctx bounds the call, not the
// runtime's timeout; cancelling ctx terminates the guest and closes its
// instance, which is how the host ends a daemon that ignores its stop
// request. The instance is closed when the call returns. The caller bounds
// how many run at once.
func (m *Module) HandleDedicated(ctx context.Context, req *abi.Request, host Host) (*abi.Response, error) {
	if err := m.begin(); err != nil {
		return nil, err
	}
	defer m.calls.Done()
	inst, err := m.newInstance(ctx)
	if err != nil {
		return nil, m.waitError(req, err)
	}
	defer inst.close()
	resp, cerr := m.handleFor(ctx, inst, req, host, 0)
	if cerr != nil {
		return nil, cerr
	}
	return resp, nil
}

// handleFor is handle with its own timeout (zero: none).
func (m *Module) handleFor(ctx context.Context, inst *instance, req *abi.Request, host Host, timeout time.Duration) (*abi.Response, *CallError) {
	input, err := encodeRequest(inst, req, m.rt.guestLogLevel(ctx))
	if err != nil {
		return nil, &CallError{Module: m.manifest.Module.Name, Handler: req.Handler, Kind: KindInternal, Err: err}
	}
	out, cerr := m.invokeFor(ctx, inst, abi.ExportHandle, input, req, host, timeout)
	if cerr != nil {
		return nil, cerr
	}
	resp, err := decodeResponse(out)
	if err != nil {
		return nil, &CallError{Module: m.manifest.Module.Name, Handler: req.Handler, Kind: KindBadOutput, Err: err}
	}
	return resp, nil
}

// encodeRequest encodes req into inst's reusable input buffer, with
// logLevel as its LogLevel when it has none.
func encodeRequest(inst *instance, req *abi.Request, logLevel abi.LogLevel) ([]byte, error) {
	if req.LogLevel == "" && logLevel != "" {
		leveled := *req
		leveled.LogLevel = logLevel
		req = &leveled
	}
	inst.input.Reset()
	out, err := appendRequest(inst.input.AvailableBuffer(), req)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	inst.input.Write(out)
	return inst.input.Bytes(), nil
}
