package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/pybundle"
	python "github.com/kopf-wasm/kopf-wasm/guest-sdk/python"
	"github.com/kopf-wasm/kopf-wasm/host"
)

// The Python runtime's files, in the folder hack/python-runtime.sh builds.
const (
	pythonRuntimeWasm = "kopf-python.wasm"
	pythonStdlibZip   = "python311.zip"
	// pythonInit is the runtime's export that starts CPython and imports
	// the module's files; it runs once, at build time.
	pythonInit = "kopf_python_init"
)

// pythonRuntimeHint says how to get the Python runtime.
const pythonRuntimeHint = "build it with hack/python-runtime.sh in a kopf-wasm checkout, or name its folder with KOPF_WASM_PYTHON_RUNTIME"

// pythonRuntimeDir returns the folder of the Python runtime:
// $KOPF_WASM_PYTHON_RUNTIME, else the one hack/python-runtime.sh last
// built (python/current in the project's cache folder).
func pythonRuntimeDir() string {
	if d := os.Getenv("KOPF_WASM_PYTHON_RUNTIME"); d != "" {
		return d
	}
	return filepath.Join(projectCacheDir(), "python", "current")
}

// pythonBuild makes a Python module: the runtime (CPython for WASI and
// the shim that speaks the ABI), pre-initialised with the folder's files
// and the SDK's imported, so that an instance starts with the handlers
// registered. Files are read only at build time; the module carries them
// in its memory.
func pythonBuild(cmd *cobra.Command, g *globals, dir, out string) error {
	rtDir := pythonRuntimeDir()
	wasm, err := os.ReadFile(filepath.Join(rtDir, pythonRuntimeWasm))
	if err == nil {
		_, err = os.Stat(filepath.Join(rtDir, pythonStdlibZip))
	}
	if err != nil {
		return clierr.New(fmt.Errorf("build: no Python runtime in %s (%w)", rtDir, errors.Unwrap(err)), pythonRuntimeHint)
	}
	b, err := pybundle.Build(dir, python.FS)
	if err != nil {
		return clierr.New(fmt.Errorf("build: %w", err), "fix the module's folder and build again")
	}
	bundleDir, err := os.MkdirTemp("", "kopf-wasm-bundle-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bundleDir)
	if err := os.WriteFile(filepath.Join(bundleDir, "bundle.zip"), b.Zip, 0o644); err != nil {
		return err
	}
	input, err := json.Marshal(pythonInitInput(b.Modules, filepath.Base(dir)))
	if err != nil {
		return err
	}
	logger := slog.New(&rawHandler{w: g.streams.Err})
	snap, err := host.Preinitialize(cmd.Context(), host.Preinitialization{
		Module: wasm,
		Export: pythonInit,
		Input:  input,
		Mounts: []host.Mount{{Host: rtDir, Guest: "/python"}, {Host: bundleDir, Guest: "/bundle"}},
		Logger: logger,
	})
	if err != nil {
		return clierr.New(fmt.Errorf("build: importing the module's files failed: %w", err), "fix the error above (a Python traceback ends with the cause) and build again")
	}
	return os.WriteFile(out, snap, 0o644)
}

// pythonInitInput is the input of the runtime's kopf_python_init: where
// Python finds its modules at build time, and what the boot script
// (guest-sdk/python/runtime/_kopf_boot.py) imports and keeps in memory.
func pythonInitInput(modules []string, name string) any {
	const stdlib, bundle = "/python/" + pythonStdlibZip, "/bundle/bundle.zip"
	return map[string]any{
		"path": []string{bundle, stdlib},
		"boot": "_kopf_boot",
		"config": map[string]any{
			"modules": modules,
			"memzip":  []string{bundle, stdlib},
			"name":    name,
		},
	}
}

// rawHandler writes the build's log records for a person at a terminal:
// the message, then each attribute on a line of its own, its value as it
// is, so that a Python traceback keeps its lines.
type rawHandler struct {
	w     io.Writer
	attrs []slog.Attr
}

func (h *rawHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *rawHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", strings.ToLower(r.Level.String()), r.Message)
	write := func(a slog.Attr) bool {
		fmt.Fprintf(&b, "  %s: %s\n", a.Key, strings.TrimRight(strings.ReplaceAll(a.Value.String(), "\n", "\n    "), " "))
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *rawHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &rawHandler{w: h.w, attrs: append(append([]slog.Attr{}, h.attrs...), attrs...)}
}

func (h *rawHandler) WithGroup(string) slog.Handler { return h }
