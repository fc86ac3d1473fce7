package indexing_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/indexing"
)

// build indexes n objects, each under its own key (its owner) and under one
// shared key, with values of about 40 bytes.
func build(n int) *indexing.Index {
	ix := indexing.NewIndex()
	for i := range n {
		v := json.RawMessage(fmt.Sprintf(`{"name":"object-%05d","namespace":"ns"}`, i))
		ix.Replace(fmt.Sprintf("ns/object-%05d", i), map[indexing.Key]json.RawMessage{
			{Name: fmt.Sprintf("owner-%05d", i)}: v,
			{Name: "everyone"}:                   v,
		})
	}
	return ix
}

// BenchmarkIndexMemory reports the heap an index holds per indexed object
// (two keys per object, 40-byte values) at 10,000 objects.
func BenchmarkIndexMemory(b *testing.B) {
	const n = 10000
	var per float64
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ix := build(n)
		runtime.GC()
		runtime.ReadMemStats(&after)
		per = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(ix)
	}
	b.ReportMetric(per, "B/object")
}

// BenchmarkLookup is a guest's look-up by key as the host answers it (the
// key decoded from JSON, the values found) with 10,000 indexed objects:
// one value under the key.
func BenchmarkLookup(b *testing.B) {
	f := newFixture(b, 4096, abi.Options{})
	f.engine.Install(f.reg, nil)
	e := f.engine
	// Fill the engine's index through its handler: 10,000 objects.
	for i := range 10000 {
		e.Observe(b.Context(), ref, true, obj(fmt.Sprintf("object-%05d", i), fmt.Sprintf("owner-%05d", i)), false)
	}
	req := abi.IndexLookupRequest{Index: "by_owner", Key: json.RawMessage(`"owner-04242"`)}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if resp := e.Lookup("m", req); len(resp.Values) != 1 {
			b.Fatalf("%+v", resp)
		}
	}
}

// BenchmarkLookupShared looks up a key that all 10,000 objects share
// (10,000 values returned, ordered by object).
func BenchmarkLookupShared(b *testing.B) {
	ix := build(10000)
	k := indexing.Key{Name: "everyone"}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if v := ix.Lookup(k); len(v) != 10000 {
			b.Fatal(len(v))
		}
	}
}

// BenchmarkCarried is what every request of the module costs with a
// 10,000-object index: it is carried as null.
func BenchmarkCarried(b *testing.B) {
	f := newFixture(b, 4096, abi.Options{})
	f.engine.Install(f.reg, nil)
	for i := range 10000 {
		f.engine.Observe(b.Context(), ref, true, obj(fmt.Sprintf("object-%05d", i), fmt.Sprintf("owner-%05d", i)), false)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if c := f.engine.Carried("m"); string(c["by_owner"]) != "null" {
			b.Fatal("carried whole")
		}
	}
}

// BenchmarkReplace is one object's change in a 10,000-object index.
func BenchmarkReplace(b *testing.B) {
	ix := build(10000)
	v := map[indexing.Key]json.RawMessage{{Name: "owner-x"}: json.RawMessage(`1`), {Name: "everyone"}: json.RawMessage(`1`)}
	w := map[indexing.Key]json.RawMessage{{Name: "owner-y"}: json.RawMessage(`2`), {Name: "everyone"}: json.RawMessage(`2`)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			ix.Replace("ns/object-04242", v)
		} else {
			ix.Replace("ns/object-04242", w)
		}
	}
}
