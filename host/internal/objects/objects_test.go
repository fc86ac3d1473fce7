package objects

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func TestPaths(t *testing.T) {
	obj := mustDecode(t, `{"spec":{"a":{"b":1},"n":null,"s":"x"}}`)
	tests := []struct {
		name  string
		path  string
		want  any
		found bool
	}{
		{"root", "", obj, true},
		{"nested", "spec.a.b", int64(1), true},
		{"null is present", "spec.n", nil, true},
		{"missing", "spec.zz", nil, false},
		{"through a scalar", "spec.s.x", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := Get(obj, ParsePath(tt.path))
			if found != tt.found || !Equal(got, tt.want) {
				t.Errorf("Get(%q) = %v, %v; want %v, %v", tt.path, got, found, tt.want, tt.found)
			}
		})
	}
	if got := ParsePath("spec.a.b").String(); got != "spec.a.b" {
		t.Errorf("round trip = %q", got)
	}
	if _, found := Get(nil, nil); found {
		t.Errorf("nil root is found")
	}
}

func TestSetRemove(t *testing.T) {
	m := map[string]any{"spec": "scalar"}
	Set(m, ParsePath("spec.a.b"), "v")
	Set(m, ParsePath("metadata.labels.x"), "y")
	want := mustDecode(t, `{"spec":{"a":{"b":"v"}},"metadata":{"labels":{"x":"y"}}}`)
	if !Equal(m, want) {
		t.Fatalf("Set: got %v", m)
	}
	if !Remove(m, ParsePath("spec.a.b")) || Remove(m, ParsePath("spec.a.b")) || Remove(m, ParsePath("nope.x")) {
		t.Errorf("Remove reports wrong")
	}
	if !Remove(m, ParsePath("metadata")) {
		t.Errorf("Remove top-level failed")
	}
	if !Equal(m, mustDecode(t, `{"spec":{"a":{}}}`)) {
		t.Errorf("after Remove: %v", m)
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"int64 vs float64", int64(3), float64(3), true},
		{"int vs json.Number", 3, json.Number("3"), true},
		{"fraction", 1.5, json.Number("1.5"), true},
		{"different numbers", int64(3), 3.5, false},
		{"number vs string", int64(3), "3", false},
		{"nil vs nil", nil, nil, true},
		{"nil vs empty map", nil, map[string]any{}, false},
		{"maps", map[string]any{"a": int64(1)}, map[string]any{"a": 1.0}, true},
		{"maps differ in keys", map[string]any{"a": 1}, map[string]any{"b": 1}, false},
		{"lists", []any{"a", int64(1)}, []any{"a", 1.0}, true},
		{"lists order", []any{"a", "b"}, []any{"b", "a"}, false},
		{"bools", true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Equal(tt.a, tt.b); got != tt.want {
				t.Errorf("Equal(%v, %v) = %v", tt.a, tt.b, got)
			}
		})
	}
}

