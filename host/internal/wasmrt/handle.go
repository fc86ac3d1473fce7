package wasmrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Handle runs one handler call: it takes an instance from the pool
// (waiting until ctx ends if all are busy), passes req to the guest's
// handle export with host serving its host functions (nil: [NoHost]), and
// decodes the guest's response. A failure of the guest or of the call is a
// [*CallError]; the instance is then discarded if it may be broken. A
// handler's own errors (temporary, permanent, arbitrary) are not failures:
// they are in the response's outcome.
func (m *Module) Handle(ctx context.Context, req *abi.Request, host Host) (*abi.Response, error) {
	if err := m.begin(); err != nil {
		return nil, err
	}
	defer m.calls.Done()
	inst, err := m.pool.get(ctx)
	if err != nil {
		return nil, m.waitError(req, err)
	}
	resp, cerr := m.handle(ctx, inst, req, host)
	if cerr != nil && cerr.Kind.discards() {
		m.pool.discard(inst)
		m.logger.Warn("discarded an instance after a failed call", "handler", req.Handler, "kind", cerr.Kind, "error", cerr)
	} else {
		m.pool.put(inst)
	}
	if cerr != nil {
		return nil, cerr
	}
	return resp, nil
}

func (m *Module) handle(ctx context.Context, inst *instance, req *abi.Request, host Host) (*abi.Response, *CallError) {
	return m.handleFor(ctx, inst, req, host, m.rt.opts.Timeout)
}

// jsonEncoder encodes without HTML escaping, as guests expect plain JSON.
func jsonEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// decodeResponse decodes and checks a guest's output.
func decodeResponse(out []byte) (*abi.Response, error) {
	var resp abi.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("the output is not a JSON response (%w): %.80q", err, out)
	}
	switch resp.Outcome.Status {
	case abi.OutcomeSuccess, abi.OutcomeTemporary, abi.OutcomePermanent, abi.OutcomeError, abi.OutcomeChildren:
		return &resp, nil
	case "":
		return nil, fmt.Errorf("the response has no outcome status")
	}
	return nil, fmt.Errorf("the response has an unknown outcome status %q", resp.Outcome.Status)
}

// waitError reports a failure to get an instance.
func (m *Module) waitError(req *abi.Request, err error) error {
	var cerr *CallError
	if errors.As(err, &cerr) {
		cerr.Handler = req.Handler
		return cerr
	}
	if errors.Is(err, ErrClosed) {
		return err
	}
	return &CallError{Module: m.manifest.Module.Name, Handler: req.Handler, Kind: KindCanceled,
		Err: fmt.Errorf("waiting for a free instance: %w", err)}
}
