package indexing_test

import (
	"encoding/json"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/indexing"
)

// Kopf's rules for what an index handler returns.
func TestContributions(t *testing.T) {
	for _, tc := range []struct {
		result string
		keep   bool
		want   map[indexing.Key]string
	}{
		{result: ``, keep: true},
		{result: `null`, keep: true},
		{result: `{}`, want: map[indexing.Key]string{}},
		{result: `{"a":1,"b":{"x":[1]}}`, want: map[indexing.Key]string{{Name: "a"}: `1`, {Name: "b"}: `{"x":[1]}`}},
		{result: `"v"`, want: map[indexing.Key]string{indexing.NullKey: `"v"`}},
		{result: `[1,2]`, want: map[indexing.Key]string{indexing.NullKey: `[1,2]`}},
		{result: `0`, want: map[indexing.Key]string{indexing.NullKey: `0`}},
		{result: `false`, want: map[indexing.Key]string{indexing.NullKey: `false`}},
	} {
		got, keep, err := indexing.Contributions(json.RawMessage(tc.result))
		if err != nil {
			t.Fatalf("%s: %v", tc.result, err)
		}
		if keep != tc.keep || len(got) != len(tc.want) {
			t.Errorf("%s: keep %v values %v, want keep %v values %v", tc.result, keep, got, tc.keep, tc.want)
			continue
		}
		for k, v := range tc.want {
			if string(got[k]) != v {
				t.Errorf("%s: key %v = %s, want %s", tc.result, k, got[k], v)
			}
		}
	}
}

func TestKeyOf(t *testing.T) {
	for raw, want := range map[string]indexing.Key{
		`"alice"`: {Name: "alice"}, `null`: indexing.NullKey, ``: indexing.NullKey,
		`7`: {Name: "7"}, `true`: {Name: "true"}, `[ "a", 1 ]`: {Name: `["a",1]`},
	} {
		got, err := indexing.KeyOf(json.RawMessage(raw))
		if err != nil || got != want {
			t.Errorf("KeyOf(%s) = %v, %v; want %v", raw, got, err, want)
		}
	}
	if _, err := indexing.KeyOf(json.RawMessage(`{bad`)); err == nil {
		t.Error("KeyOf of bad JSON: no error")
	}
}

// An object's contributions are replaced as a whole, other objects' values
// under the same keys stay, emptied keys go, and the encoding follows.
func TestIndexReplaceDiscard(t *testing.T) {
	ix := indexing.NewIndex()
	set := func(obj, result string) {
		t.Helper()
		values, keep, err := indexing.Contributions(json.RawMessage(result))
		if err != nil || keep {
			t.Fatalf("%s: keep %v err %v", result, keep, err)
		}
		ix.Replace(obj, values)
	}
	set("ns/a", `{"alice":"a1","bob":"a2"}`)
	set("ns/b", `{"alice":"b1"}`)
	set("ns/c", `"loose"`)
	if got, want := string(ix.Encode()), `{"alice":["a1","b1"],"bob":["a2"],"null":["loose"]}`; got != want {
		t.Errorf("encoded %s, want %s", got, want)
	}
	if n := len(ix.Encode()); ix.Size() < n-8 || ix.Size() > n+8 {
		t.Errorf("size estimate %d, encoded %d bytes", ix.Size(), n)
	}
	set("ns/a", `{"carol":"a3"}`) // a leaves alice and bob
	if got, want := string(ix.Encode()), `{"alice":["b1"],"carol":["a3"],"null":["loose"]}`; got != want {
		t.Errorf("after a's change: %s, want %s", got, want)
	}
	if v := ix.Lookup(indexing.Key{Name: "bob"}); v != nil {
		t.Errorf("bob still has %s", v)
	}
	ix.Discard("ns/b")
	ix.Discard("ns/c")
	ix.Discard("ns/missing")
	if got, want := string(ix.Encode()), `{"carol":["a3"]}`; got != want || ix.Len() != 1 || ix.Objects() != 1 {
		t.Errorf("after discards: %s (%d keys, %d objects), want %s", got, ix.Len(), ix.Objects(), want)
	}
	set("ns/a", `{}`)
	if got := string(ix.Encode()); got != `{}` || ix.Objects() != 0 || ix.Size() != 2 {
		t.Errorf("after an empty result: %s, %d objects, size %d", got, ix.Objects(), ix.Size())
	}
}

// Kopf's tuple keys: a result keyed by a JSON array's text and a look-up
// by the array are one key.
func TestTupleKeys(t *testing.T) {
	values, _, err := indexing.Contributions(json.RawMessage(`{"[\"default\",\"north\"]":"a"}`))
	if err != nil {
		t.Fatal(err)
	}
	ix := indexing.NewIndex()
	ix.Replace("default/a", values)
	key, err := indexing.KeyOf(json.RawMessage(`[ "default", "north" ]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := ix.Lookup(key); len(got) != 1 || string(got[0]) != `"a"` {
		t.Errorf("look-up by the tuple = %s, want [\"a\"]", got)
	}
	if got, want := string(ix.Encode()), `{"[\"default\",\"north\"]":["a"]}`; got != want {
		t.Errorf("encoded %s, want %s", got, want)
	}
}
