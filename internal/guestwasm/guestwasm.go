// Package guestwasm gives tests the wasm modules built from this
// repository's non-Go guests: the Rust, AssemblyScript and Python examples
// and test guests under examples/rust, examples/assemblyscript and
// examples/python.
//
// Tests call [Path] or [Bytes] with a language and a directory name
// ("rust", "kopfexample"). The module is built, once per test binary, by
// hack/guest-build.sh into bin/wasm/<lang>-<name>.wasm (where `make guests`
// puts it too); the language's own build is incremental, so an up-to-date
// module costs about a second. When the toolchain is missing the test
// fails with one line that names the script to run
// (hack/guest-toolchains.sh), as `make test` does.
//
// [TinyGo] is the Go examples built with TinyGo: Path(tb, TinyGo,
// "kopfexample") is examples/kopfexample built by [wasmtest.TinyGoPath]
// into bin/wasm/tinygo-kopfexample.wasm, rebuilt only when its sources
// changed.
package guestwasm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// Languages of the non-Go guests, as directory names under examples/.
const (
	Rust           = "rust"
	AssemblyScript = "assemblyscript"
	Python         = "python"
	// TinyGo is the Go examples (examples/<name>) built with TinyGo.
	TinyGo = "tinygo"
)

// prefix is the file name prefix of a language's modules in bin/wasm.
var prefix = map[string]string{Rust: "rust-", AssemblyScript: "as-", Python: "py-"}

var (
	mu     sync.Mutex
	builds = map[string]error{}
)

// Path returns the path of the built module examples/<lang>/<name>,
// building it first (once per test binary).
func Path(tb testing.TB, lang, name string) string {
	tb.Helper()
	if lang == TinyGo {
		return wasmtest.TinyGoPath(tb, name)
	}
	root, err := wasmtest.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	p, ok := prefix[lang]
	if !ok {
		tb.Fatalf("guestwasm: unknown language %q", lang)
	}
	out := filepath.Join(root, wasmtest.OutDir, p+name+".wasm")
	mu.Lock()
	defer mu.Unlock()
	berr, done := builds[out]
	if !done {
		berr = build(root, lang, filepath.Join(root, "examples", lang, name), out)
		builds[out] = berr
	}
	if berr != nil {
		tb.Fatal(berr)
	}
	return out
}

// Bytes returns the contents of the built module (see [Path]).
func Bytes(tb testing.TB, lang, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(Path(tb, lang, name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Build builds the guest in dir (a folder of the language's sources, such
// as a copy of an example that a test changed) into a module in a
// temporary folder of the test, and returns its path.
func Build(tb testing.TB, lang, dir string) string {
	tb.Helper()
	root, err := wasmtest.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(tb.TempDir(), filepath.Base(dir)+".wasm")
	if err := build(root, lang, dir, out); err != nil {
		tb.Fatal(err)
	}
	return out
}

func build(root, lang, dir, out string) error {
	cmd := exec.Command(filepath.Join(root, "hack", "guest-build.sh"), lang, dir, out)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("guestwasm: building %s: %v: %s", strings.TrimPrefix(dir, root+"/"), err, strings.TrimSpace(string(msg)))
	}
	return nil
}
