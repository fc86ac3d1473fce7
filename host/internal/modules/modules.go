// Package modules loads handler modules for the host: it expands module
// arguments into files ([Files]), pulls those named by OCI references
// through the cache ([Puller], [PullAll]), starts the wasm runtime with the
// settings' limits and a bounded compile cache ([NewRuntime]) and loads
// modules under their manifests' names ([Load], [LoadAll]). The public
// package host (Run, Inspect, Invoke, Push) and the operator
// (host/internal/operator: reloads, Module resources) call it; it calls
// wasmrt and oci.
package modules

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/cachedir"
)

// Files expands paths (.wasm files, or folders whose *.wasm files are
// taken in name order, without descending into subfolders) into the list of
// module files, each once. A missing path, a folder without modules or a
// file that is not a regular file is an error.
func Files(paths []string) ([]string, error) {
	var files []string
	seen := map[string]bool{}
	add := func(f string) {
		if abs, err := filepath.Abs(f); err == nil && !seen[abs] {
			seen[abs] = true
			files = append(files, f)
		}
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("module %s: %w", p, NotFound(err))
		}
		if !fi.IsDir() {
			if !fi.Mode().IsRegular() {
				return nil, fmt.Errorf("module %s: not a regular file", p)
			}
			add(p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("module %s: %w", p, err)
		}
		var found []string
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".wasm") {
				found = append(found, filepath.Join(p, e.Name()))
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("module %s: the folder holds no .wasm files", p)
		}
		sort.Strings(found)
		for _, f := range found {
			add(f)
		}
	}
	return files, nil
}

// NotFound turns a missing file's error into one that says so plainly.
func NotFound(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("no such file or folder")
	}
	return err
}

// NewRuntime builds the wasm runtime with the settings' limits.
func NewRuntime(s settings.Wasm, log *slog.Logger) (*wasmrt.Runtime, error) {
	if s.CacheDir != "" && s.CacheMaxBytes > 0 {
		if _, removed, err := cachedir.Prune(s.CacheDir, s.CacheMaxBytes); err != nil {
			log.Warn(err.Error() + "; the cache may grow past wasm.cacheMaxBytes")
		} else if removed.Files > 0 {
			log.Info("pruned the compile cache", "dir", s.CacheDir, "files", removed.Files, "bytes", removed.Bytes, "limit", s.CacheMaxBytes)
		}
	}
	opts := wasmrt.OptionsFor(s)
	opts.Logger = log
	rt, err := wasmrt.New(opts)
	if err != nil {
		return nil, fmt.Errorf("start the wasm runtime: %w", err)
	}
	return rt, nil
}

// Load reads and loads one module file. Errors are one line that
// names the file and says what to do.
func Load(ctx context.Context, rt *wasmrt.Runtime, file string) (*wasmrt.Module, error) {
	wasm, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", file, NotFound(err))
	}
	mod, err := rt.Load(ctx, file, wasm)
	if err != nil {
		return nil, err // a *wasmrt.LoadError: names the file and what to rebuild
	}
	return mod, nil
}

// LoadAll loads every module file; on failure the modules loaded so far
// stay with rt, which the caller closes. The operator knows modules by their
// manifest's name, so a module loaded under its file name is loaded again
// under that name (reusing the compiled code) and the first copy closed.
func LoadAll(ctx context.Context, rt *wasmrt.Runtime, files []string) ([]*wasmrt.Module, error) {
	mods := make([]*wasmrt.Module, 0, len(files))
	byName := map[string]string{}
	for _, f := range files {
		m, err := Load(ctx, rt, f)
		if err != nil {
			return nil, err
		}
		name := m.Manifest().Module.Name
		if other, dup := byName[name]; dup {
			return nil, fmt.Errorf("modules %s and %s are both named %q: serve one of them, or rename one", other, f, name)
		}
		byName[name] = f
		if m.Name() != name {
			renamed, err := reload(ctx, rt, f, name)
			m.Close()
			if err != nil {
				return nil, err
			}
			m = renamed
		}
		mods = append(mods, m)
	}
	return mods, nil
}

func reload(ctx context.Context, rt *wasmrt.Runtime, file, name string) (*wasmrt.Module, error) {
	wasm, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", file, err)
	}
	return rt.Load(ctx, name, wasm)
}
