package kopf

import (
	"encoding/json"
	"math"
)

// Numbers in an [Object] are float64, as encoding/json decodes them. The
// typed getters below read them without a v.(float64) at every use, and
// accept the other number types a handler may have put in a map (int,
// int64, json.Number), so code that builds objects and code that reads
// them agree.
//
// Objects keep float64 (rather than json.Number) on purpose: a plain
// map[string]any is what encoding/json, the patch and the hierarchy helpers
// produce and take, and switching the decoder to json.Number would silently
// break every existing v.(float64) in handlers.

// Int returns the integer at a dotted path ("spec.replicas"), or 0 when it
// is missing, not a number, or not a whole number.
func (o Object) Int(path string) int64 {
	v, _ := o.Get(path)
	n, _ := IntOf(v)
	return n
}

// Float returns the number at a dotted path, or 0 when it is missing or
// not a number.
func (o Object) Float(path string) float64 {
	v, _ := o.Get(path)
	f, _ := FloatOf(v)
	return f
}

// Bool returns the boolean at a dotted path, or false.
func (o Object) Bool(path string) bool {
	v, _ := o.Get(path)
	b, _ := v.(bool)
	return b
}

// Slice returns the array at a dotted path, or nil.
func (o Object) Slice(path string) []any {
	v, _ := o.Get(path)
	s, _ := v.([]any)
	return s
}

// IntOf converts a decoded JSON value (float64, json.Number) or a Go
// integer to an int64, and reports whether it is a whole number in range.
// Use it on values such as [Context.New] of a field handler.
func IntOf(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n != math.Trunc(n) || n < math.MinInt64 || n >= math.MaxInt64 {
			return 0, false
		}
		return int64(n), true
	case float32:
		return IntOf(float64(n))
	case int:
		return int64(n), true
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case uint32:
		return int64(n), true
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		f, err := n.Float64()
		if err != nil {
			return 0, false
		}
		return IntOf(f)
	}
	return 0, false
}

// FloatOf converts a decoded JSON value or a Go number to a float64, and
// reports whether it is a number.
func FloatOf(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
