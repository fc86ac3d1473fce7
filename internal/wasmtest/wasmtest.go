// Package wasmtest gives tests the wasm modules built from this repository's
// sources: the examples and the test guests of the examples module.
//
// Tests call [Path] or [Bytes] with a package path inside the examples
// module ("testguests/good"). The module is taken from bin/wasm/<name>.wasm
// at the repository root, where the Makefile's wasm target puts it; when it
// is missing or older than its sources, wasmtest builds it there with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared
//
// so that a plain `go test` never runs against a stale module and never
// skips for want of one. [TinyGoPath] does the same with TinyGo (the one
// hack/tinygo.sh builds) into bin/wasm/tinygo-<name>.wasm.
package wasmtest

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// OutDir is where built modules live, relative to the repository root.
const OutDir = "bin/wasm"

var (
	mu     sync.Mutex
	builds = map[string]error{} // by output path, once per test binary
)

// Path returns the path of the built module for pkg, a package path inside
// the examples module (e.g. "testguests/good"); it builds the module first
// when needed and fails the test if the build fails.
func Path(tb testing.TB, pkg string) string {
	tb.Helper()
	return path(tb, pkg, "")
}

// TinyGoPath is [Path] for the module built from pkg with TinyGo (by
// hack/guest-build.sh tinygo, as kopf-wasm build --compiler tinygo builds),
// in bin/wasm/tinygo-<name>.wasm. When TinyGo
// is not built the test fails with hack/tinygo.sh's line that says what to
// run.
func TinyGoPath(tb testing.TB, pkg string) string {
	tb.Helper()
	return path(tb, pkg, tinygoPrefix)
}

// tinygoPrefix is the file name prefix of TinyGo builds in OutDir.
const tinygoPrefix = "tinygo-"

// path builds pkg with Go (prefix "") or TinyGo (tinygoPrefix).
func path(tb testing.TB, pkg, prefix string) string {
	tb.Helper()
	root, err := RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(root, OutDir, prefix+filepath.Base(pkg)+".wasm")
	mu.Lock()
	defer mu.Unlock()
	berr, done := builds[out]
	if !done {
		berr = ensure(root, pkg, out, prefix == tinygoPrefix)
		builds[out] = berr
	}
	if berr != nil {
		tb.Fatal(berr)
	}
	return out
}

// Bytes returns the contents of the built module for pkg (see [Path]).
func Bytes(tb testing.TB, pkg string) []byte {
	tb.Helper()
	b, err := os.ReadFile(Path(tb, pkg))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// RepoRoot returns the repository root: the nearest directory above the
// working directory that holds go.work.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("wasmtest: no go.work above the working directory")
		}
		dir = parent
	}
}

// ensure builds out from pkg (with TinyGo when tinygo is set) unless out is
// newer than every source it depends on in this repository (the package,
// abi and guest-sdk; for TinyGo also hack/guest-build.sh).
func ensure(root, pkg, out string, tinygo bool) error {
	src := filepath.Join(root, "examples", filepath.FromSlash(pkg))
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("wasmtest: no package %s in the examples module: %w", pkg, err)
	}
	built, err := os.Stat(out)
	if err == nil {
		newest, err := newestSource(src, filepath.Join(root, "examples", "go.mod"),
			filepath.Join(root, "abi"), filepath.Join(root, "guest-sdk"))
		if err != nil {
			return err
		}
		if tinygo { // the script holds TinyGo's flags
			if fi, err := os.Stat(filepath.Join(root, "hack", "guest-build.sh")); err == nil && fi.ModTime().After(newest) {
				newest = fi.ModTime()
			}
		}
		if built.ModTime().After(newest) {
			return nil
		}
	}
	return build(root, pkg, out, tinygo)
}

// build runs the Go toolchain (or TinyGo) for wasip1 into a temporary file
// and renames it into place, so that concurrent test binaries never see
// half a module.
func build(root, pkg, out string, tinygo bool) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("wasmtest: %w", err)
	}
	if tinygo {
		return buildTinyGo(root, pkg, out)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", tmp, "./"+pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	cmd.Dir = filepath.Join(root, "examples")
	if msg, err := cmd.CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("wasmtest: building %s: %w\n%s", pkg, err, strings.TrimSpace(string(msg)))
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("wasmtest: %w", err)
	}
	return nil
}

// buildTinyGo builds pkg with hack/guest-build.sh tinygo (hack/tinygo.sh's
// TinyGo, kopf-wasm build --compiler tinygo's flags), which writes out
// whole or not at all; a missing TinyGo is its line that says what to run.
func buildTinyGo(root, pkg, out string) error {
	cmd := exec.Command(filepath.Join(root, "hack", "guest-build.sh"), "tinygo", filepath.Join("examples", filepath.FromSlash(pkg)), out)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("wasmtest: building %s with TinyGo: %w: %s", pkg, err, strings.TrimSpace(string(msg)))
	}
	return nil
}

// newestSource returns the latest modification time of the .go, go.mod and
// go.sum files at or under paths (missing paths are ignored).
func newestSource(paths ...string) (time.Time, error) {
	var newest time.Time
	for _, path := range paths {
		err := filepath.WalkDir(path, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			name := d.Name()
			if d.IsDir() || !(strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum") {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if info.ModTime().After(newest) {
				newest = info.ModTime()
			}
			return nil
		})
		if err != nil {
			return time.Time{}, fmt.Errorf("wasmtest: %w", err)
		}
	}
	return newest, nil
}

// CacheDir is a compile cache that the tests of every package share
// (bin/wasm-cache in the repository): a test that loads a module the way
// the CLI does, with a cache, compiles it once per module version rather
// than once per test.
func CacheDir(tb testing.TB) string {
	tb.Helper()
	root, err := RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(root, "bin", "wasm-cache")
}
