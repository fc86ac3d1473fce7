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
	if len(in.Webhooks) != 0 {
		t.Errorf("webhooks of a module without webhook handlers: %+v", in.Webhooks)
	}
}

// invoke calls a convert handler with --to.
func TestInvokeConvert(t *testing.T) {
	mod := wasmtest.Path(t, "10-conversion")
	obj := writeFile(t, t.TempDir(), "w.yaml", "apiVersion: kopf.dev/v1alpha1\nkind: Widget\nmetadata: {name: w}\nspec: {size: \"4\"}\n")
	r := run(t.Context(), "", "invoke", mod, "--handler", "convert", "--object", obj, "--to", "kopf.dev/v1")
	if r.code != 0 || !strings.Contains(r.out, `Result:   {"spec":{"replicas":4}}`) {
		t.Errorf("invoke --to: %+v", r)
	}
	r = run(t.Context(), "", "invoke", mod, "--handler", "convert", "--object", obj)
	if r.code == 0 || !strings.Contains(r.errOut, "--to") {
		t.Errorf("invoke of a convert handler without --to: %+v", r)
	}
}

// inspect lists the webhooks of validating and mutating handlers.
func TestInspectWebhooks(t *testing.T) {
	mod := wasmtest.Path(t, "09-admission")
	r := run(t.Context(), "", "inspect", mod)
	if r.code != 0 || !regexp.MustCompile(`(?m)^loop_ignore +/admission/loop_ignore +loop-ignore\.admission\.<managed> +\* +Ignore +None$`).MatchString(r.out) {
		t.Errorf("inspect: %+v", r)
	}
	r = run(t.Context(), "", "inspect", "-o", "json", mod)
	var in inspection
	if err := json.Unmarshal([]byte(r.out), &in); err != nil || len(in.Webhooks) != 4 || in.Webhooks[0].Path != "/admission/check_field" ||
		in.Webhooks[1].Kind != "mutate" || in.Webhooks[0].Operations[1] != "UPDATE" {
		t.Errorf("inspect -o json: %+v (%v)", in.Webhooks, err)
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
	// No sources of a known language.
	r = run(t.Context(), "", "build", t.TempDir())
	if r.code != 2 || !strings.Contains(r.errOut, "holds no go.mod or .go files, Cargo.toml, asconfig.json, or .py files") {
		t.Errorf("build of an empty folder: %+v", r)
	}
}

// TestBuildRefused: a build that compiles but that the host refuses (a Go
// program and an AssemblyScript module without the guest SDK) fails and
// leaves the good module at OUT as it was, with no temporary file beside it.
func TestBuildRefused(t *testing.T) {
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(wasmtest.Path(t, "kopfexample"))
	if err != nil {
		t.Fatal(err)
	}
	outDir := t.TempDir()
	out := writeFile(t, outDir, "module.wasm", string(good))

	plain := t.TempDir()
	writeFile(t, plain, "go.mod", "module plain\n\ngo 1.24\n")
	writeFile(t, plain, "main.go", "package main\n\nfunc main() {}\n")
	// An AssemblyScript module found by its package.json, compiled by the
	// SDK's asc that package.json names by path.
	as := t.TempDir()
	writeFile(t, as, "package.json", `{"devDependencies": {"@kopf-wasm/guest-sdk-assemblyscript": "file:`+filepath.Join(root, "guest-sdk", "assemblyscript")+`"}}`)
	if err := os.Mkdir(filepath.Join(as, "assembly"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, as, "assembly/index.ts", "export function add(a: i32, b: i32): i32 { return a + b; }\n")

	for _, tt := range []struct{ lang, dir string }{{"go", plain}, {"assemblyscript", as}} {
		t.Run(tt.lang, func(t *testing.T) {
			if tt.lang != "go" {
				needToolchain(t, root, tt.lang)
			}
			r := run(t.Context(), "", "build", tt.dir, "-o", out)
			if r.code != 1 || !strings.Contains(r.errOut, "Error: build: the "+tt.lang+" build of "+tt.dir+" is not a module the host accepts, so "+out+" is left as it was: ") {
				t.Errorf("build: %+v", r)
			}
			if b, err := os.ReadFile(out); err != nil || !bytes.Equal(b, good) {
				t.Errorf("%s changed (%v)", out, err)
			}
			if entries, _ := os.ReadDir(outDir); len(entries) != 1 {
				t.Errorf("%s holds %v, want only module.wasm", outDir, entries)
			}
		})
	}
}

// TestInit generates a module in each language against this checkout's
// SDK, builds it with kopf-wasm build (which checks that the host accepts
// it) and runs its tests as generated: go vet and go test, cargo test, the
// AssemblyScript module's test/run.mjs. A missing toolchain fails the test
// with the line that names the script installing it.
func TestInit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds new modules (slow)")
	}
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		lang  string
		files string
		test  [][]string
	}{
		{"go", ".gitignore, Makefile, README.md, crd.yaml, go.mod, main.go, main_test.go, object.yaml",
			[][]string{{"go", "vet", "./..."}, {"go", "test", "-count=1", "./..."}}},
		{"rust", ".cargo/config.toml, .gitignore, Cargo.toml, Makefile, README.md, crd.yaml, object.yaml, src/lib.rs",
			[][]string{{"/usr/bin/cargo", "test", "--quiet"}}},
		{"assemblyscript", ".gitignore, Makefile, README.md, asconfig.json, assembly/index.ts, crd.yaml, object.yaml, package.json, test/run.mjs",
			[][]string{{"node", "test/run.mjs"}}},
		// A Go module built with TinyGo: init and build with --compiler tinygo.
		{"tinygo", ".gitignore, Makefile, README.md, crd.yaml, go.mod, main.go, main_test.go, object.yaml",
			[][]string{{"go", "vet", "./..."}, {"go", "test", "-count=1", "./..."}}},
	} {
		t.Run(tt.lang, func(t *testing.T) {
			needToolchain(t, root, tt.lang)
			lang, compiler := tt.lang, []string(nil)
			if lang == "tinygo" {
				lang, compiler = "go", []string{"--compiler", "tinygo"}
			}
			dir := filepath.Join(t.TempDir(), "widgets")
			r := run(t.Context(), "", append([]string{"init", dir, "--lang", lang, "--kind", "Widget", "--group", "demo.example.com", "--sdk", filepath.Join(root, "guest-sdk")}, compiler...)...)
			if r.code != 0 || !strings.Contains(r.out, "created "+dir+": "+tt.files+"\n") {
				t.Fatalf("init: %+v", r)
			}
			for _, cmd := range tt.test {
				goCmd(t, dir, []string{"PATH=/usr/bin:" + os.Getenv("PATH"), "RUSTC=/usr/bin/rustc", "RUSTDOC=/usr/bin/rustdoc"}, cmd...)
			}
			wasm := filepath.Join(dir, "widgets.wasm")
			r = run(t.Context(), "", append([]string{"build", dir}, compiler...)...)
			if r.code != 0 || r.out != "built "+wasm+": module widgets 0.1.0, 3 handlers\n" {
				t.Fatalf("build of the generated module: %+v", r)
			}
			r = run(t.Context(), "", "inspect", wasm)
			if r.code != 0 || !regexp.MustCompile(`(?m)^create +create +widgets\.v1\.demo\.example\.com`).MatchString(r.out) {
				t.Errorf("inspect of the generated module: %+v", r)
			}
			obj := writeFile(t, t.TempDir(), "obj.yaml", "apiVersion: demo.example.com/v1\nkind: Widget\nmetadata: {name: world, namespace: default}\nspec: {greeting: Hello}\n")
			r = run(t.Context(), "", "invoke", wasm, "--handler", "create", "--object", obj, "-q")
			if r.code != 0 || !strings.Contains(r.out, `Result:   {"message":"Hello, world"}`) {
				t.Errorf("invoke of the generated module: %+v", r)
			}
			crd, err := os.ReadFile(filepath.Join(dir, "crd.yaml"))
			if err != nil || !strings.Contains(string(crd), "name: widgets.demo.example.com") {
				t.Errorf("crd.yaml: %s (%v)", crd, err)
			}
		})
	}
}

