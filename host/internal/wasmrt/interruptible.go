package wasmrt

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt/instrument"
)

// instrumentedDir is the folder of Options.CacheDir that keeps rewritten
// modules, named after the digest of the original and the rewriter's
// version, so that a cached load does not rewrite the module again.
const instrumentedDir = "kopf-wasm-interruptible"

// instrumentVersion changes whenever the rewrite does, or what it is
// named after, so that modules rewritten by an older host are not reused.
// Since 3 the digest is of the code Runtime.split returns.
const instrumentVersion = "3"

// interruptible returns the code to compile for wasm (of digest) and
// whether it checks the interrupt flag (see interrupter). A module the
// rewriter cannot handle is compiled as it is, with wazero's context
// checks; one that is not valid wasm then fails in wazero's compiler,
// which says why.
func (r *Runtime) interruptible(digest string, wasm []byte) (code []byte, unmap func(), ok bool) {
	if r.opts.noInterrupt {
		return wasm, nil, false
	}
	path := r.instrumentedPath(digest)
	if path != "" {
		if code, unmap, err := mapFile(path); err == nil {
			if bytes.HasPrefix(code, []byte("\x00asm")) {
				return code, unmap, true
			}
			unmap()
		}
	}
	code, err := instrument.Interruptible(wasm, interruptExport)
	if err != nil {
		r.opts.Logger.Info("the module cannot get loop checks; it runs with wazero's slower context checks",
			"digest", digest, "reason", err)
		return wasm, nil, false
	}
	if path != "" {
		r.keep(path, code)
	}
	return code, nil, true
}

// instrumentedPath returns where the cache keeps the rewrite of digest, or
// "" without a cache directory.
func (r *Runtime) instrumentedPath(digest string) string {
	if r.opts.CacheDir == "" {
		return ""
	}
	name := strings.TrimPrefix(digest, "sha256:") + ".v" + instrumentVersion + ".wasm"
	return filepath.Join(r.opts.CacheDir, instrumentedDir, name)
}

// keep writes code to path atomically (a temporary file renamed), so that
// a concurrent or interrupted write never leaves half a module; failing to
// keep it only costs the next load a rewrite.
func (r *Runtime) keep(path string, code []byte) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		r.opts.Logger.Debug("cannot cache the rewritten module", "error", err)
		return
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		r.opts.Logger.Debug("cannot cache the rewritten module", "error", err)
		return
	}
	_, werr := tmp.Write(code)
	if werr == nil {
		werr = tmp.Sync() // a crash must not leave a rename of a partial file
	}
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		_ = os.Remove(tmp.Name())
		r.opts.Logger.Debug("cannot cache the rewritten module", "path", path)
	}
}