func TestEncodeASCII(t *testing.T) {
	got, err := EncodeASCII(map[string]any{"m": "a<b>&é😀", "n": int64(1)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"m":"a<b>&\u00e9\ud83d\ude00","n":1}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want Diff
	}{
		{"equal", `{"spec":{"x":1}}`, `{"spec":{"x":1.0}}`, nil},
		{"create", `null`, `{"spec":{"x":1}}`, Diff{{Op: abi.DiffAdd, Field: Path{}, New: map[string]any{"spec": map[string]any{"x": int64(1)}}}}},
		{"delete", `{"a":1}`, `null`, Diff{{Op: abi.DiffRemove, Field: Path{}, Old: map[string]any{"a": int64(1)}}}},
		{"nested", `{"spec":{"x":1,"old":"o","same":true}}`, `{"spec":{"x":2,"new":"n","same":true}}`, Diff{
			{Op: abi.DiffAdd, Field: Path{"spec", "new"}, New: "n"},
			{Op: abi.DiffRemove, Field: Path{"spec", "old"}, Old: "o"},
			{Op: abi.DiffChange, Field: Path{"spec", "x"}, Old: int64(1), New: int64(2)},
		}},
		{"lists as a whole", `{"l":[1,2]}`, `{"l":[1,2,3]}`, Diff{{Op: abi.DiffChange, Field: Path{"l"}, Old: []any{int64(1), int64(2)}, New: []any{int64(1), int64(2), int64(3)}}}},
		{"null is absent", `{"a":null}`, `{"a":"x"}`, Diff{{Op: abi.DiffAdd, Field: Path{"a"}, New: "x"}}},
		{"type change", `{"a":{"b":1}}`, `{"a":"s"}`, Diff{{Op: abi.DiffChange, Field: Path{"a"}, Old: map[string]any{"b": int64(1)}, New: "s"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(mustDecode(t, tt.a), mustDecode(t, tt.b))
			if !diffEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func diffEqual(a, b Diff) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Op != b[i].Op || !reflect.DeepEqual([]string(a[i].Field), []string(b[i].Field)) ||
			!Equal(a[i].Old, b[i].Old) || !Equal(a[i].New, b[i].New) {
			return false
		}
	}
	return true
}

func TestReduce(t *testing.T) {
	full := Compare(
		mustDecode(t, `{"spec":{"field":{"a":1,"b":2},"other":1}}`),
		mustDecode(t, `{"spec":{"field":{"a":1,"b":3,"c":4},"other":2}}`))
	tests := []struct {
		name  string
		diff  Diff
		field string
		want  Diff
	}{
		{"root keeps all", full, "", full},
		{"under the field", full, "spec.field", Diff{
			{Op: abi.DiffAdd, Field: Path{"c"}, New: int64(4)},
			{Op: abi.DiffChange, Field: Path{"b"}, Old: int64(2), New: int64(3)},
		}},
		{"exact field", full, "spec.other", Diff{{Op: abi.DiffChange, Field: Path{}, Old: int64(1), New: int64(2)}}},
		{"unrelated", full, "spec.zzz", nil},
		{"parent added", Compare(nil, mustDecode(t, `{"spec":{"field":"v"}}`)), "spec.field",
			Diff{{Op: abi.DiffAdd, Field: Path{}, New: "v"}}},
		{"parent removed, field absent", Compare(mustDecode(t, `{"spec":{"x":1}}`), nil), "spec.field", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.diff.Reduce(ParsePath(tt.field)); !diffEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestDiffABI(t *testing.T) {
	d := Diff{{Op: abi.DiffAdd, Field: Path{}, New: map[string]any{"a": int64(1)}}, {Op: abi.DiffRemove, Field: Path{"x"}, Old: "o"}}
	items, err := d.ABI()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(items)
	want := `[{"op":"add","field":[],"new":{"a":1}},{"op":"remove","field":["x"],"old":"o"}]`
	if string(raw) != want {
		t.Errorf("got %s, want %s", raw, want)
	}
}

func TestMergePatches(t *testing.T) {
	target := mustDecode(t, `{"metadata":{"annotations":{"a":"1","b":"2"}},"spec":{"l":[1]}}`)
	patch := mustDecode(t, `{"metadata":{"annotations":{"a":null,"c":"3"}},"spec":{"l":[2]}}`)
	got := ApplyMerge(target, patch)
	if want := mustDecode(t, `{"metadata":{"annotations":{"b":"2","c":"3"}},"spec":{"l":[2]}}`); !Equal(got, want) {
		t.Errorf("ApplyMerge = %v", got)
	}
	if !Equal(target, mustDecode(t, `{"metadata":{"annotations":{"a":"1","b":"2"}},"spec":{"l":[1]}}`)) {
		t.Errorf("target modified: %v", target)
	}

	// Folding two patches equals applying them one after the other.
	first := mustDecode(t, `{"status":{"h":{"x":1}},"spec":{"a":null}}`).(map[string]any)
	second := mustDecode(t, `{"status":{"h":{"y":2}},"spec":{"a":{"z":1}}}`).(map[string]any)
	sequential := ApplyMerge(ApplyMerge(target, first), second)
	MergeInto(first, second)
	if folded := ApplyMerge(target, first); !Equal(folded, sequential) {
		t.Errorf("folded %v != sequential %v", folded, sequential)
	}
}

func TestMinimize(t *testing.T) {
	obj := mustDecode(t, `{"metadata":{"annotations":{"a":"1"}},"status":{"h":{"m":"x"}}}`)
	tests := []struct {
		name, patch, want string
	}{
		{"same values vanish", `{"metadata":{"annotations":{"a":"1"}},"status":{"h":{"m":"x"}}}`, `{}`},
		{"nulls for absent keys vanish", `{"metadata":{"annotations":{"zz":null},"labels":{"q":null}}}`, `{}`},
		{"changes stay", `{"metadata":{"annotations":{"a":"2","b":null}},"status":{"h":{"m":"y"}}}`, `{"metadata":{"annotations":{"a":"2"}},"status":{"h":{"m":"y"}}}`},
		{"removals stay", `{"metadata":{"annotations":{"a":null}}}`, `{"metadata":{"annotations":{"a":null}}}`},
		{"replacing a scalar by an object stays", `{"status":{"h":{"m":{"k":null}}}}`, `{"status":{"h":{"m":{"k":null}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustDecode(t, tt.patch).(map[string]any)
			empty := Minimize(p, obj)
			if want := mustDecode(t, tt.want); !Equal(p, want) || empty != (tt.want == `{}`) {
				t.Errorf("got %v (empty=%v), want %s", p, empty, tt.want)
			}
		})
	}
}

func TestPruneEmpty(t *testing.T) {
	p := mustDecode(t, `{"metadata":{"annotations":{}},"status":{"a":{"b":{}}},"spec":{"x":1}}`).(map[string]any)
	if PruneEmpty(p) || !Equal(p, mustDecode(t, `{"spec":{"x":1}}`)) {
		t.Errorf("got %v", p)
	}
}

func TestCanonicalJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, ``},
		{`  `, ``},
		{`null`, ``},
		{`{"b":1,"a":[2,{"d":1,"c":2}]}`, `{"a":[2,{"c":2,"d":1}],"b":1}`},
		{` "x" `, `"x"`},
		{`not json`, `not json`},
	}
	for _, tt := range tests {
		if got := CanonicalJSON([]byte(tt.in)); got != tt.want {
			t.Errorf("CanonicalJSON(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
