package scaffold

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The generated Makefiles find kopf-wasm on PATH, else the binary that
// created the module, and otherwise stop with what to do.
func TestMakefileFindsKopfWasm(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is not installed: %v (apt-get install make)", err)
	}
	bin := t.TempDir()
	creator := filepath.Join(bin, "kopf-wasm-that-created-it")
	if err := os.WriteFile(creator, []byte("#!/bin/sh\necho creator \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, lang := range Langs {
		t.Run(lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "w")
			p, err := Params{Lang: lang, Kind: "Widget"}.Defaults(dir)
			if err != nil {
				t.Fatal(err)
			}
			p.SDKDir, p.KopfWasm = "../sdk", creator
			if _, err := Write(dir, p); err != nil {
				t.Fatal(err)
			}
			// Not on PATH: the creator's binary.
			out, err := makeIn(dir, "/usr/bin:/bin", "-s", "kopf-wasm-found", "--eval", "show: ; @echo $(KOPF_WASM)", "show")
			if err != nil || strings.TrimSpace(out) != creator {
				t.Errorf("without kopf-wasm on PATH: %q, %v; want %s", out, err, creator)
			}
			// Neither: one line that says what to do.
			if err := os.Rename(creator, creator+".gone"); err != nil {
				t.Fatal(err)
			}
			defer os.Rename(creator+".gone", creator)
			out, err = makeIn(dir, "/usr/bin:/bin", "-s", "kopf-wasm-found")
			if err == nil || !strings.Contains(out, "make: no kopf-wasm command (kopf-wasm): run 'make cli' in a kopf-wasm checkout") {
				t.Errorf("without any kopf-wasm: %q, %v; want the line that says what to do", out, err)
			}
		})
	}
}

func makeIn(dir, path string, args ...string) (string, error) {
	c := exec.Command("make", append([]string{"-C", dir, "--no-print-directory"}, args...)...)
	c.Env = append(os.Environ(), "PATH="+path)
	out, err := c.CombinedOutput()
	return string(out), err
}
