package wasmrt

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// appendRequest appends req as JSON: the bytes encoding/json writes for it
// with HTML escaping off (a differential test and fuzz target hold it to
// that), except that raw JSON fields — the body, old and new, param, memo,
// index values, the event's object — are copied as they are instead of
// being validated and compacted again. They are compact JSON already: the
// execution layer encodes them with encoding/json, and memos come from a
// guest response that encoding/json decoded. Re-compacting a 1 KB body was
// 5 µs of a Rust guest's 19 µs call. The small structured fields go
// through encoding/json.
func appendRequest(b []byte, req *abi.Request) ([]byte, error) {
	b = append(b, '{')
	first := true
	key := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
	}
	str := func(name, v string, omitEmpty bool) {
		if omitEmpty && v == "" {
			return
		}
		key(name)
		b = appendString(b, v)
	}
	raw := func(name string, v json.RawMessage) {
		if len(v) == 0 {
			return
		}
		key(name)
		b = append(b, v...)
	}
	var err error
	value := func(name string, v any) {
		if err != nil {
			return
		}
		key(name)
		var out []byte
		if out, err = marshal(v); err == nil {
			b = append(b, out...)
		}
	}
	str("call", string(req.Call), true)
	str("handler", req.Handler, false)
	str("kind", string(req.Kind), false)
	str("reason", string(req.Reason), true)
	if r := req.Resource; r != nil {
		key("resource")
		b = appendResource(b, r)
	}
	raw("body", req.Body)
	str("name", req.Name, true)
	str("namespace", req.Namespace, true)
	str("uid", req.UID, true)
	raw("old", req.Old)
	raw("new", req.New)
	if len(req.Diff) > 0 {
		value("diff", req.Diff)
	}
	key("retry")
	b = strconv.AppendInt(b, int64(req.Retry), 10)
	key("started") // a struct: omitempty never omits it
	if ts, terr := req.Started.MarshalJSON(); terr != nil {
		err = terr
	} else {
		b = append(b, ts...)
	}
	if req.Runtime != 0 {
		value("runtime", req.Runtime)
	}
	if !req.Deadline.IsZero() { // omitzero
		key("deadline")
		if ts, terr := req.Deadline.MarshalJSON(); terr != nil {
			err = terr
		} else {
			b = append(b, ts...)
		}
	}
	raw("param", req.Param)
	raw("memo", req.Memo)
	if len(req.Indices) > 0 {
		key("indices")
		b = appendRawMap(b, req.Indices)
	}
	if req.Event != nil {
		key("event")
		b = append(b, '{')
		if req.Event.Type != "" {
			b = append(b, `"type":`...)
			b = appendString(b, req.Event.Type)
			b = append(b, ',')
		}
		b = append(b, `"object":`...)
		if len(req.Event.Object) == 0 {
			b = append(b, "null"...)
		} else {
			b = append(b, req.Event.Object...)
		}
		b = append(b, '}')
	}
	if req.Admission != nil {
		value("admission", req.Admission)
	}
	if req.Conversion != nil {
		value("conversion", req.Conversion)
	}
	str("activity", string(req.Activity), true)
	if len(req.Subhandlers) > 0 {
		value("subhandlers", req.Subhandlers)
	}
	str("logLevel", string(req.LogLevel), true)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendResource appends a resource reference as encoding/json does.
func appendResource(b []byte, r *abi.ResourceRef) []byte {
	b = append(b, '{')
	if r.Group != "" {
		b = append(b, `"group":`...)
		b = appendString(b, r.Group)
		b = append(b, ',')
	}
	b = append(b, `"version":`...)
	b = appendString(b, r.Version)
	b = append(b, `,"plural":`...)
	b = appendString(b, r.Plural)
	if r.Kind != "" {
		b = append(b, `,"kind":`...)
		b = appendString(b, r.Kind)
	}
	if r.Namespaced {
		b = append(b, `,"namespaced":true`...)
	}
	return append(b, '}')
}

// appendRawMap appends a map of raw values with its keys sorted, as
// encoding/json orders them.
func appendRawMap(b []byte, m map[string]json.RawMessage) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		if v := m[k]; len(v) == 0 {
			b = append(b, "null"...)
		} else {
			b = append(b, v...)
		}
	}
	return append(b, '}')
}

// marshal is encoding/json without HTML escaping and without the trailing
// newline of an Encoder.
func marshal(v any) ([]byte, error) {
	var buf sliceWriter
	enc := jsonEncoder(&buf)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf[:len(buf)-1], nil
}

type sliceWriter []byte

func (w *sliceWriter) Write(p []byte) (int, error) {
	*w = append(*w, p...)
	return len(p), nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json does
// with HTML escaping off: quotes, backslashes and control characters
// escaped, invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
