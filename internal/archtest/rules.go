// Package archtest enforces the layering rules of DESIGN.md on the import
// graph that `go list -deps -json` reports for every module of the
// workspace. The rules are the [Rules] table: a package added later under a
// folder a rule names is covered without touching the test.
//
// Patterns are import paths whose elements may use path.Match syntax (so
// "*" matches one element), ending optionally in "/..." for "this package
// and everything below it"; the pattern "std" matches the standard library.
//
// Rules look at direct imports of non-test files; a rule with Tests set also
// looks at the imports of _test.go files. What a package imports indirectly
// is the business of the rules of the packages in between.
package archtest

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Module is the root module's path; the abi, guest-sdk and examples modules
// live below it.
const Module = "github.com/kopf-wasm/kopf-wasm"

const (
	root     = Module + "/..."
	abi      = Module + "/abi/..."
	guestSDK = Module + "/guest-sdk/..."
	examples = Module + "/examples/..."
	kube     = Module + "/host/internal/kube/..."
	wasmrt   = Module + "/host/internal/wasmrt/..."
	oci      = Module + "/host/internal/oci/..."
	imageCLI = Module + "/internal/imagebake/..."
	testEnv  = Module + "/internal/testenv/..."
	devCmds  = Module + "/internal/cmd/..."
)

// guestModules are compiled for wasip1 only and have their own rules.
var guestModules = []string{abi, guestSDK, examples}

