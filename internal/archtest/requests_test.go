package archtest

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// TestOnlyExecutionBuildsRequests: no host code outside the execution
// layer fills an abi.Request (issue 16).
func TestOnlyExecutionBuildsRequests(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	found, err := RequestLiterals(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("abi.Request built outside %s (build it with execution.Request): %v", RequestBuilder, found)
	}
}

func TestRequestLiterals(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"host/bad.go":                            "package host\n\nimport \"x/abi\"\n\nvar r = &abi.Request{Handler: \"h\"}\n",
		"host/bad_test.go":                       "package host\n\nvar r2 = abi.Request{}\n",
		"host/internal/execution/ok.go":          "package execution\n\nvar r = abi.Request{}\n",
		"guest-sdk/ok.go":                        "package kopf\n\nvar r = abi.Request{}\n",
		"host/internal/reactor/other_request.go": "package reactor\n\nvar r = http.Request{}\n",
	}
	for name, src := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := RequestLiterals(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"host/bad.go:5"}; !reflect.DeepEqual(got, want) {
		t.Errorf("found %v, want %v", got, want)
	}
}
