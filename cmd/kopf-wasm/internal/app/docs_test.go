package app

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md from the command tree")

// TestCLIDocs keeps docs/cli.md equal to the command tree; `make docs`
// (go test -run TestCLIDocs -update) rewrites it.
func TestCLIDocs(t *testing.T) {
	path := filepath.Join("..", "..", "..", "..", "docs", "cli.md")
	got := Markdown()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run make docs", err)
	}
	if string(want) != got {
		t.Errorf("docs/cli.md is stale: run make docs")
	}
}
