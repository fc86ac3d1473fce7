package wasmrt

import (
	"errors"
	"fmt"
	"strings"
)

// Errors that a [*LoadError] wraps, for errors.Is. Wrong ABI versions and
// invalid manifests wrap *abi.VersionError and *abi.ManifestError instead.
var (
	// ErrNotWasm: the bytes are not a WebAssembly binary.
	ErrNotWasm = errors.New("not a WebAssembly module")
	// ErrCompile: wazero could not compile or link the module.
	ErrCompile = errors.New("cannot compile the module")
	// ErrNotReactor: the module is a WASI command (built without
	// -buildmode=c-shared), whose exports cannot be called.
	ErrNotReactor = errors.New("the module is a WASI command, not a reactor")
	// ErrMissingExport: an export of the ABI is missing.
	ErrMissingExport = errors.New("the module lacks an export of the kopf-wasm ABI")
	// ErrManifestJSON: the manifest export returned something that is not
	// a manifest.
	ErrManifestJSON = errors.New("the manifest is not valid JSON")
)

// ErrClosed is returned by calls into a closed [Module] or [Runtime].
var ErrClosed = errors.New("wasmrt: closed")

// LoadError says why a module could not be loaded, in one line that tells
// what to rebuild with what.
type LoadError struct {
	Module string // the name the caller gave the module
	Digest string // "sha256:<hex>" of its bytes
	Err    error
}

func (e *LoadError) Error() string {
	return fmt.Sprintf("load module %q: %v", e.Module, e.Err)
}

// Unwrap returns the cause.
func (e *LoadError) Unwrap() error { return e.Err }

// Kind classifies a failed call of a guest export.
type Kind string

// Kinds of call failures. The reactor treats all of them as an arbitrary
// error of the handler (its errors mode decides); the kind is for logs,
// metrics and tests.
const (
	// KindTimeout: the call ran past [Options.Timeout]; the guest was stopped
	// and the instance is discarded.
	KindTimeout Kind = "timeout"
	// KindCanceled: the caller's context ended first (while waiting for an
	// instance or during the call).
	KindCanceled Kind = "canceled"
	// KindTrap: the guest crashed: a wasm trap (unreachable, out-of-bounds
	// access, stack overflow) or a runtime panic of the guest's language.
	KindTrap Kind = "trap"
	// KindOutOfMemory: the guest needed more than [Options.MemoryLimitPages].
	KindOutOfMemory Kind = "out-of-memory"
	// KindExit: the guest exited (proc_exit) with a non-zero code.
	KindExit Kind = "exit"
	// KindFailed: the export returned a non-zero code (the guest reported
	// an error instead of writing a response).
	KindFailed Kind = "failed"
	// KindBadOutput: the output is not an [abi.Response].
	KindBadOutput Kind = "bad-output"
	// KindOutputTooLarge: the output is larger than [Options.MaxOutputBytes].
	KindOutputTooLarge Kind = "output-too-large"
	// KindInternal: the host failed around the call (instantiation, a panic
	// in a host function); not the guest's fault.
	KindInternal Kind = "internal"
)

// CallError is a failed call of a guest export.
type CallError struct {
	Module  string // module name from the manifest
	Handler string // handler id, empty for the manifest call
	Kind    Kind
	// Code is the exit code (KindExit) or the export's return code
	// (KindFailed).
	Code uint32
	// Detail is what the guest said: its error message, or the tail of its
	// stderr (a panic message and stack).
	Detail string
	Err    error
}

func (e *CallError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "module %q", e.Module)
	if e.Handler != "" {
		fmt.Fprintf(&b, " handler %q", e.Handler)
	}
	fmt.Fprintf(&b, ": %s", e.Kind)
	if line := summary(e.Detail); line != "" {
		fmt.Fprintf(&b, ": %s", line)
	} else if e.Err != nil {
		fmt.Fprintf(&b, ": %s", firstLine(e.Err.Error()))
	}
	return b.String()
}

// Unwrap returns the underlying error (a wazero exit error, a JSON error, a
// context error, ...), if any.
func (e *CallError) Unwrap() error { return e.Err }

// discards reports whether the instance that failed this way must not be
// used again.
func (k Kind) discards() bool {
	switch k {
	case KindFailed, KindBadOutput, KindOutputTooLarge:
		return false
	}
	return true
}

// pythonTraceback starts the traceback of a Python guest's uncaught
// exception.
const pythonTraceback = "Traceback (most recent call last):"

// summary is the line of a guest's detail that says what happened: the
// first, but the last of a Python traceback ("ValueError: ...").
func summary(detail string) string {
	if !strings.HasPrefix(strings.TrimSpace(detail), pythonTraceback) {
		return firstLine(detail)
	}
	lines := strings.Split(strings.TrimSpace(detail), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// firstLine returns the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}
