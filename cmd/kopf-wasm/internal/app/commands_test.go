package app

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

func TestInspect(t *testing.T) {
	mod := wasmtest.Path(t, "kopfexample")
	r := run(t.Context(), "", "inspect", mod)
	if r.code != 0 || !regexp.MustCompile(`(?m)^create_fn +create +kopfexamples\.v1\.kopf\.dev +- +-$`).MatchString(r.out) ||
		!strings.Contains(r.out, "Module:  kopfexample 0.1.0") {
		t.Errorf("inspect: %+v", r)
	}
	r = run(t.Context(), "", "inspect", "-o", "json", mod)
	var in inspection
	if err := json.Unmarshal([]byte(r.out), &in); err != nil || r.code != 0 || len(in.Manifest.Handlers) != 3 ||
		!strings.HasPrefix(in.Digest, "sha256:") {
		t.Errorf("inspect -o json: %+v (%v)", r, err)
	}
}

func TestInvoke(t *testing.T) {
	mod := wasmtest.Path(t, "kopfexample")
	obj := writeFile(t, t.TempDir(), "obj.yaml", exampleObject)
	r := run(t.Context(), "", "invoke", mod, "--handler", "create_fn", "--object", obj, "--log-format", "plain")
	want := "Outcome:  success\nResult:   {\"message\":\"hello world\"}\nPatch:    (none)\n"
	if r.code != 0 || r.out != want || !strings.HasPrefix(r.errOut, "And here we are! Creating") {
		t.Errorf("invoke: %+v; want stdout %q and the module's log line on stderr", r, want)
	}
	// The old state from a file, the new one from stdin, as JSON.
	newer := strings.Replace(exampleObject, "field: value", "field: changed", 1)
	r = run(t.Context(), newer, "invoke", mod, "--handler", "update_fn", "--object", "-", "--old", obj, "-o", "json", "-q")
	var got invocation
	if err := json.Unmarshal([]byte(r.out), &got); err != nil || r.code != 0 || r.errOut != "" {
		t.Fatalf("invoke -o json: %+v (%v)", r, err)
	}
	var result bytes.Buffer
	_ = json.Compact(&result, got.Response.Result)
	if got.Request.Reason != "update" || len(got.Request.Diff) != 1 || result.String() != `{"message":"updated"}` {
		t.Errorf("request reason %s, diff %+v, result %s", got.Request.Reason, got.Request.Diff, result.String())
	}
}

func TestBuild(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("no go on PATH: this test builds a module; install Go")
	}
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "kex.wasm")
	r := run(t.Context(), "", "build", filepath.Join(root, "examples", "kopfexample"), "-o", out)
	if r.code != 0 || r.out != "built "+out+": module kopfexample 0.1.0, 3 handlers\n" {
		t.Errorf("build: %+v", r)
	}
	// A package that does not compile: the compiler's output, then one Error line.
	bad := t.TempDir()
	writeFile(t, bad, "go.mod", "module bad\n\ngo 1.24\n")
	writeFile(t, bad, "main.go", "package main\n\nfunc main() { undefined() }\n")
	r = run(t.Context(), "", "build", bad)
	if r.code != 1 || !strings.Contains(r.errOut, "undefined: undefined") || !strings.Contains(r.errOut, "Error: build: go build in") {
		t.Errorf("build of a broken package: %+v", r)
	}
}

// TestInit generates a module against this checkout's SDK and checks that
// it tests natively and builds for wasip1 as generated, and that the host
// accepts the result.
func TestInit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a new module (slow)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("no go on PATH: this test builds a module; install Go")
	}
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "widgets")
	r := run(t.Context(), "", "init", dir, "--kind", "Widget", "--group", "demo.example.com", "--sdk", filepath.Join(root, "guest-sdk"))
	if r.code != 0 || !strings.Contains(r.out, "created "+dir+": .gitignore, Makefile, README.md, crd.yaml, go.mod, main.go, main_test.go, object.yaml") {
		t.Fatalf("init: %+v", r)
	}
	for _, cmd := range [][]string{{"go", "vet", "./..."}, {"go", "test", "-count=1", "./..."}} {
		goCmd(t, dir, nil, cmd...)
	}
	wasm := filepath.Join(dir, "widgets.wasm")
	goCmd(t, dir, []string{"GOOS=wasip1", "GOARCH=wasm"}, "go", "build", "-buildmode=c-shared", "-o", wasm, ".")
	r = run(t.Context(), "", "inspect", wasm)
	if r.code != 0 || !regexp.MustCompile(`(?m)^create +create +widgets\.v1\.demo\.example\.com`).MatchString(r.out) {
		t.Errorf("inspect of the generated module: %+v", r)
	}
	crd, err := os.ReadFile(filepath.Join(dir, "crd.yaml"))
	if err != nil || !strings.Contains(string(crd), "name: widgets.demo.example.com") {
		t.Errorf("crd.yaml: %s (%v)", crd, err)
	}
}

// goCmd runs a go command in dir outside the repository's go.work.
func goCmd(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	c := exec.CommandContext(t.Context(), args[0], args[1:]...)
	c.Dir = dir
	c.Env = append(append(os.Environ(), "GOWORK=off"), env...)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
