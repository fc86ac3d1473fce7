package jsonfast

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// checkAppend compares Append with json.Marshal for v: the same bytes when
// Append says ok, false when json.Marshal fails, and ok for the shapes the
// fast path promises (mustHandle).
func checkAppend(t *testing.T, v any, mustHandle bool) {
	t.Helper()
	want, err := json.Marshal(v)
	got, ok := Append([]byte{'>'}, v)
	switch {
	case ok && err != nil:
		t.Fatalf("Append(%#v) = %s, true; json.Marshal fails: %v", v, got, err)
	case ok && !bytes.Equal(got[1:], want):
		t.Fatalf("Append(%#v)\n got %s\nwant %s", v, got[1:], want)
	case ok && !Compacted(got[1:]):
		t.Fatalf("Compacted(Append(%#v) = %s) = false", v, got[1:])
	case !ok && (len(got) != 1 || got[0] != '>'):
		t.Fatalf("Append(%#v) = false but changed dst to %q", v, got)
	case !ok && err == nil && mustHandle:
		t.Fatalf("Append(%#v) = false; json.Marshal gives %s", v, want)
	}
}

// retype turns a decoded value into the typed shapes Append handles:
// string maps and slices, []map[string]any, defined types, float32 and
// integers, choosing by the bits of mode.
func retype(v any, mode uint8) any {
	switch x := v.(type) {
	case map[string]any:
		ss := map[string]string{}
		for k, e := range x {
			x[k] = retype(e, mode>>1|mode<<7)
			if s, ok := x[k].(string); ok {
				ss[k] = s
			}
		}
		if mode&1 != 0 && len(ss) == len(x) {
			return ss
		}
		if mode&2 != 0 {
			return object(x)
		}
	case []any:
		var ms []map[string]any
		for i, e := range x {
			x[i] = retype(e, mode>>1|mode<<7)
			if m, ok := x[i].(map[string]any); ok {
				ms = append(ms, m)
			}
		}
		if mode&1 != 0 && len(ms) == len(x) && ms != nil {
			return ms
		}
		if mode&2 != 0 {
			return list(x)
		}
	case float64:
		switch {
		case mode&1 != 0:
			return float32(x)
		case mode&2 != 0 && x == math.Trunc(x) && math.Abs(x) < 1<<62:
			return int64(x)
		case mode&4 != 0:
			return ratio(x)
		}
	case string:
		if mode&1 != 0 {
			return name(x)
		}
	}
	return v
}

func FuzzAppend(f *testing.F) {
	for _, v := range encodeCases {
		if b, err := json.Marshal(v); err == nil {
			f.Add(b, 0.0, uint32(0), uint8(0))
		}
	}
	f.Add([]byte(`{"a":["x",{"b":"y"}],"c":1.5}`), 1e21, math.Float32bits(1e-7), uint8(0xff))
	f.Add([]byte("\xff<\u2028>"), math.Inf(1), math.Float32bits(float32(math.NaN())), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, f64 float64, f32 uint32, mode uint8) {
		checkAppend(t, string(data), true)
		checkAppend(t, json.Number(data), false)
		checkAppend(t, f64, !math.IsNaN(f64) && !math.IsInf(f64, 0))
		g := math.Float32frombits(f32)
		checkAppend(t, g, !math.IsNaN(float64(g)) && !math.IsInf(float64(g), 0))
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		d := depth(v)
		checkAppend(t, v, d < maxDepth)
		checkAppend(t, retype(v, mode), d < maxDepth)
	})
}

// depth is the nesting of containers in a decoded value.
func depth(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			n = max(n, depth(e))
		}
		return n + 1
	case []any:
		for _, e := range x {
			n = max(n, depth(e))
		}
		return n + 1
	}
	return 0
}

func FuzzDecode(f *testing.F) {
	for _, s := range validJSON {
		f.Add([]byte(s))
	}
	for _, s := range invalidJSON {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want any
		err := json.Unmarshal(data, &want)
		got, ok := Decode(data)
		switch {
		case ok && err != nil:
			t.Fatalf("Decode(%q) = %#v, true; json.Unmarshal fails: %v", data, got, err)
		case ok && !same(got, want):
			t.Fatalf("Decode(%q)\n got %#v\nwant %#v", data, got, want)
		case !ok && err == nil && depth(want) <= maxDepth:
			t.Fatalf("Decode(%q) = false; json.Unmarshal gives %#v", data, want)
		}
		if ok {
			checkAppend(t, got, depth(got) < maxDepth)
		}
		checkDecodeObject(t, data)
		checkCompacted(t, data)
	})
}

func checkDecodeObject(t *testing.T, data []byte) {
	var want map[string]any
	err := json.Unmarshal(data, &want)
	got, ok := DecodeObject(data)
	if ok && (err != nil || !same(got, want) || (got == nil) != (want == nil)) {
		t.Fatalf("DecodeObject(%q) = %#v, true; json.Unmarshal gives %#v, %v", data, got, want, err)
	}
}

// checkCompacted: Compacted means json.Marshal copies the raw message as
// it is; and a valid message json.Marshal copies, not too deep, is
// Compacted.
func checkCompacted(t *testing.T, data []byte) {
	out, err := json.Marshal(json.RawMessage(data))
	copied := err == nil && bytes.Equal(out, data)
	if c := Compacted(data); c && !copied {
		t.Fatalf("Compacted(%q) = true; json.Marshal gives %s, %v", data, out, err)
	} else if !c && copied && len(data) > 0 {
		var v any
		if json.Unmarshal(data, &v) == nil && depth(v) <= maxDepth {
			t.Fatalf("Compacted(%q) = false; json.Marshal copies it", data)
		}
	}
}
