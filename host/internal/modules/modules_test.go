package modules

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// The runtime bounds its compile cache when it starts.
func TestRuntimeBoundsItsCache(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "wazero-v0.0.0-stale", "entry")
	if err := os.MkdirAll(filepath.Dir(stale), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	s := settings.Default().Wasm
	s.CacheDir, s.CacheMaxBytes = dir, 1024
	rt, err := NewRuntime(s, discard)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rt.Close(t.Context()) }()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a 4 KiB entry in a cache bounded to 1 KiB is still there (%v)", err)
	}
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestModuleFiles(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.wasm", "")
	b := writeFile(t, dir, "b.wasm", "")
	writeFile(t, dir, "notes.txt", "")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sub"), "c.wasm", "")
	empty := t.TempDir()
	tests := []struct {
		name  string
		paths []string
		want  []string
		err   string
	}{
		{name: "files", paths: []string{b, a}, want: []string{b, a}},
		{name: "folder in name order, not recursive", paths: []string{dir}, want: []string{a, b}},
		{name: "each once", paths: []string{a, dir}, want: []string{a, b}},
		{name: "missing", paths: []string{filepath.Join(dir, "nope.wasm")}, err: "no such file or folder"},
		{name: "empty folder", paths: []string{empty}, err: "holds no .wasm files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Files(tt.paths)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("Files = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
