// Package jsonfast encodes and decodes the JSON shapes that the guest SDK
// meets on every handler call (maps, slices, strings, numbers, booleans)
// without encoding/json's reflection, which costs tens of microseconds per
// call in wasm. It is called by the kopf package (guest-sdk) for handler
// results, patches, memos, log records and the lazily decoded parts of a
// request.
//
// Its output is byte for byte that of encoding/json, and its decoded values
// are exactly those of json.Unmarshal into an any. Whenever a value is
// outside what it handles (other types, invalid or unusual input), a
// function reports false and the caller uses encoding/json instead, which
// then also decides about errors.
package jsonfast

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
)

// maxDepth bounds the nesting that the fast paths handle. Deeper values
// (and cyclic maps) go to encoding/json, which has its own limits.
const maxDepth = 256

// Append appends the JSON encoding of v to dst, exactly as json.Marshal
// would write it, and reports true. It handles nil, bool, string, the
// integer and float kinds, json.Number, map[string]any, map[string]string,
// []any, []string, []map[string]any, types defined on these kinds without
// JSON or text marshaling methods, and nested combinations. For anything
// else, and for values json.Marshal rejects (NaN, infinities, invalid
// numbers), it reports false; dst's contents up to its length are then
// unchanged and the caller should use json.Marshal for the whole value.
func Append(dst []byte, v any) ([]byte, bool) {
	out, ok := appendValue(dst, v, 0)
	if !ok {
		return dst, false
	}
	return out, true
}

func appendValue(dst []byte, v any, depth int) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case string:
		return appendString(dst, x), true
	case bool:
		return strconv.AppendBool(dst, x), true
	case float64:
		return appendFloat(dst, x, 64)
	case float32:
		return appendFloat(dst, float64(x), 32)
	case int:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int64:
		return strconv.AppendInt(dst, x, 10), true
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), true
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), true
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case uint64:
		return strconv.AppendUint(dst, x, 10), true
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10), true
	case json.Number:
		return appendNumber(dst, x)
	}
	if depth >= maxDepth {
		return dst, false
	}
	switch x := v.(type) {
	case map[string]any:
		return appendMap(dst, x, depth+1)
	case map[string]string:
		return appendStringMap(dst, x), true
	case []any:
		return appendList(dst, x, func(dst []byte, v any) ([]byte, bool) { return appendValue(dst, v, depth+1) })
	case []string:
		return appendList(dst, x, func(dst []byte, v string) ([]byte, bool) { return appendString(dst, v), true })
	case []map[string]any:
		return appendList(dst, x, func(dst []byte, m map[string]any) ([]byte, bool) { return appendMap(dst, m, depth+1) })
	}
	return appendDefined(dst, v, depth)
}

// appendFloat formats f as encoding/json's floatEncoder does: like
// ECMAScript, 'f' unless the magnitude is below 1e-6 or at least 1e21,
// with exponents not padded to two digits.
func appendFloat(dst []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// appendNumber writes a json.Number as is; "" is 0, and anything that is
// not a JSON number is json.Marshal's error.
func appendNumber(dst []byte, n json.Number) ([]byte, bool) {
	s := string(n)
	if s == "" {
		s = "0"
	}
	if end, ok := scanNumber(s, 0); !ok || end != len(s) {
		return dst, false
	}
	return append(dst, s...), true
}

// sortedKeys returns m's keys in encoding/json's order (byte-wise), in buf
// when they fit.
func sortedKeys[V any](m map[string]V, buf []string) []string {
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func appendMap(dst []byte, m map[string]any, depth int) ([]byte, bool) {
	if m == nil {
		return append(dst, "null"...), true
	}
	var buf [16]string
	dst = append(dst, '{')
	for i, k := range sortedKeys(m, buf[:]) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		var ok bool
		if dst, ok = appendValue(dst, m[k], depth); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

func appendStringMap(dst []byte, m map[string]string) []byte {
	if m == nil {
		return append(dst, "null"...)
	}
	var buf [16]string
	dst = append(dst, '{')
	for i, k := range sortedKeys(m, buf[:]) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendString(dst, m[k])
	}
	return append(dst, '}')
}

// appendList appends s as a JSON array, each element written by elem; a
// nil s is null, as json.Marshal writes a nil slice.
func appendList[T any](dst []byte, s []T, elem func([]byte, T) ([]byte, bool)) ([]byte, bool) {
	if s == nil {
		return append(dst, "null"...), true
	}
	dst = append(dst, '[')
	for i, v := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = elem(dst, v); !ok {
			return dst, false
		}
	}
	return append(dst, ']'), true
}

var (
	mapType       = reflect.TypeFor[map[string]any]()
	stringMapType = reflect.TypeFor[map[string]string]()
	sliceType     = reflect.TypeFor[[]any]()
	stringsType   = reflect.TypeFor[[]string]()
	marshaler     = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// appendDefined handles types defined on the handled kinds (the SDK's
// Object and Memo, named strings and numbers): json.Marshal encodes them as
// their underlying kind unless they marshal themselves. The reflection here
// is a type's kind and method set, not a walk of the value.
func appendDefined(dst []byte, v any, depth int) ([]byte, bool) {
	t := reflect.TypeOf(v)
	if t.Implements(marshaler) || t.Implements(textMarshaler) {
		return dst, false
	}
	if p := reflect.PointerTo(t); p.Implements(marshaler) || p.Implements(textMarshaler) {
		return dst, false
	}
	rv := reflect.ValueOf(v)
	switch t.Kind() {
	case reflect.String:
		return appendString(dst, rv.String()), true
	case reflect.Bool:
		return strconv.AppendBool(dst, rv.Bool()), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(dst, rv.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(dst, rv.Uint(), 10), true
	case reflect.Float32:
		return appendFloat(dst, rv.Float(), 32)
	case reflect.Float64:
		return appendFloat(dst, rv.Float(), 64)
	case reflect.Map, reflect.Slice:
		for _, u := range [...]reflect.Type{mapType, stringMapType, sliceType, stringsType} {
			if sameShape(t, u) {
				return appendValue(dst, rv.Convert(u).Interface(), depth)
			}
		}
	}
	return dst, false
}

// sameShape reports whether the map or slice type t has u as its
// underlying type: the same kind, key and element types.
func sameShape(t, u reflect.Type) bool {
	if t.Kind() != u.Kind() || t.Elem() != u.Elem() {
		return false
	}
	return t.Kind() != reflect.Map || t.Key() == u.Key()
}