// Rules is the layering of DESIGN.md. Exemptions are listed with the reason
// in each rule's Why.
var Rules = []Rule{
	{
		Name: "kubernetes-api-only-in-kube",
		Why: "one place talks to the Kubernetes API (host/internal/kube). Exempt: internal/testenv and internal/cmd/... " +
			"(the test control plane and dev commands need a rest config) and _test files (tests set up fixtures with clients); " +
			"the public host package may name a *rest.Config (an embedder's cluster), nothing else of client-go",
		From:   []string{root},
		Except: append([]string{kube, testEnv, devCmds}, guestModules...),
		Deny: []string{
			"k8s.io/client-go/dynamic/...",
			"k8s.io/client-go/rest/...",
			"k8s.io/client-go/tools/cache/...",
			"k8s.io/client-go/tools/watch/...",
			"k8s.io/client-go/tools/clientcmd/...",
			"k8s.io/client-go/kubernetes/...",
			"k8s.io/client-go/informers/...",
			"k8s.io/client-go/discovery/...",
			"k8s.io/apimachinery/pkg/watch/...",
		},
		Permit: []string{"k8s.io/client-go/rest"},
	},
	{
		Name:   "rest-config-only-in-the-public-api",
		Why:    "the public host package accepts a *rest.Config (Options.RestConfig); below it only host/internal/kube uses client-go's rest",
		From:   []string{root},
		Except: append([]string{kube, testEnv, devCmds, Module + "/host"}, guestModules...),
		Deny:   []string{"k8s.io/client-go/rest"},
	},
	{
		Name:   "controller-runtime-only-in-test-helpers",
		Why:    "the host uses client-go itself; envtest is for internal/testenv, internal/cmd/... and tests",
		From:   []string{root},
		Except: append([]string{testEnv, devCmds}, guestModules...),
		Deny:   []string{"sigs.k8s.io/controller-runtime/..."},
	},
	{
		Name:   "testenv-not-in-production-code",
		Why:    "internal/testenv starts processes for tests; only tests and internal/cmd/... may use it",
		From:   []string{root},
		Except: append([]string{testEnv, devCmds}, guestModules...),
		Deny:   []string{testEnv},
	},
	{
		Name:   "wasm-runtime-only-in-wasmrt",
		Why:    "one place touches wasm memory (host/internal/wasmrt). Exempt: _test files",
		From:   []string{root},
		Except: append([]string{wasmrt}, guestModules...),
		Deny:   []string{"github.com/tetratelabs/wazero/...", "github.com/extism/..."},
	},
	{
		Name:   "oci-registries-only-in-oci",
		Why:    "one place talks to OCI registries (host/internal/oci); the CLI's image builder (internal/imagebake) pushes the host's own images. Exempt: _test files (they run an in-process registry)",
		From:   []string{root},
		Except: append([]string{oci, imageCLI}, guestModules...),
		Deny:   []string{"oras.land/...", "github.com/google/go-containerregistry/..."},
	},
	{
		Name:   "host-never-compiles-guest-code",
		Why:    "go-pdk and guest code only build for wasip1; the host's native `go test ./...` must not reach them. Permitted: guest-sdk/python, which only embeds the Python SDK's files for `kopf-wasm build`",
		From:   []string{root},
		Except: guestModules,
		Deny:   []string{"github.com/extism/go-pdk/...", guestSDK, examples},
		Permit: []string{Module + "/guest-sdk/python"},
		Tests:  true,
	},
	{
		Name:      "python-sdk-files-only",
		Why:       "the host's CLI imports guest-sdk/python for its embedded Python files; it must stay a package of files that builds anywhere",
		From:      []string{Module + "/guest-sdk/python"},
		AllowOnly: []string{"std"},
	},
	{
		Name:      "abi-stdlib-only",
		Why:       "abi is the contract every guest language and the host share; it imports the standard library only",
		From:      []string{abi},
		AllowOnly: []string{"std", abi},
		Tests:     true,
	},
	{
		Name:      "guest-sdk-imports-abi-and-go-pdk-only",
		Why:       "the guest SDK stays small and portable: abi, go-pdk and the standard library",
		From:      []string{guestSDK},
		AllowOnly: []string{"std", abi, guestSDK, "github.com/extism/go-pdk/..."},
	},
	{
		Name: "settings-is-a-leaf",
		Why: "every layer reads its values from host/settings (DESIGN.md: one source of defaults), so settings imports " +
			"nothing of the host: the standard library and its YAML decoder only",
		From:      []string{Module + "/host/settings/..."},
		AllowOnly: []string{"std", Module + "/host/settings/...", "sigs.k8s.io/yaml/..."},
	},
	{
		Name:      "certs-is-a-leaf",
		Why:       "the TLS certificates of the admission webhooks and of the metrics server are one leaf package both use (neither borrows the other's)",
		From:      []string{Module + "/host/internal/certs/..."},
		AllowOnly: []string{"std"},
	},
	{
		Name:      "hosterr-is-a-leaf",
		Why:       "the host's error classes are shared by the public host package and host/internal; they import nothing",
		From:      []string{Module + "/host/internal/hosterr/..."},
		AllowOnly: []string{"std"},
	},
	{
		Name: "persistence-does-not-import-kube",
		Why:  "persistence builds patches; kube applies them",
		From: []string{Module + "/host/internal/persistence/..."},
		Deny: []string{kube},
	},
	{
		Name:    "engines-do-not-import-each-other",
		Why:     "engines (spawning, admission, peering, ...) are independent; what they share lives in a lower layer",
		From:    []string{Module + "/host/internal/engines/*/..."},
		Isolate: Module + "/host/internal/engines/*",
	},
	{
		Name: "host-internal-does-not-import-host",
		Why: "the public package host is a thin layer over host/internal (oras's layout): what a running operator does " +
			"lives below it and never calls back up",
		From: []string{Module + "/host/internal/..."},
		Deny: []string{Module + "/host"},
	},
	{
		Name: "cli-uses-the-public-host",
		Why: "cmd/ reaches the host through its public API (host) and the module-root internal/ packages it shares " +
			"with host; host/internal is the host's own (Go forbids the import too; this names the layering)",
		From: []string{Module + "/cmd/..."},
		Deny: []string{Module + "/host/internal/..."},
	},
	{
		Name: "shared-internal-stays-below-the-host-internals",
		Why: "module-root internal/ packages used by production code (cachedir, webhookname, imagebake) are shared by " +
			"cmd/ and host/: they may use the public host, never host/internal",
		From: []string{Module + "/internal/cachedir/...", Module + "/internal/webhookname/...", imageCLI},
		Deny: []string{Module + "/host/internal/..."},
	},
	{
		Name: "lower-layers-do-not-import-upper-layers",
		Why:  "wasmrt, kube, oci, persistence, settings and objects sit below execution, registry, engines, reactor and host",
		From: []string{
			wasmrt, kube, oci,
			Module + "/host/internal/persistence/...",
			Module + "/host/settings/...",
			Module + "/host/internal/objects/...",
		},
		Deny: []string{
			Module + "/host",
			Module + "/host/internal/execution/...",
			Module + "/host/internal/registry/...",
			Module + "/host/internal/engines/...",
			Module + "/host/internal/reactor/...",
		},
	},
}

// Closures are rules on what the host's binaries link: a package they
// deny may not be anywhere in the dependency closure of the roots, however
// indirectly it is imported (the Rules above see direct imports only).
var Closures = []ClosureRule{
	{
		Name: "host-links-no-typed-clientset",
		Why: "client-go's typed clientset (k8s.io/client-go/kubernetes: every built-in API group's client and scheme, " +
			"with kube-openapi and go-restful) made kopf-wasm 80 MB instead of 53 and cost a one-module host 11 MB of " +
			"resident binary pages (docs/benchmarks/density.md); tools/leaderelection reaches it through resourcelock, so the host elects " +
			"with host/internal/kube/elector.go. Dev commands (internal/cmd/...) and tests may use the clientset",
		Roots: []string{Module + "/cmd/kopf-wasm", Module + "/host/..."},
		Deny:  []string{"k8s.io/client-go/kubernetes/...", "k8s.io/client-go/tools/leaderelection/..."},
	},
}

// Rule constrains the imports of the packages matching From and not Except.
type Rule struct {
	Name string
	Why  string
	// From selects the packages the rule constrains; Except removes some.
	From, Except []string
	// Deny lists imports that are violations; Permit removes some.
	Deny, Permit []string
	// AllowOnly, when not empty, makes every import that matches none of
	// its patterns a violation.
	AllowOnly []string
	// Isolate is a pattern with a "*" element, e.g. ".../engines/*": a
	// package below one match may not import a package below another.
	Isolate string
	// Tests also checks the imports of the package's _test.go files.
	Tests bool
}

