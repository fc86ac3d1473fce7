package jsondecode

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	kjson "sigs.k8s.io/json"
)

// parseCases are valid inputs and what parseJSON must build from them
// (sigs.k8s.io/json builds the same: TestParseJSONMatchesKJSON).
var parseCases = []struct {
	in   string
	want any
}{
	{`null`, nil},
	{` true `, true},
	{"\t\r\nfalse\n", false},
	{`0`, int64(0)},
	{`-0`, int64(0)},
	{`-0.0`, math.Copysign(0, -1)},
	{`12`, int64(12)},
	{`-12`, int64(-12)},
	{`1.0`, 1.0},
	{`1e3`, 1000.0},
	{`1E+3`, 1000.0},
	{`2e-1`, 0.2},
	{`123456789012345678`, int64(123456789012345678)},
	{`9223372036854775807`, int64(math.MaxInt64)},
	{`-9223372036854775808`, int64(math.MinInt64)},
	{`9223372036854775808`, 9223372036854775808.0},
	{`-9223372036854775809`, -9223372036854775809.0},
	{`100000000000000000000000`, 1e23},
	{`1e-400`, 0.0},
	{`""`, ""},
	{`"plain"`, "plain"},
	{`"héllo ✓"`, "héllo ✓"},
	{`"a\"b\\c\/d\be\ff\ng\rh\ti"`, "a\"b\\c/d\be\ff\ng\rh\ti"},
	{`"\u0041\u00e9\u2713"`, "Aé✓"},
	{`"\uD83D\uDE00"`, "😀"},
	{`"\ud83d\ude00x"`, "😀x"},
	{`"\uD83Dx"`, "\uFFFDx"},
	{`"\uDE00\uD83D"`, "\uFFFD\uFFFD"},
	{`"\uD83D\u0041"`, "\uFFFDA"},
	{`"\uD83D\uD83D\uDE00"`, "\uFFFD😀"},
	{`"\u0000"`, "\x00"},
	{"\"bad \xff utf8\"", "bad \uFFFD utf8"},
	{"\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD"},
	{"\"\xe2\x9c\"", "\uFFFD\uFFFD"},
	{"\"a\\n\xff\"", "a\n\uFFFD"},
	{`[]`, []any{}},
	{`[ 1 , "x" , [ ] , { } , null ]`, []any{int64(1), "x", []any{}, map[string]any{}, nil}},
	{`{}`, map[string]any{}},
	{`{"a":1,"A":2}`, map[string]any{"a": int64(1), "A": int64(2)}},
	{`{"a":1,"a":{"b":[true]}}`, map[string]any{"a": map[string]any{"b": []any{true}}}},
	{`{"k\u00e9y":"v","":null}`, map[string]any{"kéy": "v", "": nil}},
	{`{"metadata":{"name":"x","resourceVersion":"12","generation":3,"labels":{"app":"a"}},"spec":{"f":1.5}}`,
		map[string]any{
			"metadata": map[string]any{"name": "x", "resourceVersion": "12", "generation": int64(3),
				"labels": map[string]any{"app": "a"}},
			"spec": map[string]any{"f": 1.5},
		}},
}

