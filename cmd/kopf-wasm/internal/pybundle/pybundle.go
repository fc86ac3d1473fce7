// Package pybundle gathers a Python module's files for `kopf-wasm build`:
// the author's folder (their handlers, the pure-Python packages beside
// them, the data files they read) and the guest SDK's Python files (kopf,
// the kubernetes client shim, the runtime's boot script) into one zip,
// which the Python runtime reads into memory once, at build time, before
// the module is snapshotted. It calls nothing but the file system; the
// build command (package app) passes the zip to host.Preinitialize.
package pybundle

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// MaxBytes bounds the author's files in a bundle: they are kept in every
// instance's memory.
const MaxBytes = 32 << 20

// Bundle is what a folder gives a Python module.
type Bundle struct {
	// Zip holds the author's files and the SDK's, stored (not compressed:
	// the runtime reads it once and keeps it in memory either way).
	Zip []byte
	// Modules are the author's top-level modules, in name order: the
	// runtime imports each, which registers their handlers (as `kopf run
	// a.py b.py` does).
	Modules []string
	// Files counts the author's files in Zip.
	Files int
}

// nativeExt are the suffixes of native extensions, which a wasm module
// cannot load.
var nativeExt = []string{".so", ".pyd", ".dylib", ".dll"}

// Build bundles the files of dir with the SDK's. Tests (test_*.py,
// *_test.py, conftest.py, tests/ and test/ folders), hidden files,
// __pycache__, virtual environments and .wasm files are left out. A native
// extension is an error that names it; so is a folder without a top-level
// .py file.
func Build(dir string, sdk fs.FS) (Bundle, error) {
	var b Bundle
	var buf bytes.Buffer
	zw := &writer{Writer: zip.NewWriter(&buf), names: map[string]bool{}}
	total := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if skipped(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		for _, ext := range nativeExt {
			if strings.HasSuffix(rel, ext) || strings.Contains(rel, ext+".") {
				return fmt.Errorf("%s is a native extension, which a wasm module cannot load: use a pure-Python package instead, or remove it from %s", rel, dir)
			}
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if total += len(data); total > MaxBytes {
			return fmt.Errorf("the files of %s pass %d MiB: every instance keeps them in memory; leave out what the handlers do not need", dir, MaxBytes>>20)
		}
		if err := zw.store(rel, data); err != nil {
			return err
		}
		b.Files++
		if !strings.Contains(rel, "/") && strings.HasSuffix(rel, ".py") && rel != "setup.py" {
			b.Modules = append(b.Modules, strings.TrimSuffix(rel, ".py"))
		}
		return nil
	})
	if err != nil {
		return Bundle{}, err
	}
	if len(b.Modules) == 0 {
		return Bundle{}, fmt.Errorf("%s has no .py file at its top: put the module's handlers in one (handlers.py, say)", dir)
	}
	if err := addSDK(zw, sdk); err != nil {
		return Bundle{}, err
	}
	if err := zw.Close(); err != nil {
		return Bundle{}, err
	}
	sort.Strings(b.Modules)
	b.Zip = buf.Bytes()
	return b, nil
}

// skipped tells whether the file or folder rel (slash-separated, relative
// to the module's folder) stays out of the bundle.
func skipped(rel string, dir bool) bool {
	base := path.Base(rel)
	switch {
	case strings.HasPrefix(base, "."), base == "__pycache__", base == "node_modules":
		return true
	case dir:
		return base == "tests" || base == "test" || base == "venv" || base == "site-packages" || base == "build" || base == "dist"
	}
	return base == "conftest.py" || strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py") ||
		strings.HasSuffix(base, "_test.py") || strings.HasSuffix(base, ".wasm") || strings.HasSuffix(base, ".pyc")
}

// addSDK stores the SDK's files: its kopf/ and kubernetes/ packages at the
// top, and runtime/_kopf_boot.py as _kopf_boot.py. An author's file of the
// same name is an error: the SDK's must win.
func addSDK(zw *writer, sdk fs.FS) error {
	return fs.WalkDir(sdk, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(sdk, p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "runtime/")
		if zw.names[name] {
			return fmt.Errorf("%s is the kopf-wasm SDK's: rename the module's own %s", name, name)
		}
		return zw.store(name, data)
	})
}

// writer is a zip writer that remembers the names it wrote.
type writer struct {
	*zip.Writer
	names map[string]bool
}

// store adds a file, uncompressed.
func (zw *writer) store(name string, data []byte) error {
	zw.names[name] = true
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
