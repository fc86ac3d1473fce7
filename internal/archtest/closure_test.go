package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// loadClosure runs `go list -deps` on roots in the repository's root
// module and returns every package of their closure, the standard
// library's and other modules' too.
func loadClosure(t *testing.T, roots []string) []Package {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"list", "-deps", "-json=ImportPath,Imports"}, roots...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v: %s", strings.Join(roots, " "), err, strings.TrimSpace(stderr.String()))
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestHostClosure checks what the host's binaries link: the closure of
// cmd/kopf-wasm and host/... (the benchmark operator included).
func TestHostClosure(t *testing.T) {
	for _, r := range Closures {
		t.Run(r.Name, func(t *testing.T) {
			if err := r.Validate(); err != nil {
				t.Fatal(err)
			}
			pkgs := loadClosure(t, r.Roots)
			for _, want := range []string{Module + "/cmd/kopf-wasm", Module + "/host/internal/kube", "k8s.io/client-go/rest"} {
				if !slices.ContainsFunc(pkgs, func(p Package) bool { return p.ImportPath == want }) {
					t.Fatalf("go list did not report %s; the loader is broken", want)
				}
			}
			for _, v := range CheckClosure(r, pkgs) {
				t.Errorf("%v\n\trule: %s", v, r.Why)
			}
			t.Logf("checked %d packages", len(pkgs))
		})
	}
}

// TestCheckClosure feeds the checker a synthetic closure: it names the
// ways into the denied packages from the roots, not what the denied
// packages import among themselves (informers/x is reached only through
// the clientset), nor packages the roots do not reach.
func TestCheckClosure(t *testing.T) {
	const m = Module
	r := Closures[0]
	pkgs := []Package{
		{ImportPath: m + "/host/internal/kube", Imports: []string{"k8s.io/client-go/rest", "k8s.io/client-go/tools/leaderelection"}},
		{ImportPath: "k8s.io/client-go/tools/leaderelection", Imports: []string{"k8s.io/client-go/tools/leaderelection/resourcelock"}},
		{ImportPath: "k8s.io/client-go/tools/leaderelection/resourcelock", Imports: []string{"k8s.io/client-go/kubernetes/typed/coordination/v1"}},
		{ImportPath: "k8s.io/client-go/kubernetes/typed/coordination/v1", Imports: []string{"k8s.io/client-go/kubernetes/scheme"}},
		{ImportPath: "k8s.io/client-go/kubernetes/scheme", Imports: []string{"k8s.io/client-go/informers/x"}},
		{ImportPath: "k8s.io/client-go/informers/x", Imports: []string{"k8s.io/client-go/kubernetes"}},
		{ImportPath: m + "/host", Imports: []string{m + "/host/internal/kube", "sigs.k8s.io/some/helper", "k8s.io/client-go/rest"}},
		{ImportPath: "k8s.io/client-go/rest", Imports: []string{"net/http"}},
		{ImportPath: "sigs.k8s.io/some/helper", Imports: []string{"k8s.io/client-go/kubernetes"}},
		// Not reached from the roots: a dev command's import is no violation.
		{ImportPath: m + "/internal/cmd/bench", Imports: []string{"k8s.io/client-go/kubernetes"}},
	}
	var got []string
	for _, v := range CheckClosure(r, pkgs) {
		got = append(got, v.Package+" -> "+v.Import)
	}
	want := []string{
		m + "/host/internal/kube -> k8s.io/client-go/tools/leaderelection",
		"sigs.k8s.io/some/helper -> k8s.io/client-go/kubernetes",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n got %q\nwant %q", got, want)
	}
}
