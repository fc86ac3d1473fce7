package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// listing is one `go list` run: a module folder and the target it builds for.
type listing struct {
	dir  string   // relative to the repository root
	env  []string // added to the environment
	must bool     // load errors fail the test (guest modules fail natively on purpose)
}

var listings = []listing{
	{dir: ".", must: true},
	{dir: "abi", must: true},
	{dir: "guest-sdk", env: []string{"GOOS=wasip1", "GOARCH=wasm"}, must: true},
	{dir: "guest-sdk"}, // packages that also build natively (tests)
	{dir: "examples", env: []string{"GOOS=wasip1", "GOARCH=wasm"}, must: true},
}

type listedPackage struct {
	Package
	Error *struct{ Err string }
}

// load runs `go list -deps -json` (workspace-aware: go.work is honoured)
// and returns this repository's packages.
func load(dir string, env []string) (pkgs []Package, loadErrs []string, err error) {
	cmd := exec.Command("go", "list", "-e", "-deps", "-json=ImportPath,Imports,TestImports,XTestImports,Error", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go list in %s (%s): %v: %s", dir, strings.Join(env, " "), err, strings.TrimSpace(stderr.String()))
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, nil, fmt.Errorf("decoding go list output: %w", err)
		}
		if p.ImportPath != Module && !strings.HasPrefix(p.ImportPath, Module+"/") {
			continue
		}
		if p.Error != nil {
			loadErrs = append(loadErrs, p.ImportPath+": "+p.Error.Err)
		}
		pkgs = append(pkgs, p.Package)
	}
	return pkgs, loadErrs, nil
}

// loadAll merges the listings; a package listed for several targets gets
// the union of its imports.
func loadAll(t *testing.T) []Package {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*Package{}
	var order []string
	for _, l := range listings {
		if _, err := os.Stat(filepath.Join(root, l.dir, "go.mod")); err != nil {
			t.Fatalf("module %s: %v", l.dir, err)
		}
		pkgs, loadErrs, err := load(filepath.Join(root, l.dir), l.env)
		if err != nil {
			t.Fatal(err)
		}
		if l.must {
			for _, e := range loadErrs {
				t.Errorf("go list in %s: %s", l.dir, e)
			}
		}
		for _, p := range pkgs {
			q, ok := byPath[p.ImportPath]
			if !ok {
				q = &Package{ImportPath: p.ImportPath}
				byPath[p.ImportPath] = q
				order = append(order, p.ImportPath)
			}
			q.Imports = union(q.Imports, p.Imports)
			q.TestImports = union(q.TestImports, p.TestImports)
			q.XTestImports = union(q.XTestImports, p.XTestImports)
		}
	}
	var out []Package
	for _, path := range order {
		out = append(out, *byPath[path])
	}
	return out
}

// matchIsolate matches an Isolate pattern (".../engines/*"): a package
// below one of its instances.
func matchIsolate(pattern, importPath string) bool {
	_, ok := instance(pattern, importPath)
	return ok
}

func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// TestLayering checks the real import graph of every module.
func TestLayering(t *testing.T) {
	for _, r := range Rules {
		if err := r.Validate(); err != nil {
			t.Error(err)
		}
	}
	pkgs := loadAll(t)

	// The listing must have seen every module, or the rules would pass
	// vacuously.
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[p.ImportPath] = true
	}
	for _, want := range []string{
		Module + "/internal/testenv",
		Module + "/internal/archtest",
		Module + "/cmd/kopf-wasm",
		Module + "/abi",
		Module + "/guest-sdk",
	} {
		if !seen[want] {
			t.Errorf("go list did not report %s; the loader is broken", want)
		}
	}

	// Every pattern naming this repository's packages names some that
	// exist: a rule about a package that is gone or misspelt checks nothing.
	for _, r := range Rules {
		for _, pattern := range slices.Concat(r.From, r.Except, r.Deny, r.Permit, r.AllowOnly, []string{r.Isolate}) {
			if pattern == "" || !Match(Module+"/...", strings.TrimSuffix(pattern, "/...")) {
				continue
			}
			if !slices.ContainsFunc(pkgs, func(p Package) bool { return Match(pattern, p.ImportPath) || matchIsolate(pattern, p.ImportPath) }) {
				t.Errorf("rule %q names %s, which matches no package", r.Name, pattern)
			}
		}
	}

	why := map[string]string{}
	for _, r := range Rules {
		why[r.Name] = r.Why
	}
	for _, v := range Check(Rules, pkgs) {
		t.Errorf("%v\n\trule: %s", v, why[v.Rule])
	}
	t.Logf("checked %d rules on %d packages", len(Rules), len(pkgs))
}

