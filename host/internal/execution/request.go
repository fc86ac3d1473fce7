package execution

import (
	"encoding/json"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// Input is what one handler call is about, beside the handler itself.
type Input struct {
	// Subject is the object; nil for activities.
	Subject *Subject
	// Cause is the changing cause: changing handlers get its reason and
	// old/new/diff (narrowed to their field); callback filters its reason.
	Cause *registry.Cause
	// Record is the handler's progress: retry, started, runtime.
	Record persistence.Record
	// Memo is the memo the call starts with. Nil: the executor's (see
	// [Memos]), which then keeps the memo the handler answers with.
	Memo json.RawMessage
	// EphemeralMemo: the memo the handler answers with is not kept (a
	// review of an object being created, which has no identity yet).
	EphemeralMemo bool
	// Indices are the module's indexes as the request carries them. Nil:
	// the executor's (see [Indices]).
	Indices map[string]json.RawMessage
	// Event is the watch event of an event handler: its type ("" for the
	// initial listing, as Kopf's None) and object (the Subject's).
	Event *EventInput
	// Admission is the admission review of a validating or mutating
	// handler.
	Admission *AdmissionInput
	// Conversion is what a convert handler converts the Subject to.
	Conversion *abi.ConversionRequest
	// Subrecords are the records of the handler's sub-handlers of every
	// depth (persistence.State.Subrecords), by id.
	Subrecords map[string]persistence.Record
	// Filter makes the request a callback filter's (abi.CallWhen) rather
	// than a handler's.
	Filter bool
	// Now is the time of the call, for runtime.
	Now time.Time
}

// EventInput is the watch event an event handler sees.
type EventInput struct {
	Type string
}

// AdmissionInput is what a webhook handler sees of an admission review:
// the request's fields and the old object (nil on CREATE); the new object
// is the Subject's.
type AdmissionInput struct {
	Request abi.AdmissionRequest
	Old     map[string]any
	// Raw and OldRaw are the object (the Subject's) and the old object as
	// the review carried them, valid JSON; set, they are passed as they
	// are instead of being encoded again from the decoded maps. Optional.
	Raw, OldRaw json.RawMessage
}

// Request builds the request of a call of h: the only place in the host
// that fills an abi.Request, for every handler kind.
func Request(h *registry.Handler, in Input) (*abi.Request, error) {
	req := &abi.Request{
		Handler: h.ID(), Kind: h.Kind(), Param: h.Spec.Options.Param, Memo: in.Memo, Indices: in.Indices,
		Retry: in.Record.Retries, Started: in.Record.Started, Runtime: in.Record.Runtime(in.Now).Seconds(),
	}
	if in.Filter {
		req.Call = abi.CallWhen
	}
	if h.Kind().IsActivity() {
		req.Activity = h.Kind()
		return req, nil
	}
	if in.Subject != nil {
		var raw json.RawMessage
		var err error
		if in.Admission != nil && in.Admission.Raw != nil {
			raw = in.Admission.Raw
		} else if raw, err = in.Subject.Raw(); err != nil {
			return nil, err
		}
		obj := in.Subject.Object
		ref := in.Subject.Resource
		req.Resource, req.Body = &ref, raw
		req.Name, req.Namespace, req.UID = obj.GetName(), obj.GetNamespace(), string(obj.GetUID())
		if in.Event != nil {
			req.Event = &abi.WatchEvent{Type: in.Event.Type, Object: raw}
		}
	}
	if in.Conversion != nil {
		conv := *in.Conversion
		req.Conversion = &conv
		return req, nil
	}
	if in.Admission != nil {
		return req, admissionKwargs(req, in)
	}
	if in.Cause == nil {
		return req, nil
	}
	req.Reason = in.Cause.Reason
	if !h.Kind().IsChanging() {
		return req, nil
	}
	if in.Filter {
		return req, filterKwargs(req, in.Cause)
	}
	req.Subhandlers = subrequest(in.Subrecords, in.Now)
	return req, changeKwargs(req, h, in.Cause)
}

// changeKwargs sets old, new and diff as Kopf passes them: the diff-base
// essences, narrowed to the handler's field when it has one.
func changeKwargs(req *abi.Request, h *registry.Handler, c *registry.Cause) error {
	old, new, diff := c.ForHandler(h)
	var err error
	if req.Old, err = rawOrNil(old); err != nil {
		return err
	}
	if req.New, err = rawOrNil(new); err != nil {
		return err
	}
	req.Diff, err = diff.ABI()
	return err
}

// filterKwargs sets old, new and diff for a changing handler's callback
// filter as Kopf passes them to when= and to callable filters: the whole
// object's diff-base essences (not narrowed to the handler's field; the
// guest resolves the field itself), when the cause has them.
func filterKwargs(req *abi.Request, c *registry.Cause) error {
	if c.Old == nil && c.New == nil {
		return nil
	}
	var err error
	if req.Old, err = rawOrNil(mapOrNil(c.Old)); err != nil {
		return err
	}
	if req.New, err = rawOrNil(mapOrNil(c.New)); err != nil {
		return err
	}
	req.Diff, err = c.Diff.ABI()
	return err
}

func mapOrNil(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// admissionKwargs sets the admission request and, as Kopf passes them to
// webhooks, old and new as whole bodies and their diff.
func admissionKwargs(req *abi.Request, in Input) error {
	ar := in.Admission.Request
	req.Admission = &ar
	var old any
	if in.Admission.Old != nil {
		old = in.Admission.Old
	}
	var err error
	if in.Admission.OldRaw != nil && old != nil {
		req.Old = in.Admission.OldRaw
	} else if req.Old, err = rawOrNil(old); err != nil {
		return err
	}
	var body any
	if in.Subject != nil {
		req.New = req.Body
		body = in.Subject.Object.Object
	}
	diff := objects.Compare(old, body)
	// A creation's diff adds the whole object: its JSON is the body's.
	whole := old == nil && body != nil && len(diff) == 1 && len(diff[0].Field) == 0 && req.Body != nil
	if whole {
		diff[0].New = nil
	}
	if req.Diff, err = diff.ABI(); err == nil && whole {
		req.Diff[0].New = req.Body
	}
	return err
}

func rawOrNil(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return objects.Encode(v)
}