// Package is the part of `go list -json` output the rules need.
type Package struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// Violation is one import that breaks one rule.
type Violation struct {
	Rule, Package, Import string
	Test                  bool // the import is in a _test.go file
}

func (v Violation) String() string {
	where := v.Package
	if v.Test {
		where += " (test)"
	}
	return fmt.Sprintf("%s: %s imports %s", v.Rule, where, v.Import)
}

// Check returns the violations of rules in pkgs, sorted.
func Check(rules []Rule, pkgs []Package) []Violation {
	var out []Violation
	for _, r := range rules {
		for _, p := range pkgs {
			if !matchAny(r.From, p.ImportPath) || matchAny(r.Except, p.ImportPath) {
				continue
			}
			check := func(imports []string, test bool) {
				for _, imp := range imports {
					if imp == p.ImportPath || strings.HasSuffix(imp, ".test") {
						continue
					}
					if r.breaks(p.ImportPath, imp) {
						out = append(out, Violation{Rule: r.Name, Package: p.ImportPath, Import: imp, Test: test})
					}
				}
			}
			check(p.Imports, false)
			if r.Tests {
				check(p.TestImports, true)
				// An external test package imports the package it tests.
				check(without(p.XTestImports, p.ImportPath), true)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func (r Rule) breaks(pkg, imp string) bool {
	if matchAny(r.Deny, imp) && !matchAny(r.Permit, imp) {
		return true
	}
	if len(r.AllowOnly) > 0 && !matchAny(r.AllowOnly, imp) {
		return true
	}
	if r.Isolate != "" {
		from, ok1 := instance(r.Isolate, pkg)
		to, ok2 := instance(r.Isolate, imp)
		if ok1 && ok2 && from != to {
			return true
		}
	}
	return false
}

// Validate reports malformed patterns, so that a typo cannot make a rule
// silently match nothing.
func (r Rule) Validate() error {
	if r.Name == "" || r.Why == "" || len(r.From) == 0 {
		return fmt.Errorf("rule %q: Name, Why and From are required", r.Name)
	}
	if len(r.Deny) == 0 && len(r.AllowOnly) == 0 && r.Isolate == "" {
		return fmt.Errorf("rule %q constrains nothing: set Deny, AllowOnly or Isolate", r.Name)
	}
	all := append(append(append(append([]string{}, r.From...), r.Except...), r.Deny...), r.AllowOnly...)
	if r.Isolate != "" {
		if !strings.Contains(r.Isolate, "*") || strings.HasSuffix(r.Isolate, "...") {
			return fmt.Errorf("rule %q: Isolate %q needs a * element and no /...", r.Name, r.Isolate)
		}
		all = append(all, r.Isolate)
	}
	for _, p := range all {
		if p == "std" {
			continue
		}
		if p == "" || strings.Contains(strings.TrimSuffix(p, "/..."), "...") {
			return fmt.Errorf("rule %q: bad pattern %q (\"...\" only as a final /... element)", r.Name, p)
		}
		for _, el := range strings.Split(strings.TrimSuffix(p, "/..."), "/") {
			if _, err := path.Match(el, ""); err != nil || el == "" {
				return fmt.Errorf("rule %q: bad pattern %q", r.Name, p)
			}
		}
	}
	return nil
}

func matchAny(patterns []string, importPath string) bool {
	for _, p := range patterns {
		if Match(p, importPath) {
			return true
		}
	}
	return false
}

// Match reports whether importPath matches pattern (see the package comment).
func Match(pattern, importPath string) bool {
	if pattern == "std" {
		return IsStd(importPath)
	}
	_, ok := matchPrefix(strings.TrimSuffix(pattern, "/..."), importPath, strings.HasSuffix(pattern, "/..."))
	return ok
}

// matchPrefix matches the elements of pattern against the first elements of
// importPath (all of them unless below is set) and returns the matched
// prefix of importPath.
func matchPrefix(pattern, importPath string, below bool) (string, bool) {
	pe := strings.Split(pattern, "/")
	ie := strings.Split(importPath, "/")
	if len(ie) < len(pe) || (!below && len(ie) != len(pe)) {
		return "", false
	}
	for i, p := range pe {
		if ok, err := path.Match(p, ie[i]); err != nil || !ok {
			return "", false
		}
	}
	return strings.Join(ie[:len(pe)], "/"), true
}

// instance returns which match of pattern (with a "*" element) importPath
// lies below, e.g. ".../engines/peering" for ".../engines/peering/lease".
func instance(pattern, importPath string) (string, bool) {
	return matchPrefix(pattern, importPath, true)
}

// IsStd reports whether importPath is in the standard library: its first
// element has no dot (the go command's own rule), and it is not cgo's "C".
func IsStd(importPath string) bool {
	first, _, _ := strings.Cut(importPath, "/")
	return importPath != "C" && !strings.Contains(first, ".")
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}
