package host

import (
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// cached are the default settings with the tests' shared compile cache, as
// the CLI's offline commands use theirs: each module compiles once, not
// once per Invoke.
func cached(t testing.TB) *settings.Settings {
	s := settings.Default()
	s.Wasm.CacheDir = wasmtest.CacheDir(t)
	return &s
}

// BenchmarkInspectCached is what `kopf-wasm inspect` costs after the CLI's
// start: a module loaded through a warm compile cache and its manifest
// read. Run with -bench InspectCached.
func BenchmarkInspectCached(b *testing.B) {
	for _, mod := range []struct {
		name string
		path func(testing.TB) string
	}{
		{"go", func(tb testing.TB) string { return wasmtest.Path(tb, "kopfexample") }},
		{"rust", func(tb testing.TB) string { return guestwasm.Path(tb, "rust", "kopfexample") }},
		{"assemblyscript", func(tb testing.TB) string { return guestwasm.Path(tb, "assemblyscript", "kopfexample") }},
	} {
		b.Run(mod.name, func(b *testing.B) {
			path, s := mod.path(b), cached(b)
			if _, _, err := Inspect(b.Context(), path, s); err != nil { // warms the cache
				b.Fatal(err)
			}
			for b.Loop() {
				if _, _, err := Inspect(b.Context(), path, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
