package instrument

import (
	"errors"
	"strings"
	"testing"
)

// bodyModule is a module with one () -> () function whose body is code.
func bodyModule(locals []byte, code ...[]byte) []byte {
	return module(sec(1, vec(voidType)), sec(3, vec([]byte{0x00})), sec(10, vec(fn(locals, code...))))
}

func TestInterruptibleErrors(t *testing.T) {
	types := sec(1, vec(voidType))
	tests := []struct {
		name       string
		in         []byte
		exportName string
		malformed  bool   // wraps ErrMalformed
		badName    bool   // wraps ErrExportName
		feature    string // an *UnsupportedError for this feature
		fn         int    // ... in this function
	}{
		{name: "name clash", in: module(sec(7, vec(funcExport("other", 0), funcExport("flag", 0)))), badName: true},
		{name: "name not UTF-8", in: module(), exportName: "\xff", badName: true},
		{name: "empty input", in: nil, malformed: true},
		{name: "bad magic", in: []byte("\x00wsm\x01\x00\x00\x00"), malformed: true},
		{name: "component binary", in: []byte("\x00asm\x0d\x00\x01\x00"), feature: "binary version 0d 00 01 00", fn: -1},
		{name: "unknown section", in: module(sec(14)), feature: "section 14", fn: -1},
		{name: "sections out of order", in: module(sec(3, vec()), types), malformed: true},
		{name: "section repeated", in: module(types, types), malformed: true},
		{name: "section past the end", in: module(types)[:len(module(types))-1], malformed: true},
		{name: "section size overlong", in: module([]byte{0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}), malformed: true},
		{name: "trailing bytes in code", in: module(types, sec(3, vec([]byte{0})), sec(10, vec(fn(noLocals, end)), []byte{0x01})), malformed: true},
		{name: "body without end", in: bodyModule(noLocals, []byte{0x01}), malformed: true},
		{name: "immediate past body", in: bodyModule(noLocals, []byte{0x41, 0x80}), malformed: true},
		{name: "LEB128 immediate too long", in: bodyModule(noLocals, []byte{0x41, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x0b}), malformed: true},
		{name: "br_table count too large", in: bodyModule(noLocals, []byte{0x0e, 0x7f, 0x00, 0x0b}), malformed: true},
		{name: "fence without zero", in: bodyModule(noLocals, []byte{0xfe, 0x03, 0x01, 0x0b}), malformed: true},
		{name: "trailing bytes in export section", in: module(sec(7, vec(), []byte{0x01})), malformed: true},
		{name: "import section truncated", in: module(sec(2, []byte{0x01, 0x01, 'e', 0x01, 'x', 0x03})), malformed: true},
		{name: "try", in: bodyModule(noLocals, []byte{0x06, 0x40, 0x0b, 0x0b}), feature: "opcode 0x06", fn: 0},
		{name: "GC prefix", in: bodyModule(noLocals, []byte{0xfb, 0x00, 0x0b}), feature: "opcode 0xfb", fn: 0},
		{name: "call_ref", in: bodyModule(noLocals, []byte{0x14, 0x00, 0x0b}), feature: "opcode 0x14", fn: 0},
		{name: "0xfc 18", in: bodyModule(noLocals, []byte{0xfc, 0x12, 0x0b}), feature: "opcode 0xfc 18", fn: 0},
		{name: "unassigned SIMD", in: bodyModule(noLocals, []byte{0xfd, 0x9a, 0x01, 0x0b}), feature: "opcode 0xfd 154", fn: 0},
		{name: "relaxed SIMD", in: bodyModule(noLocals, []byte{0xfd, 0x80, 0x02, 0x0b}), feature: "opcode 0xfd 256", fn: 0},
		{name: "unassigned atomic", in: bodyModule(noLocals, []byte{0xfe, 0x04, 0x0b}), feature: "opcode 0xfe 4", fn: 0},
		{name: "GC block type", in: bodyModule(noLocals, []byte{0x02, 0x63, 0x70, 0x0b, 0x0b}), feature: "block type 0x63", fn: 0},
		{name: "GC value type in select", in: bodyModule(noLocals, []byte{0x1c, 0x01, 0x6e, 0x0b}), feature: "value type 0x6e in select", fn: 0},
		{name: "GC heap type", in: bodyModule(noLocals, []byte{0xd0, 0x6e, 0x0b}), feature: "heap type 0x6e", fn: 0},
		{name: "GC local", in: bodyModule(vec([]byte{0x01, 0x64, 0x70}), end), feature: "value type 0x64 in locals", fn: 0},
		{
			name: "function index counts imports",
			in: module(types, sec(2, vec(importEntry("f", 0x00, 0x00), importEntry("g", 0x00, 0x00))),
				sec(3, vec([]byte{0x00}, []byte{0x00})), sec(10, vec(fn(noLocals, end), fn(noLocals, []byte{0x08, 0x00, 0x0b})))),
			feature: "opcode 0x08", fn: 3,
		},
		{name: "GC import", in: module(sec(2, vec(importEntry("g", 0x03, 0x63, 0x70, 0x00)))), feature: "value type 0x63", fn: -1},
		{name: "unknown import kind", in: module(sec(2, vec(importEntry("x", 0x05, 0x00)))), feature: "import kind 0x05", fn: -1},
		{name: "unknown limits", in: module(sec(2, vec(importEntry("m", 0x02, 0x08, 0x00)))), feature: "limits flags 0x08", fn: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.exportName
			if name == "" {
				name = "flag"
			}
			out, err := Interruptible(tc.in, name)
			if err == nil {
				t.Fatalf("no error; output % x", out)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "instrument: ") || strings.Contains(msg, "\n") {
				t.Errorf("error %q is not one line prefixed with the package", msg)
			}
			var unsup *UnsupportedError
			isUnsup := errors.As(err, &unsup)
			switch {
			case errors.Is(err, ErrMalformed) != tc.malformed:
				t.Errorf("error %q: wraps ErrMalformed = %v, want %v", msg, !tc.malformed, tc.malformed)
			case errors.Is(err, ErrExportName) != tc.badName:
				t.Errorf("error %q: wraps ErrExportName = %v, want %v", msg, !tc.badName, tc.badName)
			case isUnsup != (tc.feature != ""):
				t.Errorf("error %q: unsupported = %v, want %v", msg, isUnsup, tc.feature != "")
			case isUnsup && (unsup.Feature != tc.feature || unsup.Func != tc.fn):
				t.Errorf("unsupported %q in function %d, want %q in function %d", unsup.Feature, unsup.Func, tc.feature, tc.fn)
			}
			t.Log(msg)
		})
	}
}

// TestInterruptibleTruncated cuts modules at every byte that is not a
// section boundary: each cut must be reported as malformed.
func TestInterruptibleTruncated(t *testing.T) {
	for _, tc := range rewriteCases() {
		t.Run(tc.name, func(t *testing.T) {
			boundaries := sectionBoundaries(t, tc.in)
			for cut := 0; cut < len(tc.in); cut++ {
				if boundaries[cut] {
					continue
				}
				if _, err := Interruptible(tc.in[:cut], "flag"); !errors.Is(err, ErrMalformed) {
					t.Errorf("cut at %d: error %v, want a malformed module", cut, err)
				}
			}
		})
	}
}

// sectionBoundaries returns the offsets at which sections of the
// well-formed module m start or end.
func sectionBoundaries(t *testing.T, m []byte) map[int]bool {
	at := map[int]bool{8: true}
	for i := 8; i < len(m); {
		size, p, ok := readU32(m, i+1)
		if !ok {
			t.Fatalf("bad test module at %d", i)
		}
		i = p + int(size)
		at[i] = true
	}
	return at
}
