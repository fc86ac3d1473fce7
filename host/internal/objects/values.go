package objects

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Equal reports whether two JSON-like values are equal as JSON: objects by
// their keys and values, arrays element by element, numbers by value whatever
// their Go type (int64 from apimachinery, float64 or json.Number from
// encoding/json).
func Equal(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		return ok && equalMaps(a, b)
	case []any:
		b, ok := b.([]any)
		return ok && equalSlices(a, b)
	case nil:
		return b == nil
	case string:
		b, ok := b.(string)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	}
	na, okA := toNumber(a)
	nb, okB := toNumber(b)
	return okA && okB && na.equal(nb)
}

func equalMaps(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !Equal(va, vb) {
			return false
		}
	}
	return true
}

func equalSlices(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// number is a JSON number held either as an exact integer or as a float.
type number struct {
	i     int64
	f     float64
	isInt bool
}

func (n number) equal(o number) bool {
	if n.isInt && o.isInt {
		return n.i == o.i
	}
	return n.float() == o.float()
}

func (n number) float() float64 {
	if n.isInt {
		return float64(n.i)
	}
	return n.f
}

func toNumber(v any) (number, bool) {
	switch v := v.(type) {
	case int:
		return number{i: int64(v), isInt: true}, true
	case int32:
		return number{i: int64(v), isInt: true}, true
	case int64:
		return number{i: v, isInt: true}, true
	case float32:
		return fromFloat(float64(v)), true
	case float64:
		return fromFloat(v), true
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return number{i: i, isInt: true}, true
		}
		f, err := v.Float64()
		return fromFloat(f), err == nil
	}
	return number{}, false
}

func fromFloat(f float64) number {
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		return number{i: int64(f), isInt: true}
	}
	return number{f: f}
}

// Decode parses JSON into a JSON-like value the way apimachinery's
// unstructured does: integers become int64, other numbers float64.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode json: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode json: trailing data after the value")
	}
	return normalize(v), nil
}

// DecodeMap parses a JSON object; JSON null gives a nil map.
func DecodeMap(data []byte) (map[string]any, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("decode json: want an object, got %T", v)
	}
	return m, nil
}

func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = normalize(x)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = normalize(x)
		}
		return v
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	}
	return v
}

// Encode renders a JSON-like value compactly, without HTML escaping. Object
// keys come out sorted (encoding/json's order).
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode json: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// EncodeASCII renders a value as Python's json.dumps(v, separators=(',', ':'))
// does: compact, no HTML escaping, every non-ASCII character as a \uXXXX
// escape (surrogate pairs above U+FFFF). Kopf writes its annotations so.
func EncodeASCII(v any) (string, error) {
	raw, err := Encode(v)
	if err != nil {
		return "", err
	}
	return escapeNonASCII(string(raw)), nil
}

func escapeNonASCII(s string) string {
	var buf bytes.Buffer
	for _, r := range s {
		switch {
		case r < 0x80:
			buf.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&buf, `\u%04x`, r)
		default:
			r -= 0x10000
			fmt.Fprintf(&buf, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		}
	}
	return buf.String()
}

// CanonicalJSON is a JSON text re-encoded with its object keys sorted, so
// that two texts of the same value compare equal; "" for none or null, and
// the text itself when it is not JSON. Replays and shadow versions compare
// results and patches with it.
func CanonicalJSON(raw []byte) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	if v == nil {
		return ""
	}
	out, _ := json.Marshal(v)
	return string(out)
}
