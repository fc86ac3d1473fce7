package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
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
		rsSrc, err := os.ReadFile(filepath.Join(dir, "rust", strings.ToLower(densityKind(i)), "src", "lib.rs"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"m.on_create", "m.on_update", "m.on_delete", "m.timer", `"` + plural + `"`, "from_millis(60000)"} {
			if !strings.Contains(string(rsSrc), want) {
				t.Errorf("operator %d's Rust source lacks %s", i, want)
			}
		}
		if py, err := os.ReadFile(filepath.Join(dir, "python", strings.ToLower(densityKind(i)), strings.ToLower(densityKind(i))+".py")); err != nil || string(py) != string(pySrc) {
			t.Errorf("operator %d's Python module is not its Kopf file (%v)", i, err)
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

// TestGenerateDensityNoTimer: with -timer 0 no source has a timer.
func TestGenerateDensityNoTimer(t *testing.T) {
	for name, src := range map[string]string{
		"Go": densityGoSource(1, noTimer), "Kopf": densityKopfSource(1, 0), "Rust": densityRustSource(1, 0),
	} {
		if strings.Contains(strings.ToLower(src), "timer") || strings.Contains(src, "tick") || !strings.Contains(src, "delete") {
			t.Errorf("the %s source without a timer:\n%s", name, src)
		}
	}
}

// TestDensityModulesBuild builds the generated operators: two Rust crates
// in one cargo build (Debian's toolchain, as hack/guest-build.sh), a Go one
// for wasip1, and runs a Python one under the machine's python3 with the
// guest SDK (kopf.testing): its four handlers register on its resource
// and create_fn returns its message. Each part skips when its toolchain
// is missing.
func TestDensityModulesBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds guest modules")
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := generateDensity(root, dir, 2, "1m0s", 60); err != nil {
		t.Fatal(err)
	}
	t.Run("rust", func(t *testing.T) {
		if err := exec.Command(filepath.Join(root, "hack", "guest-toolchains.sh"), "check", "rust").Run(); err != nil {
			t.Fatalf("no Rust guest toolchain: %v (make test installs it; by hand: sudo hack/guest-toolchains.sh install rust)", err)
		}
		paths, err := buildDensityRust(context.Background(), root, dir, 2, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if b, err := os.ReadFile(p); err != nil || !bytes.HasPrefix(b, []byte("\x00asm")) {
				t.Errorf("%s: not a wasm module (%v)", p, err)
			}
		}
	})
	t.Run("go", func(t *testing.T) {
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", filepath.Join(dir, "op002.wasm"), "./op002")
		cmd.Dir = filepath.Join(dir, "go")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
	t.Run("python", func(t *testing.T) {
		python, err := exec.LookPath("python3")
		if err != nil {
			t.Fatalf("no python3: %v (the Python SDK's own tests need it too)", err)
		}
		cmd := exec.Command(python, "-c", densityPythonCheck, filepath.Join(root, "guest-sdk", "python"),
			filepath.Join(dir, "python", "op002", "op002.py"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		want := "create_fn create op002s\nupdate_fn update op002s\ndelete_fn delete op002s\ntick timer op002s 60\nsuccess hello world\n"
		if string(out) != want {
			t.Errorf("the Python module registered and answered\n%s\nwant\n%s", out, want)
		}
	})
}

// densityPythonCheck imports a generated Python module with the guest SDK
// (argv: the SDK's folder, the file) and prints its handlers and what its
// create_fn returns.
const densityPythonCheck = `
import runpy, sys
sys.path.insert(0, sys.argv[1])
import kopf.testing
runpy.run_path(sys.argv[2])
host = kopf.testing.Host()
for h in host.manifest()["handlers"]:
    print(h["id"], h["kind"], h["resource"]["name"], *[int(v) for v in h["options"].values()])
body = {"apiVersion": "density.kopf.dev/v1", "kind": "Op002", "spec": {"field": "x"},
        "metadata": {"name": "a", "namespace": "ns", "uid": "u1"}}
res = host.run("create_fn", body)
print(res.status, res.result["message"])
`
