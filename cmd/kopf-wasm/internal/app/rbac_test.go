package app

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

func TestRBACOutput(t *testing.T) {
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	mod := wasmtest.Path(t, "kopfexample")
	r := run(t.Context(), "", "rbac", mod)
	for _, want := range []string{"kind: ServiceAccount\n", "kind: ClusterRole\n", "kind: ClusterRoleBinding\n",
		"name: kopf-wasm-kopfexample\n", "  - kopfexamples/status\n", "---\n"} {
		if r.code != 0 || !strings.Contains(r.out, want) {
			t.Errorf("rbac: %+v; want %q in stdout", r, want)
		}
	}
	r = run(t.Context(), "", "rbac", "-n", "team-a", "--name", "ops", "-o", "json", mod)
	var list struct {
		Kind  string
		Items []struct {
			Kind     string
			Metadata struct{ Name, Namespace string }
		}
	}
	if err := json.Unmarshal([]byte(r.out), &list); err != nil || r.code != 0 || list.Kind != "List" || len(list.Items) != 3 {
		t.Fatalf("rbac -o json: %+v (%v)", r, err)
	}
	for i, kind := range []string{"ServiceAccount", "Role", "RoleBinding"} {
		if it := list.Items[i]; it.Kind != kind || it.Metadata.Name != "ops" || it.Metadata.Namespace != "team-a" {
			t.Errorf("item %d: %+v; want a %s ops in team-a", i, it, kind)
		}
	}
}

// The peering rules follow --standalone; --webhook-cert-secret adds a
// Role and RoleBinding in the Secret's namespace.
func TestRBACHostFeatures(t *testing.T) {
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	mod := wasmtest.Path(t, "kopfexample")
	tests := []struct {
		args         []string
		want, absent []string
	}{
		{nil, []string{"  - clusterkopfpeerings\n  - kopfpeerings\n", "  - zalando.org\n"}, []string{"secrets"}},
		{[]string{"--standalone"}, nil, []string{"kopfpeerings", "secrets"}},
		{[]string{"--webhook-cert-secret", "kopf-wasm/webhook-cert"},
			[]string{"kind: Role\n", "name: kopf-wasm-kopfexample-webhook-cert\n", "  namespace: kopf-wasm\n", "  resourceNames:\n  - webhook-cert\n", "kind: RoleBinding\n"}, nil},
	}
	for _, tt := range tests {
		r := run(t.Context(), "", append(append([]string{"rbac"}, tt.args...), mod)...)
		if r.code != 0 {
			t.Fatalf("rbac %v: %+v", tt.args, r)
		}
		for _, w := range tt.want {
			if !strings.Contains(r.out, w) {
				t.Errorf("rbac %v: no %q in\n%s", tt.args, w, r.out)
			}
		}
		for _, a := range tt.absent {
			if strings.Contains(r.out, a) {
				t.Errorf("rbac %v: %q in\n%s", tt.args, a, r.out)
			}
		}
	}
}

// TestRBACBadInput: each mistake is one line on stderr, with the exit code
// of a usage error (2) or of a failure (1).
func TestRBACBadInput(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KOPF_WASM_CACHE", dir)
	mod := wasmtest.Path(t, "kopfexample")
	notWasm := writeFile(t, dir, "notwasm.wasm", "hello, I am text")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no modules", []string{"rbac"}, 2, "missing MODULE"},
		{"namespace and cluster", []string{"rbac", "-n", "a", "--cluster", mod}, 2, "--namespace and --cluster exclude each other"},
		{"a namespace pattern", []string{"rbac", "-n", "team-*", mod}, 2, "a Role lives in one namespace; pass a plain namespace name, or --cluster"},
		{"a bad namespace", []string{"rbac", "-n", "Team_A", mod}, 2, `--namespace "Team_A"`},
		{"a bad service account namespace", []string{"rbac", "--service-account-namespace", "x.y", mod}, 2, "--service-account-namespace"},
		{"a bad name", []string{"rbac", "--name", "Not/Valid", mod}, 2, `name "Not/Valid"`},
		{"a bad format", []string{"rbac", "-o", "table", mod}, 2, "use -o yaml or -o json"},
		{"a bad certificate Secret", []string{"rbac", "--webhook-cert-secret", "cert", mod}, 2, `--webhook-cert-secret "cert" is not NAMESPACE/NAME`},
		{"not a module", []string{"rbac", notWasm}, 1, "not a WebAssembly module"},
		{"a missing module", []string{"rbac", mod, filepath.Join(dir, "nope.wasm")}, 1, "nope.wasm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t.Context(), "", tt.args...)
			if r.code != tt.code || !strings.Contains(r.errOut, tt.want) || r.out != "" ||
				strings.Count(strings.TrimSuffix(r.errOut, "\n"), "\n") != 0 || !strings.HasPrefix(r.errOut, "Error: ") {
				t.Errorf("%+v; want exit %d, one Error line with %q, no stdout", r, tt.code, tt.want)
			}
		})
	}
}
