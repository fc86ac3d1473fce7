package app

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
)

// Compilers of Go modules (build's and init's --compiler).
const (
	compilerGo     = "go"
	compilerTinyGo = "tinygo"
)

// tinygoHint says how to get TinyGo.
const tinygoHint = "run CI=true hack/tinygo.sh in a kopf-wasm checkout (root for apt-get; a few minutes, once), " +
	"put tinygo 0.41 or newer on PATH, or name it with KOPF_WASM_TINYGO"

// projectCacheDir is the project's cache folder: $KOPF_WASM_CACHE, else
// kopf-wasm in the user's cache folder (where hack/python-runtime.sh and
// hack/tinygo.sh build).
func projectCacheDir() string {
	if root := os.Getenv("KOPF_WASM_CACHE"); root != "" {
		return root
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = filepath.Join(os.TempDir(), "cache")
	}
	return filepath.Join(cache, "kopf-wasm")
}

// tinygoPath returns the tinygo command to use: $KOPF_WASM_TINYGO, else
// the one hack/tinygo.sh last built (tinygo/current/bin/tinygo in the
// project's cache folder), else tinygo on PATH; "" when there is none.
func tinygoPath() string {
	if p := os.Getenv("KOPF_WASM_TINYGO"); p != "" {
		return p
	}
	if p := filepath.Join(projectCacheDir(), "tinygo", "current", "bin", "tinygo"); isExecutable(p) {
		return p
	}
	if p, err := exec.LookPath("tinygo"); err == nil {
		return p
	}
	return ""
}

// isExecutable reports whether path is a file that can be run.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// tinygoFlags build a WASI reactor (as goBuild's -buildmode=c-shared
// does) without debug information and without a goroutine scheduler: the
// host enters a guest only through its exports, and TinyGo's asyncify
// scheduler made each call about 5 times as costly (its garbage collection
// pauses reached 20 ms) and the module 70% larger. A module that starts
// goroutines does not build so; the Go toolchain builds it.
var tinygoFlags = []string{"-target=wasip1", "-buildmode=c-shared", "-no-debug", "-scheduler=none"}

// tinygoBuild compiles the Go module in dir with TinyGo (tinygoFlags);
// TinyGo's output goes to the error stream.
func tinygoBuild(cmd *cobra.Command, g *globals, dir, out string) error {
	tinygo := tinygoPath()
	if tinygo == "" {
		return clierr.New(errors.New("build: TinyGo is not installed"), tinygoHint)
	}
	args := append(append([]string{"build"}, tinygoFlags...), "-o", out, ".")
	if err := tool(cmd, g, dir, nil, tinygo, args...); err != nil {
		return clierr.New(fmt.Errorf("build: tinygo build in %s failed (%w)", dir, err), "see the compiler's output above")
	}
	return nil
}
