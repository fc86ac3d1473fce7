package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestGenerateDensity checks that every generated operator has its own
// resource and the same four handlers in Go and in Kopf's Python, and
// that the CRDs parse and name those resources.
func TestGenerateDensity(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	mod := "module github.com/kopf-wasm/kopf-wasm/examples\n\nreplace github.com/kopf-wasm/kopf-wasm/abi => ../abi\n"
	for name, text := range map[string]string{"go.mod": mod, "go.sum": ""} {
		if err := os.WriteFile(filepath.Join(root, "examples", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := generateDensity(root, dir, 3, "1m0s", 60); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "=> " + root + "/abi"; !strings.Contains(string(gomod), want) || !strings.HasPrefix(string(gomod), "module densitygen") {
		t.Errorf("go.mod:\n%s\nwant module densitygen and %q", gomod, want)
	}
	for i := 1; i <= 3; i++ {
		plural := densityGVR(i).Resource
		goSrc, err := os.ReadFile(filepath.Join(dir, "go", strings.ToLower(densityKind(i)), "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		pySrc, err := os.ReadFile(filepath.Join(dir, "kopf", strings.ToLower(densityKind(i))+".py"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"kopf.OnCreate", "kopf.OnUpdate", "kopf.OnDelete", "kopf.Timer", `"` + plural + `"`} {
			if !strings.Contains(string(goSrc), want) {
				t.Errorf("operator %d's Go source lacks %s", i, want)
			}
		}
		for _, want := range []string{"@kopf.on.create", "@kopf.on.update", "@kopf.on.delete", "@kopf.timer", `"` + plural + `"`, "interval=60"} {
			if !strings.Contains(string(pySrc), want) {
				t.Errorf("operator %d's Kopf source lacks %s", i, want)
			}
		}
		var crd struct {
			Spec struct {
				Group string
				Names struct{ Kind, Plural string }
			}
		}
		if err := yaml.Unmarshal([]byte(densityCRD(i)), &crd); err != nil {
			t.Fatalf("CRD %d: %v", i, err)
		}
		if crd.Spec.Group != densityGroup || crd.Spec.Names.Plural != plural || crd.Spec.Names.Kind != densityKind(i) {
			t.Errorf("CRD %d names %+v, want %s %s", i, crd.Spec, plural, densityKind(i))
		}
	}
}
