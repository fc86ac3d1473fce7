package kopf

import (
	"encoding/json"
	"strconv"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/guest-sdk/internal/jsonfast"
)

// marshal is json.Marshal without reflection for the usual shapes of
// results, patches and memos (maps, slices, strings, numbers); anything
// else goes to json.Marshal. Its first buffer holds a small result whole:
// each allocation counts in wasm.
func marshal(v any) ([]byte, error) {
	if b, ok := jsonfast.Append(make([]byte, 0, 128), v); ok {
		return b, nil
	}
	return json.Marshal(v)
}

// encodeResponse is json.Marshal of an abi.Response, written by hand: in
// wasm, encoding/json's reflection over the response costs more than the
// rest of a trivial handler call. Its raw members (result, memo, patches)
// are copied as they are when json.Marshal would copy them too, which is
// the case for everything marshal produces; otherwise json.Marshal encodes
// the whole response.
func encodeResponse(r *abi.Response) ([]byte, error) {
	if b, ok := appendResponse(make([]byte, 0, 128), r); ok {
		return b, nil
	}
	return json.Marshal(r)
}

// appendResponse follows abi.Response's field order and omitempty rules.
func appendResponse(b []byte, r *abi.Response) ([]byte, bool) {
	if len(r.Subhandlers) > 0 {
		return nil, false // rare: encoding/json
	}
	b = append(b, `{"outcome":`...)
	b, ok := appendOutcome(b, &r.Outcome)
	ok = ok && compacted(r.Result) && compacted(r.Memo)
	if !ok {
		return nil, false
	}
	b = appendRaw(b, `,"result":`, r.Result)
	if r.Patch != nil {
		if b, ok = appendPatch(append(b, `,"patch":`...), r.Patch); !ok {
			return nil, false
		}
	}
	b = appendRaw(b, `,"memo":`, r.Memo)
	if r.Admission != nil {
		b = appendAdmission(append(b, `,"admission":`...), r.Admission)
	}
	if r.Matched != nil {
		b = strconv.AppendBool(append(b, `,"matched":`...), *r.Matched)
	}
	return append(b, '}'), true
}

func appendOutcome(b []byte, o *abi.Outcome) ([]byte, bool) {
	b = jsonfast.AppendString(append(b, `{"status":`...), string(o.Status))
	if o.Message != "" {
		b = jsonfast.AppendString(append(b, `,"message":`...), o.Message)
	}
	if o.Delay != nil {
		var ok bool
		if b, ok = jsonfast.Append(append(b, `,"delay":`...), *o.Delay); !ok {
			return nil, false // NaN or infinite: json.Marshal's error
		}
	}
	if o.Code != 0 {
		b = strconv.AppendInt(append(b, `,"code":`...), int64(o.Code), 10)
	}
	return append(b, '}'), true
}

func appendPatch(b []byte, p *abi.Patch) ([]byte, bool) {
	if !compacted(p.Merge) {
		return nil, false
	}
	b = append(b, '{')
	if len(p.Merge) > 0 {
		b = append(append(b, `"merge":`...), p.Merge...)
	}
	if len(p.JSON) > 0 {
		if len(p.Merge) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"json":[`...)
		for i := range p.JSON {
			op := &p.JSON[i]
			if !compacted(op.Value) {
				return nil, false
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = appendOp(b, op)
		}
		b = append(b, ']')
	}
	return append(b, '}'), true
}

func appendOp(b []byte, op *abi.JSONPatchOp) []byte {
	b = jsonfast.AppendString(append(b, `{"op":`...), op.Op)
	b = jsonfast.AppendString(append(b, `,"path":`...), op.Path)
	if op.From != "" {
		b = jsonfast.AppendString(append(b, `,"from":`...), op.From)
	}
	b = appendRaw(b, `,"value":`, op.Value)
	return append(b, '}')
}

func appendAdmission(b []byte, a *abi.AdmissionResponse) []byte {
	b = strconv.AppendBool(append(b, `{"allowed":`...), a.Allowed)
	if a.Code != 0 {
		b = strconv.AppendInt(append(b, `,"code":`...), int64(a.Code), 10)
	}
	if a.Message != "" {
		b = jsonfast.AppendString(append(b, `,"message":`...), a.Message)
	}
	if len(a.Warnings) > 0 {
		b = append(b, `,"warnings":[`...)
		for i, w := range a.Warnings {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonfast.AppendString(b, w)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// compacted reports whether json.Marshal would copy the raw member as it
// is (absent members are omitted).
func compacted(raw json.RawMessage) bool { return len(raw) == 0 || jsonfast.Compacted(raw) }

// appendRaw writes a raw member that compacted accepted, unless empty
// (omitempty).
func appendRaw(b []byte, name string, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return b
	}
	return append(append(b, name...), raw...)
}