// TestBuildCompiler: --compiler takes go or tinygo, tinygo only for a Go
// module, and a missing TinyGo is one line that names hack/tinygo.sh.
func TestBuildCompiler(t *testing.T) {
	goMod := t.TempDir()
	writeFile(t, goMod, "go.mod", "module plain\n\ngo 1.24\n")
	rust := t.TempDir()
	writeFile(t, rust, "Cargo.toml", "[package]\nname = \"x\"\n")
	t.Setenv("KOPF_WASM_CACHE", t.TempDir()) // no TinyGo built there
	t.Setenv("KOPF_WASM_TINYGO", "")
	t.Setenv("PATH", t.TempDir()) // nor on PATH
	for _, tt := range []struct {
		name, dir, compiler string
		code                int
		want                string
	}{
		{"unknown compiler", goMod, "gcc", 2, `Error: build: unknown compiler "gcc"; use --compiler go or --compiler tinygo`},
		{"tinygo for rust", rust, "tinygo", 2, "Error: build: --compiler tinygo builds Go modules, and " + rust + " is a rust module; leave --compiler out"},
		{"no tinygo", goMod, "tinygo", 1, "Error: build: TinyGo is not installed; run CI=true hack/tinygo.sh in a kopf-wasm checkout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t.Context(), "", "build", tt.dir, "--compiler", tt.compiler)
			if r.code != tt.code || !strings.Contains(r.errOut, tt.want) || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 {
				t.Errorf("build --compiler %s: %+v; want exit %d and one line with %q", tt.compiler, r, tt.code, tt.want)
			}
		})
	}
}

// TestInitNeedsSDK: a Rust or AssemblyScript module outside a checkout,
// without --sdk, is a usage error.
func TestInitNeedsSDK(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "op")
	r := run(t.Context(), "", "init", dir, "--lang", "rust")
	if r.code != 2 || !strings.Contains(r.errOut, "needs a kopf-wasm checkout's guest SDK") {
		t.Errorf("init --lang rust without an SDK: %+v", r)
	}
	r = run(t.Context(), "", "init", dir, "--lang", "cobol")
	if r.code != 2 || !strings.Contains(r.errOut, `language "cobol": use go, rust, assemblyscript`) {
		t.Errorf("init --lang cobol: %+v", r)
	}
}

// needToolchain fails the test, with hack/guest-toolchains.sh's one line,
// when the language's toolchain is missing (Go's is the test's own).
func needToolchain(t *testing.T, root, lang string) {
	t.Helper()
	if lang == "go" {
		if _, err := exec.LookPath("go"); err != nil {
			t.Fatal("no go on PATH: this test builds a module; install Go")
		}
		return
	}
	out, err := exec.Command(filepath.Join(root, "hack", "guest-toolchains.sh"), "check", lang).CombinedOutput()
	if err != nil {
		t.Fatalf("%s (%v)", strings.TrimSpace(string(out)), err)
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
