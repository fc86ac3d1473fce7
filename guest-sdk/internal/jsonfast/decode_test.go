package jsonfast

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// same is reflect.DeepEqual that also tells -0 from 0.
func same(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !same(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func nested(n int, open, close string) string {
	return strings.Repeat(open, n) + strings.Repeat(close, n)
}

var validJSON = []string{
	`null`, ` true `, "\t\r\nfalse\n", `0`, `-0`, `1`, `-1.5e3`, `1E+2`, `2e-2`, `0.1`,
	`123456789012345`, `1234567890123456`, `-999999999999999`, `9007199254740993`,
	`123456789012345678901234567890`, `1e-400`, `-1e-400`, `1.7976931348623157e308`,
	`4.9e-324`, `""`, `"plain"`, `"\u00e9\u00E9"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`,
	`"\ude00\ud83d"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, `"\u0000"`, `"\udbff\udfff"`,
	`"a\/b\\c\"d"`, `"\b\f\n\r\t"`, "\"\xff\"", "\"\xed\xa0\x80\"", "\"a\xc3\"", "\"é\\n\xff日\"",
	"\"\x7f\"", `"<>&"`, `"\u2028"`, `{}`, `[]`, `{"a":1,"a":2}`, `{"a":{"b":1},"a":[2]}`,
	`[1,[2,[3,{"x":null}]]]`, ` { "k" : [ 1 , "two" , true , false , null , { } , [ ] ] } `,
	`{"\u0041":1,"A":2}`, "{\"\xff\":1}", `{"":""}`, nested(maxDepth, "[", "]"),
	`{"a":{"a":{"a":{}}}}`,
}

func TestDecodeMatchesUnmarshal(t *testing.T) {
	for _, in := range validJSON {
		var want any
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("json.Unmarshal(%q): %v", in, err)
		}
		got, ok := Decode([]byte(in))
		if !ok {
			t.Errorf("Decode(%q) = false, want %#v", in, want)
		} else if !same(got, want) {
			t.Errorf("Decode(%q)\n got %#v\nwant %#v", in, got, want)
		}
	}
}

var invalidJSON = []string{
	``, ` `, `nul`, `tru`, `falsey`, `nullx`, `[1,]`, `[,1]`, `{"a":1,}`, `{"a"}`, `{a:1}`,
	`{"a" 1}`, `{,}`, `{"a":1 "b":2}`, `[1 2]`, `01`, `-01`, `1.`, `.1`, `+1`, `1e`, `1e+`,
	`-`, `--1`, `0x1`, `"abc`, "\"\x01\"", "\"a\tb\"", `"\u12"`, `"\u12g4"`, `"\x"`, `"\'"`,
	`"\`, `{} {}`, `1 2`, `null x`, `[`, `]`, `{`, `}`, `{"a":1`, `["a"`, `1e400`, `-1e400`,
	`[1e999]`, `{"a":1e400}`, "\ufeff1", `NaN`, `Infinity`, `'a'`, `[1]]`, `{"a":1}}`,
	nested(maxDepth+1, "[", "]"),
}

// TestDecodeFallsBack: inputs the fast path refuses, all of which but the
// deep one encoding/json rejects too.
func TestDecodeFallsBack(t *testing.T) {
	for _, in := range invalidJSON {
		if v, ok := Decode([]byte(in)); ok {
			t.Errorf("Decode(%q) = %#v, true; want false", in, v)
		}
		if m, ok := DecodeObject([]byte(in)); ok {
			t.Errorf("DecodeObject(%q) = %#v, true; want false", in, m)
		}
	}
}

func TestDecodeObject(t *testing.T) {
	for _, in := range []string{`null`, ` {} `, `{"a":[1,{"b":null}],"a":"last"}`} {
		var want map[string]any
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		got, ok := DecodeObject([]byte(in))
		if !ok || !same(got, want) || (got == nil) != (want == nil) {
			t.Errorf("DecodeObject(%q) = %#v, %v; want %#v", in, got, ok, want)
		}
	}
	for _, in := range []string{`[]`, `"s"`, `1`, `true`} {
		if m, ok := DecodeObject([]byte(in)); ok {
			t.Errorf("DecodeObject(%q) = %#v, true; want false (a type error)", in, m)
		}
	}
}

func TestCompacted(t *testing.T) {
	for in, want := range map[string]bool{
		`{"a":[1,"b",null,true,false,{}],"c":-1.5e3}`: true, `"é\u003c\ufffd\/"`: true,
		"\"\xff\"": true, `[]`: true, `0`: true, `{ }`: false, `[1, 2]`: false, ` 1`: false,
		`1 `: false, `"<"`: false, `">"`: false, `"&"`: false, "\"\u2028\"": false,
		"\"\u2029\"": false, "\"\u202a\"": true, `{`: false, ``: false, `[1,]`: false,
		`{"a":1,}`: false, `01`: false, "\"\x01\"": false, `"\x"`: false, `{"a"}`: false,
		nested(maxDepth, "[", "]"): true, nested(maxDepth+1, "[", "]"): false,
	} {
		if got := Compacted([]byte(in)); got != want {
			t.Errorf("Compacted(%q) = %v, want %v", in, got, want)
		}
		if want {
			out, err := json.Marshal(json.RawMessage(in))
			if err != nil || string(out) != in {
				t.Errorf("json.Marshal(RawMessage(%q)) = %s, %v; Compacted is wrong", in, out, err)
			}
		}
	}
}
