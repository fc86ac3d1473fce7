package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// TestRunSettings: the defaults, then the config file, then the
// environment.
func TestRunSettings(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "settings.yaml")
	if err := os.WriteFile(config, []byte("execution:\n  workers: 3\nwasm:\n  cacheDir: /from/file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KOPF_WASM_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "user-cache"))
	t.Setenv("HOME", dir)

	s, err := runSettings("")
	if err != nil || s.Execution.Workers != settings.Default().Execution.Workers || s.Wasm.CacheDir != userWasmCacheDir() || s.Wasm.CacheDir == "" {
		t.Errorf("no file: workers %d, cache %q, %v; want the defaults and the user's cache folder", s.Execution.Workers, s.Wasm.CacheDir, err)
	}
	s, err = runSettings(config)
	if err != nil || s.Execution.Workers != 3 || s.Wasm.CacheDir != "/from/file" {
		t.Errorf("a file: workers %d, cache %q, %v; want the file's", s.Execution.Workers, s.Wasm.CacheDir, err)
	}
	t.Setenv("KOPF_WASM_CACHE", filepath.Join(dir, "env"))
	s, err = runSettings(config)
	if err != nil || s.Execution.Workers != 3 || s.Wasm.CacheDir != filepath.Join(dir, "env", "wasm") {
		t.Errorf("a file and KOPF_WASM_CACHE: workers %d, cache %q, %v; want the environment's cache", s.Execution.Workers, s.Wasm.CacheDir, err)
	}
}