func TestParseJSON(t *testing.T) {
	for _, tc := range parseCases {
		got, err := parseJSON([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

// parseErrorCases are invalid inputs and the offset their error names.
var parseErrorCases = []struct {
	in     string
	offset int
}{
	{``, 0},
	{`   `, 3},
	{`nul`, 0},
	{`nulll`, 4},
	{`True`, 0},
	{`01`, 1},
	{`-`, 1},
	{`-a`, 1},
	{`1.`, 2},
	{`1.e3`, 2},
	{`1e`, 2},
	{`1e+`, 3},
	{`.5`, 0},
	{`+1`, 0},
	{`1e400`, 0},
	{`-1e400`, 0},
	{`"abc`, 4},
	{"\"a\nb\"", 2},
	{`"\x"`, 2},
	{`"\'"`, 2},
	{`"\u12"`, 1},
	{`"\u12G4"`, 1},
	{`"\`, 2},
	{`[1,]`, 3},
	{`[1 2]`, 3},
	{`[`, 1},
	{`{"a"}`, 4},
	{`{"a":}`, 5},
	{`{"a":1,}`, 7},
	{`{a:1}`, 1},
	{`{"a":1 "b":2}`, 7},
	{`{}}`, 2},
	{`{} x`, 3},
	{"\xef\xbb\xbf{}", 0},
	{"{\"a\":1}\x00", 7},
}

func TestParseJSONErrors(t *testing.T) {
	for _, tc := range parseErrorCases {
		v, err := parseJSON([]byte(tc.in))
		var se *jsonSyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: got %#v, %v; want a syntax error", tc.in, v, err)
			continue
		}
		if se.Offset != tc.offset {
			t.Errorf("%q: error %q at offset %d, want %d", tc.in, err, se.Offset, tc.offset)
		}
	}
}

func TestParseJSONDepth(t *testing.T) {
	deep := func(n int) []byte {
		return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
	}
	if _, err := parseJSON(deep(maxJSONDepth)); err != nil {
		t.Errorf("depth %d: %v", maxJSONDepth, err)
	}
	if _, err := parseJSON(deep(maxJSONDepth + 1)); err == nil || !strings.Contains(err.Error(), "max depth") {
		t.Errorf("depth %d: %v; want exceeded max depth", maxJSONDepth+1, err)
	}
	objects := strings.Repeat(`{"a":`, maxJSONDepth+1) + "1" + strings.Repeat("}", maxJSONDepth+1)
	if _, err := parseJSON([]byte(objects)); err == nil {
		t.Errorf("objects nested %d deep: no error", maxJSONDepth+1)
	}
}

// TestParseJSONMatchesKJSON checks the tables against sigs.k8s.io/json.
func TestParseJSONMatchesKJSON(t *testing.T) {
	for _, tc := range parseCases {
		compareWithKJSON(t, []byte(tc.in))
	}
	for _, tc := range parseErrorCases {
		compareWithKJSON(t, []byte(tc.in))
	}
	compareWithKJSON(t, []byte(sampleEvent))
}

// testStrings is a string cache that the comparisons share (they run one
// at a time).
var testStrings = newStringCache()

// compareWithKJSON fails unless parseJSON and sigs.k8s.io/json agree on
// data: both fail, or both build the same value (into an interface{}, and
// into a map when the value is an object, as unstructured decodes it).
func compareWithKJSON(t *testing.T, data []byte) {
	t.Helper()
	got, err := parseJSON(data)
	var want any
	werr := kjson.UnmarshalCaseSensitivePreserveInts(data, &want)
	if (err != nil) != (werr != nil) {
		t.Fatalf("%q: parseJSON error %v, sigs.k8s.io/json error %v", data, err, werr)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: parseJSON built %#v, sigs.k8s.io/json %#v", data, got, want)
	}
	if cached, err := parseJSONCached(data, testStrings); err != nil || !reflect.DeepEqual(cached, want) {
		t.Fatalf("%q: with a string cache, parseJSON built %#v, %v", data, cached, err)
	}
	if obj, ok := got.(map[string]any); ok {
		var m map[string]any
		if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &m); err != nil || !reflect.DeepEqual(obj, m) {
			t.Fatalf("%q: into a map, sigs.k8s.io/json built %#v, %v", data, m, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add([]byte(tc.in))
	}
	for _, tc := range parseErrorCases {
		f.Add([]byte(tc.in))
	}
	f.Add([]byte(sampleEvent))
	f.Fuzz(func(t *testing.T, data []byte) {
		compareWithKJSON(t, data)
	})
}

func BenchmarkParseJSON(b *testing.B) {
	data := []byte(sampleEvent)
	b.Run("parseJSON", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := parseJSON(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parseJSONCached", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		strings := newStringCache()
		for b.Loop() {
			if _, err := parseJSONCached(data, strings); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kjson", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var m map[string]any
			if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
