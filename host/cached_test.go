package host

import (
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
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
