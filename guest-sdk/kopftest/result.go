package kopftest

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

// Result is what a handler call gave back.
type Result struct {
	// Raw is the response exactly as the module returned it.
	Raw []byte
	// Response is Raw decoded.
	Response *abi.Response
	// Value is the handler's result, decoded as JSON (nil when none).
	Value any
	// Err is the outcome as the handler's error: nil on success,
	// kopf.TemporaryError, kopf.PermanentError, kopf.AdmissionError (a
	// permanent outcome with a code), kopf.HandlerChildrenRetry (unfinished
	// sub-handlers, see [Result.Children]), or an *ArbitraryError.
	Err error
}

// ArbitraryError is an outcome of any other error (or a panic).
type ArbitraryError struct{ Message string }

// Error returns the message.
func (e *ArbitraryError) Error() string { return e.Message }

func newResult(raw []byte) (*Result, error) {
	r := &Result{Raw: raw, Response: &abi.Response{}}
	if err := json.Unmarshal(raw, r.Response); err != nil {
		return nil, fmt.Errorf("kopftest: the response is not JSON: %w", err)
	}
	if len(r.Response.Result) > 0 {
		_ = json.Unmarshal(r.Response.Result, &r.Value)
	}
	r.Err = outcomeError(r.Response.Outcome)
	return r, nil
}

func outcomeError(o abi.Outcome) error {
	switch o.Status {
	case abi.OutcomeSuccess:
		return nil
	case abi.OutcomeTemporary:
		e := kopf.TemporaryError{Message: o.Message}
		if o.Delay != nil {
			e.Delay = time.Duration(*o.Delay * float64(time.Second))
		}
		return e
	case abi.OutcomePermanent:
		if o.Code != 0 {
			return kopf.AdmissionError{Message: o.Message, Code: o.Code}
		}
		return kopf.PermanentError{Message: o.Message}
	case abi.OutcomeError:
		return &ArbitraryError{Message: o.Message}
	case abi.OutcomeChildren:
		return kopf.HandlerChildrenRetry{}
	}
	return errors.New("kopftest: unknown outcome " + string(o.Status))
}

// Decode decodes the handler's result into v.
func (r *Result) Decode(v any) error {
	if len(r.Response.Result) == 0 {
		return errors.New("kopftest: the handler returned no result")
	}
	return json.Unmarshal(r.Response.Result, v)
}

// Merge is the merge patch of the response, decoded (nil when none).
func (r *Result) Merge() map[string]any {
	if r.Response.Patch == nil || len(r.Response.Patch.Merge) == 0 {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(r.Response.Patch.Merge, &m)
	return m
}

// Allowed tells a webhook's verdict.
func (r *Result) Allowed() bool {
	return r.Response.Admission != nil && r.Response.Admission.Allowed
}
