package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// tinygoContender is kopf-wasm running the Go kopfexample module built
// with TinyGo (issue 32): `kopf-wasm build --compiler tinygo`, with the
// TinyGo that hack/tinygo.sh builds, or a prebuilt one (-tinygo-wasm).
const tinygoContender = "kopf-wasm-tinygo"

// goExample is the Go kopfexample, relative to the repository.
const goExample = "examples/kopfexample"

// buildTinyGo builds the Go kopfexample module with TinyGo into workDir,
// unless *module names a prebuilt one.
func buildTinyGo(ctx context.Context, root, workDir string, module *string, progress func(string, ...any)) error {
	if *module == "" {
		*module = filepath.Join(workDir, "tinygo-kopfexample.wasm")
		progress("building %s", *module)
		cmd := exec.CommandContext(ctx, "go", "run", "./cmd/kopf-wasm", "build", goExample, "--compiler", "tinygo", "-o", *module)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building the kopfexample module with TinyGo (CI=true hack/tinygo.sh sets TinyGo up): %w\n%s", err, out)
		}
	}
	if _, err := os.Stat(*module); err != nil {
		return fmt.Errorf("prebuilt TinyGo module: %w", err)
	}
	return nil
}