// TestCheck feeds the checker synthetic packages, so that a rule that stops
// catching its violation fails here.
func TestCheck(t *testing.T) {
	const m = Module
	for _, tc := range []struct {
		name string
		pkg  Package
		want []string // "rule import" pairs, or none
	}{
		{
			name: "an engine imports the dynamic client",
			pkg:  Package{ImportPath: m + "/host/internal/engines/spawning", Imports: []string{"context", "k8s.io/client-go/dynamic"}},
			want: []string{"kubernetes-api-only-in-kube k8s.io/client-go/dynamic"},
		},
		{
			name: "the reactor imports rest and apimachinery's watch",
			pkg:  Package{ImportPath: m + "/host/internal/reactor", Imports: []string{"k8s.io/client-go/rest", "k8s.io/apimachinery/pkg/watch", "k8s.io/apimachinery/pkg/runtime/schema"}},
			want: []string{"kubernetes-api-only-in-kube k8s.io/apimachinery/pkg/watch", "rest-config-only-in-the-public-api k8s.io/client-go/rest"},
		},
		{
			name: "informer cache subpackage outside kube",
			pkg:  Package{ImportPath: m + "/host", Imports: []string{"k8s.io/client-go/tools/cache/synctrack"}},
			want: []string{"kubernetes-api-only-in-kube k8s.io/client-go/tools/cache/synctrack"},
		},
		{
			name: "kube may use client-go",
			pkg:  Package{ImportPath: m + "/host/internal/kube/informers", Imports: []string{"k8s.io/client-go/dynamic", "k8s.io/client-go/tools/cache", "k8s.io/client-go/tools/watch"}},
		},
		{
			name: "testenv and dev commands may use rest and envtest",
			pkg:  Package{ImportPath: m + "/internal/testenv", Imports: []string{"k8s.io/client-go/rest", "sigs.k8s.io/controller-runtime/pkg/envtest"}},
		},
		{
			name: "tests may use clients",
			pkg:  Package{ImportPath: m + "/host/internal/reactor", TestImports: []string{"k8s.io/client-go/dynamic"}, XTestImports: []string{m + "/internal/testenv"}},
		},
		{
			name: "production code imports testenv and envtest",
			pkg:  Package{ImportPath: m + "/host/internal/registry", Imports: []string{m + "/internal/testenv", "sigs.k8s.io/controller-runtime/pkg/envtest"}},
			want: []string{"controller-runtime-only-in-test-helpers sigs.k8s.io/controller-runtime/pkg/envtest", "testenv-not-in-production-code " + m + "/internal/testenv"},
		},
		{
			name: "execution imports wazero and extism",
			pkg:  Package{ImportPath: m + "/host/internal/execution", Imports: []string{"github.com/tetratelabs/wazero/api", "github.com/extism/go-sdk"}},
			want: []string{"wasm-runtime-only-in-wasmrt github.com/extism/go-sdk", "wasm-runtime-only-in-wasmrt github.com/tetratelabs/wazero/api"},
		},
		{
			name: "wasmrt may import wazero and extism",
			pkg:  Package{ImportPath: m + "/host/internal/wasmrt", Imports: []string{"github.com/tetratelabs/wazero", "github.com/extism/go-sdk"}},
		},
		{
			name: "the host package imports oras-go and go-containerregistry",
			pkg:  Package{ImportPath: m + "/host", Imports: []string{"oras.land/oras-go/v2/registry/remote", "github.com/google/go-containerregistry/pkg/registry"}},
			want: []string{"oci-registries-only-in-oci github.com/google/go-containerregistry/pkg/registry", "oci-registries-only-in-oci oras.land/oras-go/v2/registry/remote"},
		},
		{
			name: "oci may import oras-go, and tests may run a registry",
			pkg:  Package{ImportPath: m + "/host/internal/oci", Imports: []string{"oras.land/oras-go/v2"}, XTestImports: []string{"github.com/google/go-containerregistry/pkg/registry"}},
		},
		{
			name: "oci imports the reactor",
			pkg:  Package{ImportPath: m + "/host/internal/oci", Imports: []string{m + "/host/internal/reactor"}},
			want: []string{"lower-layers-do-not-import-upper-layers " + m + "/host/internal/reactor"},
		},
		{
			name: "a host test compiles go-pdk natively",
			pkg:  Package{ImportPath: m + "/host/internal/wasmrt", TestImports: []string{"github.com/extism/go-pdk"}},
			want: []string{"host-never-compiles-guest-code github.com/extism/go-pdk"},
		},
		{
			name: "abi imports a third-party package",
			pkg:  Package{ImportPath: m + "/abi", Imports: []string{"encoding/json", "sigs.k8s.io/yaml"}},
			want: []string{"abi-stdlib-only sigs.k8s.io/yaml"},
		},
		{
			name: "abi's tests count too",
			pkg:  Package{ImportPath: m + "/abi/internal/x", XTestImports: []string{m + "/abi/internal/x", "github.com/google/go-cmp/cmp"}},
			want: []string{"abi-stdlib-only github.com/google/go-cmp/cmp"},
		},
		{
			name: "abi imports the guest SDK",
			pkg:  Package{ImportPath: m + "/abi", Imports: []string{m + "/guest-sdk"}},
			want: []string{"abi-stdlib-only " + m + "/guest-sdk"},
		},
		{
			name: "guest-sdk uses abi and go-pdk",
			pkg:  Package{ImportPath: m + "/guest-sdk", Imports: []string{"encoding/json", m + "/abi", "github.com/extism/go-pdk", m + "/guest-sdk/internal/hostcall"}},
		},
		{
			name: "guest-sdk imports client-go",
			pkg:  Package{ImportPath: m + "/guest-sdk/internal/hostcall", Imports: []string{"k8s.io/apimachinery/pkg/apis/meta/v1"}},
			want: []string{"guest-sdk-imports-abi-and-go-pdk-only k8s.io/apimachinery/pkg/apis/meta/v1"},
		},
		{
			name: "settings imports kube and client-go",
			pkg:  Package{ImportPath: m + "/host/settings", Imports: []string{"time", "sigs.k8s.io/yaml", m + "/host/internal/kube", "k8s.io/apimachinery/pkg/util/yaml"}},
			want: []string{"settings-is-a-leaf " + m + "/host/internal/kube", "settings-is-a-leaf k8s.io/apimachinery/pkg/util/yaml"},
		},
		{
			name: "wasmrt and kube read the settings",
			pkg:  Package{ImportPath: m + "/host/internal/kube", Imports: []string{m + "/host/settings", "k8s.io/client-go/dynamic"}},
		},
		{
			name: "persistence imports kube",
			pkg:  Package{ImportPath: m + "/host/internal/persistence", Imports: []string{m + "/host/internal/kube"}},
			want: []string{"persistence-does-not-import-kube " + m + "/host/internal/kube"},
		},
		{
			name: "one engine imports another",
			pkg:  Package{ImportPath: m + "/host/internal/engines/peering/lease", Imports: []string{m + "/host/internal/engines/peering", m + "/host/internal/engines/admission/webhook"}},
			want: []string{"engines-do-not-import-each-other " + m + "/host/internal/engines/admission/webhook"},
		},
		{
			name: "a lower layer imports an upper one",
			pkg:  Package{ImportPath: m + "/host/internal/kube", Imports: []string{m + "/host/internal/reactor", m + "/abi"}},
			want: []string{"lower-layers-do-not-import-upper-layers " + m + "/host/internal/reactor"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range Check(Rules, []Package{tc.pkg}) {
				got = append(got, v.Rule+" "+v.Import)
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("violations:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"k8s.io/client-go/rest/...", "k8s.io/client-go/rest", true},
		{"k8s.io/client-go/rest/...", "k8s.io/client-go/rest/watch", true},
		{"k8s.io/client-go/rest/...", "k8s.io/client-go/restmapper", false},
		{"k8s.io/client-go/rest", "k8s.io/client-go/rest/watch", false},
		{"github.com/tetratelabs/wazero*/...", "github.com/tetratelabs/wazero-extra/x", true},
		{"a/*/c", "a/b/c", true},
		{"a/*/c", "a/b/x/c", false},
		{"std", "encoding/json", true},
		{"std", "unsafe", true},
		{"std", "C", false},
		{"std", "github.com/x/y", false},
		{"std", "golang.org/x/mod", false},
	} {
		if got := Match(tc.pattern, tc.path); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Rule{Name: "r", Why: "w", From: []string{"a/..."}, Deny: []string{"b"}}
	for _, tc := range []struct {
		name string
		edit func(*Rule)
		bad  bool
	}{
		{"valid", func(*Rule) {}, false},
		{"no why", func(r *Rule) { r.Why = "" }, true},
		{"constrains nothing", func(r *Rule) { r.Deny = nil }, true},
		{"dots in the middle", func(r *Rule) { r.Deny = []string{"a/.../b"} }, true},
		{"bad glob", func(r *Rule) { r.From = []string{"a/[b"} }, true},
		{"isolate without star", func(r *Rule) { r.Isolate = "a/b" }, true},
	} {
		r := ok
		tc.edit(&r)
		if err := r.Validate(); (err != nil) != tc.bad {
			t.Errorf("%s: Validate() = %v, want error %v", tc.name, err, tc.bad)
		}
	}
}
