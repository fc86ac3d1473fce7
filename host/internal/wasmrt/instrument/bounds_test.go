package instrument

import (
	"errors"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// huge is a LEB128 count of 3 billion, as the fuzzer's crasher declared.
var huge = leb(3_000_000_000)

// TestBounded: every count and size wazero allocates by is checked against
// the bytes left; a module within bounds passes, whatever else is wrong
// with it (wazero's to say).
func TestBounded(t *testing.T) {
	body := fn(noLocals, end)
	tests := []struct {
		name string
		in   []byte
		is   error  // nil: within bounds
		says string // in the message
	}{
		{"minimal", module(sec(1, vec(voidType)), sec(3, vec([]byte{0})), code(body)), nil, ""},
		{"every section", module(
			sec(1, vec(voidType, i32i32Type)),
			sec(2, vec(importEntry("m", 0x00, 0x00))),
			sec(3, vec([]byte{0})),
			sec(4, vec([]byte{0x70, 0x00, 0x01})),
			sec(5, vec([]byte{0x00, 0x01})),
			globalSec(i32Global),
			sec(7, vec(funcExport("f", 1))),
			sec(9, vec(
				cat([]byte{0x00, 0x41, 0x00, 0x0b}, vec([]byte{0x01})),
				cat([]byte{0x05, 0x70}, vec([]byte{0xd2, 0x01, 0x0b}, []byte{0xd0, 0x70, 0x0b})),
			)),
			code(body),
			sec(11, vec(cat([]byte{0x00, 0x41, 0x08, 0x0b}, str("data")), cat([]byte{0x01}, str("passive")))),
			custom("name", cat([]byte{0x01}, leb(7), vec(cat(leb(1), str("f")), cat(leb(2), str("g"))))...),
			custom("other", huge...), // not decoded: any bytes
		), nil, ""},
		{"not wasm", []byte("#!/bin/sh"), ErrMalformed, "magic"},
		{"section past the end", module(cat([]byte{10}, leb(200), vec())), ErrMalformed, "past the end"},
		{"code count", module(cat([]byte{10}, leb(6), huge, []byte{0})), ErrMalformed, "a count of 3000000000"},
		{"type count", module(sec(1, huge, voidType)), ErrMalformed, "a count of"},
		{"function count", module(sec(3, huge)), ErrMalformed, "a count of"},
		{"parameter count", module(sec(1, vec(cat([]byte{0x60}, huge, []byte{0x7f})))), ErrMalformed, "a count of"},
		{"import name", module(sec(2, vec(cat(huge, []byte("m"))))), ErrMalformed, "truncated import"},
		{"export name", module(sec(7, vec(cat(huge, []byte("f"))))), ErrMalformed, "past the end"},
		{"body size", module(sec(10, vec(cat(huge, []byte{0x00, 0x0b})))), ErrMalformed, "body running past"},
		{"locals count", module(code(cat(leb(6), huge, []byte{0x0b}))), ErrMalformed, "a count of"},
		{"many locals", module(code(fn(vec(cat(leb(50001), []byte{0x7f})), end))), ErrLimit, "50000 locals"},
		{"locals summed", module(code(fn(vec(cat(leb(30000), []byte{0x7f}), cat(leb(30000), []byte{0x7e})), end))), ErrLimit, "locals"},
		{"element indices", module(sec(9, vec(cat([]byte{0x01, 0x00}, huge)))), ErrMalformed, "a count of"},
		{"element expressions", module(sec(9, vec(cat([]byte{0x04, 0x41, 0x00, 0x0b}, huge)))), ErrMalformed, "a count of"},
		{"data bytes", module(sec(11, vec(cat([]byte{0x01}, huge, []byte("d"))))), ErrMalformed, "past the end"},
		{"data offset", module(sec(11, vec([]byte{0x00, 0x41}))), ErrMalformed, "truncated"},
		{"module name", module(custom("name", cat([]byte{0x00, 0x06}, huge, []byte("m"))...)), ErrMalformed, "past the end"},
		{"function names", module(custom("name", cat([]byte{0x01, 0x06}, huge, []byte{0x00})...)), ErrMalformed, "a count of"},
		{"local names", module(custom("name", cat([]byte{0x02, 0x07}, vec(cat(leb(0), huge)))...)), ErrMalformed, "a count of"},
		{"name subsection", module(custom("name", 0x01, 0x7f)), ErrMalformed, "subsection running past"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Bounded(tt.in)
			if tt.is == nil {
				if err != nil {
					t.Fatalf("Bounded: %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("Bounded: %v, want %v saying %q", err, tt.is, tt.says)
			}
		})
	}
}

// TestBoundedUnsupported: a construct Bounded cannot walk is reported, as
// it cannot vouch for what follows.
func TestBoundedUnsupported(t *testing.T) {
	for name, in := range map[string][]byte{
		"section":  module(sec(14, []byte{0})),
		"type":     module(sec(1, vec([]byte{0x5f, 0x00}))),
		"element":  module(sec(9, vec([]byte{0x08}))),
		"constant": module(sec(11, vec([]byte{0x00, 0x20, 0x00, 0x0b}))),
	} {
		var unsupported *UnsupportedError
		if err := Bounded(in); !errors.As(err, &unsupported) {
			t.Errorf("%s: Bounded: %v, want an *UnsupportedError", name, err)
		}
	}
}

// TestBoundedGuests: the modules built from the repo's sources, and their
// rewrites, are within bounds, and wazero compiles them.
func TestBoundedGuests(t *testing.T) {
	for _, pkg := range guests {
		t.Run(pkg, func(t *testing.T) {
			in := wasmtest.Bytes(t, pkg)
			if err := Bounded(in); err != nil {
				t.Fatalf("Bounded(module): %v", err)
			}
			out, err := Interruptible(in, flagName)
			if err != nil {
				t.Fatal(err)
			}
			if err := Bounded(out); err != nil {
				t.Fatalf("Bounded(rewrite): %v", err)
			}
		})
	}
}

// BenchmarkBounded: the walk before each compile, on a standard-Go guest.
func BenchmarkBounded(b *testing.B) {
	in := wasmtest.Bytes(b, "testguests/good")
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if err := Bounded(in); err != nil {
			b.Fatal(err)
		}
	}
}
