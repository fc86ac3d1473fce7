package jsonfast

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// Types defined on handled kinds, some with methods that encoding/json
// ignores (as the SDK's Object has), some that marshal themselves.
type (
	object  map[string]any
	labels  map[string]string
	list    []any
	strs    []string
	name    string
	count   int16
	ucount  uintptr
	ratio   float32
	flag    bool
	selfish string
	texty   map[string]any
	ptrText string
	bytes8  []byte
)

func (o object) Get(k string) any             { return o[k] }
func (n name) String() string                 { return "name:" + string(n) }
func (selfish) MarshalJSON() ([]byte, error)  { return []byte(`"m"`), nil }
func (texty) MarshalText() ([]byte, error)    { return []byte("t"), nil }
func (*ptrText) MarshalText() ([]byte, error) { return []byte("p"), nil }
func (b bytes8) Len() int                     { return len(b) }
func (c count) Next() count                   { return c + 1 }
func (r ratio) Half() ratio                   { return r / 2 }
func (l labels) Has(k string) bool            { _, ok := l[k]; return ok }
func (s strs) Join(sep string) string         { return strings.Join(s, sep) }
func (l list) Len() int                       { return len(l) }
func (f flag) Not() flag                      { return !f }
func (u ucount) Add(n uintptr) ucount         { return u + ucount(n) }

// controls is every ASCII control character and the bytes encoding/json
// escapes for HTML.
func controls() string {
	var b strings.Builder
	for c := 0; c < 0x20; c++ {
		b.WriteByte(byte(c))
	}
	b.WriteString("\x7f\"\\/<>&'")
	return b.String()
}

var encodeCases = []any{
	nil, true, false,
	"", "hello world", controls(), "\u2028 \u2029 \u2027 \u202a", "é 日本 🎉 \ufffd",
	"\xff", "a\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ok\xe2\x80", "\x80\x80<x>",
	0.0, math.Copysign(0, -1), 1.0, -1.0, 0.1, 1.5, 3.0, 100.0, 1e-6, 1e-7, 9.999999e-7,
	-1e-7, 1e20, 1e21, -1e21, 123456789.125, 12345678901234567890.0, 1e-320,
	math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e100, 5e-324,
	float32(0), float32(0.1), float32(1e-6), float32(9.99e-7), float32(1e20), float32(1e21),
	float32(3.4e38), float32(-1e-7), float32(16777217), float32(math.SmallestNonzeroFloat32),
	int(0), int(-42), int8(math.MinInt8), int16(math.MaxInt16), int32(math.MinInt32),
	int64(math.MinInt64), int64(math.MaxInt64), uint(7), uint8(255), uint16(65535),
	uint32(math.MaxUint32), uint64(math.MaxUint64), uintptr(12),
	json.Number("12"), json.Number(""), json.Number("-1.5e+10"), json.Number("0.0"), json.Number("-0"),
	map[string]any{}, map[string]any(nil), map[string]string(nil), map[string]string{},
	map[string]any{"b": 1, "a": "x", "A": nil, "é": true, "<k>": "&", "": 0.5, "a\xff": 1, "\u2028": 2},
	map[string]any{"nested": map[string]any{"list": []any{1, "two", nil, []any{}, map[string]any{}}}},
	map[string]string{"z": "1", "y": "<2>", "x\n": "3"},
	[]any{}, []any(nil), []string(nil), []string{}, []string{"a", "<b>", ""},
	[]map[string]any{nil, {}, {"k": []string{"v"}}}, []map[string]any(nil),
	[]any{map[string]string{"a": "b"}, []map[string]any{{"x": 1.25}}, json.Number("3")},
	object{"spec": object{"replicas": 3, "name": name("web")}, "labels": labels{"app": "demo"}},
	object(nil), labels(nil), list(nil), strs(nil), list{count(-3), ratio(0.1), flag(true)},
	strs{"a", "b"}, name("<n>"), count(7), ucount(9), ratio(1e-7), flag(false),
	map[string]any{"deep": object{"l": list{strs{"x"}, labels{"k": "v"}}}},
	strings.Repeat("long string with <html> & \"quotes\" ", 50),
}

func TestAppendMatchesMarshal(t *testing.T) {
	for _, v := range encodeCases {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("json.Marshal(%#v): %v", v, err)
		}
		got, ok := Append([]byte("prefix:"), v)
		if !ok {
			t.Errorf("Append(%#v) = false, want %s", v, want)
			continue
		}
		if string(got) != "prefix:"+string(want) {
			t.Errorf("Append(%#v)\n got %s\nwant prefix:%s", v, got, want)
		}
		if !Compacted(got[len("prefix:"):]) {
			t.Errorf("Compacted(%s) = false", got)
		}
	}
}

func cyclic() map[string]any {
	m := map[string]any{}
	m["self"] = m
	return m
}

func deep(n int) any {
	var v any = "leaf"
	for range n {
		v = []any{v}
	}
	return v
}

// TestAppendFallsBack lists values outside the fast path: Append says
// false and leaves dst alone; json.Marshal decides.
func TestAppendFallsBack(t *testing.T) {
	s := "x"
	for _, v := range []any{
		struct{}{}, &s, json.RawMessage(`{}`), time.Unix(0, 0), []byte("b"), bytes8("b"),
		math.NaN(), math.Inf(1), math.Inf(-1), float32(math.Inf(-1)), json.Number("abc"),
		json.Number("1."), json.Number(" 1"), json.Number("01"), map[string]int{"a": 1},
		map[int]any{1: 2}, []int{1}, selfish("s"), texty{}, ptrText("p"), [1]any{1},
		map[string]any{"ok": 1, "bad": math.NaN()}, []any{1, struct{}{}},
		[]map[string]any{{"t": time.Time{}}}, cyclic(), deep(maxDepth + 1),
		map[string]any{"n": list{object{"x": selfish("y")}}},
	} {
		got, ok := Append([]byte("prefix"), v)
		if ok || string(got) != "prefix" {
			t.Errorf("Append(%#v) = %q, %v; want prefix, false", v, got, ok)
		}
	}
	if _, ok := Append(nil, deep(maxDepth-1)); !ok {
		t.Error("Append of a value just under maxDepth = false")
	}
}
