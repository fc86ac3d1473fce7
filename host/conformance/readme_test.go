package conformance_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// readmeCount is the README's sentence that counts the scenarios.
var readmeCount = regexp.MustCompile(`a Kopf conformance suite: (\d+) end-to-end`)

// TestConformanceCountInREADME keeps the README's count of scenarios the
// suite's; -update rewrites it (as it rewrites docs/conformance.md's
// table in TestConformanceDoc).
func TestConformanceCountInREADME(t *testing.T) {
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := readmeCount.FindSubmatchIndex(data)
	if m == nil {
		t.Fatalf("%s no longer says %q; keep the sentence or change this test", path, readmeCount)
	}
	want := fmt.Sprint(len(allScenarios()))
	if string(data[m[2]:m[3]]) == want {
		return
	}
	if *update {
		out := append(append(append([]byte{}, data[:m[2]]...), want...), data[m[3]:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s counts %s conformance scenarios, the suite has %s; run go test ./host/conformance -run TestConformanceCountInREADME -update",
		path, data[m[2]:m[3]], want)
}
