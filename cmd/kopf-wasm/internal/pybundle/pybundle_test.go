package pybundle

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

var sdk = fstest.MapFS{
	"kopf/__init__.py":       {Data: []byte("# kopf")},
	"kubernetes/__init__.py": {Data: []byte("# kubernetes")},
	"runtime/_kopf_boot.py":  {Data: []byte("# boot")},
}

// write creates files (slash-separated names) under a new folder.
func write(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestBuild(t *testing.T) {
	dir := write(t, "handlers.py", "helpers.py", "pvc-tpl.yaml", "mypkg/__init__.py", "mypkg/util.py",
		"test_handlers.py", "tests/test_more.py", "conftest.py", "__pycache__/handlers.cpython-311.pyc",
		".git/config", "op.wasm", "setup.py")
	b, err := Build(dir, sdk)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"handlers", "helpers"}; !slices.Equal(b.Modules, want) {
		t.Errorf("modules %v, want %v", b.Modules, want)
	}
	zr, err := zip.NewReader(bytes.NewReader(b.Zip), int64(len(b.Zip)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		if f.Method != zip.Store {
			t.Errorf("%s is compressed", f.Name)
		}
		names = append(names, f.Name)
	}
	slices.Sort(names)
	want := []string{"_kopf_boot.py", "handlers.py", "helpers.py", "kopf/__init__.py", "kubernetes/__init__.py",
		"mypkg/__init__.py", "mypkg/util.py", "pvc-tpl.yaml", "setup.py"}
	if !slices.Equal(names, want) {
		t.Errorf("bundled %v, want %v", names, want)
	}
	if b.Files != 6 {
		t.Errorf("%d of the author's files, want 6", b.Files)
	}
}

func TestBuildRefuses(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{"native extension", []string{"handlers.py", "fast/_speedups.cpython-311-x86_64-linux-gnu.so"}, "fast/_speedups.cpython-311-x86_64-linux-gnu.so is a native extension"},
		{"no top-level file", []string{"pkg/__init__.py"}, "has no .py file at its top"},
		{"the SDK's name", []string{"handlers.py", "kopf/__init__.py"}, "kopf/__init__.py is the kopf-wasm SDK's"},
	}
	for _, tt := range tests {
		_, err := Build(write(t, tt.files...), sdk)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", tt.name, err, tt.want)
		}
	}
}
