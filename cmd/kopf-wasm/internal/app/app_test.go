package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// result is what one CLI run left behind.
type result struct {
	code        int
	out, errOut string
}

// run runs the CLI in-process with stdin.
func run(ctx context.Context, stdin string, args ...string) result {
	var out, errOut bytes.Buffer
	code := Run(ctx, Streams{In: strings.NewReader(stdin), Out: &out, Err: &errOut}, args)
	return result{code: code, out: out.String(), errOut: errOut.String()}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// unreachableKubeconfig points at a port where nothing listens.
const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

const exampleObject = `apiVersion: kopf.dev/v1
kind: KopfExample
metadata:
  name: kopf-example-1
  namespace: default
spec:
  field: value
`

func TestVersion(t *testing.T) {
	defer func(old string) { version = old }(version)
	version = "v1.2.3"
	if r := run(t.Context(), "", "version"); r.code != 0 || r.out != "kopf-wasm v1.2.3\n" {
		t.Errorf("version: %+v", r)
	}
}

// TestBadInput: every mistake is one line on stderr that says what to do,
// with a non-zero exit code, and no stack trace.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KOPF_WASM_CACHE", dir) // compile each module once
	good := wasmtest.Path(t, "testguests/good")
	example := wasmtest.Path(t, "kopfexample")
	wrongABI := wasmtest.Path(t, "testguests/wrongabi")
	notWasm := writeFile(t, dir, "notwasm.wasm", "hello, I am text")
	unreachable := writeFile(t, dir, "unreachable.kubeconfig", unreachableKubeconfig)
	garbage := writeFile(t, dir, "garbage.kubeconfig", "{{{ not yaml")
	obj := writeFile(t, dir, "obj.yaml", exampleObject)
	notObject := writeFile(t, dir, "list.yaml", "- a\n- b\n")
	nonEmpty := t.TempDir()
	writeFile(t, nonEmpty, "x", "")
	unknownKey := writeFile(t, dir, "unknown.yaml", "execution:\n  wrokers: 2\n")
	wrongType := writeFile(t, dir, "type.yaml", "execution:\n  workers: many\n")
	outOfRange := writeFile(t, dir, "range.yaml", "execution:\n  workers: 0\n")
	// A Go module, which build recognises by its go.mod.
	goModule := t.TempDir()
	writeFile(t, goModule, "go.mod", "module m\n\ngo 1.24\n")
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, want: `unknown command "frobnicate"`},
		{name: "unknown flag", args: []string{"run", "--bogus", good}, code: 2, want: "unknown flag: --bogus; see 'kopf-wasm run --help'"},
		{name: "run without modules", args: []string{"run"}, code: 2, want: "missing MODULE"},
		{name: "-n with -A", args: []string{"run", "-n", "a", "-A", good}, code: 2, want: "exclude each other"},
		{name: "-A from the environment with -n", env: map[string]string{"KOPF_WASM_ALL_NAMESPACES": "true"},
			args: []string{"run", "-n", "a", good}, code: 2, want: "exclude each other"},
		{name: "standalone with peering", args: []string{"run", "--standalone", "-P", "default", good}, code: 2,
			want: "--standalone and -P/--peering exclude each other; pass one of them"},
		{name: "lease namespace without leader election", args: []string{"run", "--leader-elect-namespace", "ops", good}, code: 2,
			want: "--leader-elect-namespace needs --leader-elect"},
		{name: "freeze without peering", args: []string{"freeze", "--lifetime", "10"}, code: 2, want: "no peering given; pass --peering NAME"},
		{name: "freeze without lifetime", args: []string{"freeze", "-P", "default"}, code: 2, want: "no lifetime given"},
		{name: "resume without peering", args: []string{"resume", "-A"}, code: 2, want: "no peering given"},
		{name: "freeze -n with -A", args: []string{"freeze", "-P", "x", "-t", "5", "-n", "a", "-A"}, code: 2, want: "exclude each other"},
		{name: "bad log format", args: []string{"run", "--log-format", "xml", good}, code: 2, want: "unknown log format"},
		{name: "bad namespace pattern", args: []string{"run", "-n", "[a", "--kubeconfig", unreachable, good}, code: 2, want: "[a"},
		{name: "bad liveness", args: []string{"run", "-L", "8080", "--kubeconfig", unreachable, good}, code: 2, want: "http://0.0.0.0:8080/healthz"},
		{name: "config with an unknown key", args: []string{"run", "--config", unknownKey, "--kubeconfig", unreachable, good}, code: 2,
			want: "Error: config " + unknownKey + ": execution.wrokers: unknown execution setting (known: defaultBackoff, workers, maxDaemons, cancellationPolling, probeCache, indexInline, timerStopWait)"},
		{name: "config with a wrong type", args: []string{"run", "--config", wrongType, "--kubeconfig", unreachable, good}, code: 2,
			want: "Error: config " + wrongType + `: execution.workers: want an integer, got "many"`},
		{name: "config with a value out of range", args: []string{"run", "--config", outOfRange, "--kubeconfig", unreachable, good}, code: 2,
			want: "Error: config " + outOfRange + ": execution.workers: must be at least 1, got 0"},
		{name: "config from the environment", env: map[string]string{"KOPF_WASM_CONFIG": outOfRange},
			args: []string{"run", "--kubeconfig", unreachable, good}, code: 2, want: "execution.workers: must be at least 1"},
		{name: "missing config", args: []string{"run", "--config", filepath.Join(dir, "nope.yaml"), good}, code: 2,
			want: "config " + filepath.Join(dir, "nope.yaml") + ": open"},
		{name: "missing kubeconfig", args: []string{"run", "--kubeconfig", filepath.Join(dir, "nope"), good}, code: 1,
			want: "does not exist; pass a readable kubeconfig"},
		{name: "unreadable kubeconfig", args: []string{"run", "--kubeconfig", garbage, good}, code: 1, want: "kubeconfig"},
		{name: "kubeconfig from the environment", env: map[string]string{"KOPF_WASM_KUBECONFIG": filepath.Join(dir, "nope")},
			args: []string{"run", good}, code: 1, want: "does not exist"},
		{name: "unreachable cluster", args: []string{"run", "--kubeconfig", unreachable, good}, code: 1,
			want: "https://127.0.0.1:1"},
		{name: "unknown context", args: []string{"run", "--kubeconfig", unreachable, "--context", "nope", good}, code: 1,
			want: `context "nope"`},
		{name: "run a file that is not wasm", args: []string{"run", "--kubeconfig", unreachable, notWasm}, code: 1, want: "not a WebAssembly module"},
		{name: "run a missing module", args: []string{"run", "--kubeconfig", unreachable, filepath.Join(dir, "nope.wasm")}, code: 1,
			want: "no such file or folder"},
		{name: "inspect a file that is not wasm", args: []string{"inspect", notWasm}, code: 1, want: "not a WebAssembly module"},
		{name: "inspect another ABI", args: []string{"inspect", wrongABI}, code: 1, want: "rebuild the module with a guest SDK for ABI v1"},
		{name: "inspect -o yaml", args: []string{"inspect", "-o", "yaml", example}, code: 2, want: "use -o table or -o json"},
		{name: "invoke a missing handler", args: []string{"invoke", example, "--handler", "nope", "--object", obj}, code: 2,
			want: `no such handler "nope": the module has create_fn, delete_fn, update_fn`},
		{name: "invoke without --handler", args: []string{"invoke", example, "--object", obj}, code: 2, want: "name one with --handler"},
		{name: "invoke without --object", args: []string{"invoke", example, "--handler", "create_fn"}, code: 2, want: "pass --object FILE"},
		{name: "invoke a missing object", args: []string{"invoke", example, "--handler", "create_fn", "--object", filepath.Join(dir, "nope")},
			code: 1, want: "no such file"},
		{name: "invoke a list", args: []string{"invoke", example, "--handler", "create_fn", "--object", notObject}, code: 1,
			want: "is not a YAML or JSON object"},
		{name: "build a missing folder", args: []string{"build", filepath.Join(dir, "nope")}, code: 2, want: "is not a folder"},
		{name: "build without go", env: map[string]string{"PATH": dir}, args: []string{"build", goModule}, code: 1,
			want: "the go command is not on PATH; install Go"},
		{name: "build a folder of no known language", args: []string{"build", dir}, code: 2,
			want: "holds no go.mod or .go files, Cargo.toml, asconfig.json, or .py files"},
		{name: "init into a non-empty folder", args: []string{"init", nonEmpty, "--sdk", dir}, code: 2, want: "not the kopf-wasm guest SDK"},
		{name: "init a bad kind", args: []string{"init", filepath.Join(dir, "new"), "--kind", "lower"}, code: 2, want: `kind "lower"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			r := run(t.Context(), "", tt.args...)
			lines := strings.Split(strings.TrimSuffix(r.errOut, "\n"), "\n")
			if r.code != tt.code || !strings.Contains(r.errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.errOut, tt.code, tt.want)
			}
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Error: ") || strings.Contains(r.errOut, "goroutine ") {
				t.Errorf("stderr %q: want it to end in one line starting with Error:, and no stack trace", r.errOut)
			}
			if tt.code == 2 && len(lines) != 1 {
				t.Errorf("usage error printed %d lines: %q", len(lines), r.errOut)
			}
		})
	}
}
