package instrument

import (
	"errors"
	"fmt"
)

// ErrMalformed is wrapped by the error [Interruptible] returns when the
// binary is not well-formed WebAssembly: a bad magic number, a section,
// body or immediate that runs past its end, an overlong LEB128 number,
// sections out of order or repeated, a body that does not end with end.
var ErrMalformed = errors.New("malformed module")

// ErrExportName is wrapped by the error [Interruptible] returns when the
// export name asked for cannot be used: the module already exports
// something under it, or it is not valid UTF-8.
var ErrExportName = errors.New("unusable export name")

// UnsupportedError is the error [Interruptible] returns when the binary
// uses a feature the rewriter does not decode, so that it cannot find every
// loop. The module may well be valid; the caller can compile it unchanged
// and stop it by other means.
type UnsupportedError struct {
	// Feature names what was not understood, e.g. "opcode 0x06",
	// "opcode 0xfd 275", "block type 0x63", "section 14".
	Feature string
	// Func is the index of the function (in the function index space, so
	// imported functions count) whose body holds the feature, or -1 when
	// the feature is outside the code section.
	Func int
	// Offset is the byte offset of the feature in the input.
	Offset int
}

// Error returns a one-line description of what is unsupported and where.
func (e *UnsupportedError) Error() string {
	if e.Func < 0 {
		return fmt.Sprintf("unsupported %s at byte %#x", e.Feature, e.Offset)
	}
	return fmt.Sprintf("unsupported %s in function %d at byte %#x", e.Feature, e.Func, e.Offset)
}

// malformed returns an error wrapping ErrMalformed that says what is wrong,
// where (a section or function, may be empty) and at which input offset.
func malformed(where string, off int, what string) error {
	if where == "" {
		return fmt.Errorf("%w: %s at byte %#x", ErrMalformed, what, off)
	}
	return fmt.Errorf("%w: %s in %s at byte %#x", ErrMalformed, what, where, off)
}

// unsupported returns an *UnsupportedError outside the code section.
func unsupported(off int, format string, args ...any) error {
	return &UnsupportedError{Feature: fmt.Sprintf(format, args...), Func: -1, Offset: off}
}
