package instrument

import (
	"bytes"
	"math"
	"testing"
)

// nestedLoops is a body of three nested loops, one with a branch out.
func nestedLoops(loop loopFunc) []byte {
	return cat(loop(0x40), loop(0x40), []byte{0x0c, 0x01}, loop(0x40), end, end, end, end)
}

// allImmediates is a body (not type-correct: the rewriter does not care)
// with every immediate form the walker knows, including bytes that look
// like loop and end opcodes inside immediates.
func allImmediates(loop loopFunc) []byte {
	return cat(
		// block types: empty, value types, type indices of one and two bytes
		[]byte{0x02, 0x40, 0x02, 0x7f, 0x04, 0x7b, 0x05, 0x0b, 0x02, 0x05, 0x02, 0xc8, 0x01},
		loop(0x40), loop(0x7e), loop(0x70), loop(0x6f), loop(0x01), loop(0xc8, 0x01),
		[]byte{0x0c, 0x03, 0x0d, 0x81, 0x01},                                     // br, br_if
		[]byte{0x0e, 0x03, 0x00, 0x03, 0x80, 0x01, 0x02},                         // br_table
		[]byte{0x0f, 0x10, 0x85, 0x02, 0x11, 0x02, 0x00},                         // return call call_indirect
		[]byte{0x11, 0x03, 0x01, 0x12, 0x03, 0x13, 0x01, 0x00},                   // call_indirect return_call(_indirect)
		[]byte{0x1a, 0x1b, 0x1c, 0x01, 0x7f, 0x1c, 0x02, 0x70, 0x6f},             // drop select select t*
		[]byte{0x20, 0x00, 0x21, 0x01, 0x22, 0x90, 0x03, 0x23, 0x00, 0x24, 0x03}, // locals, globals
		[]byte{0x25, 0x00, 0x26, 0x01},                                           // table.get/set
		[]byte{0x28, 0x02, 0x00, 0x29, 0x03, 0x80, 0x80, 0x04, 0x3e, 0x02, 0x03}, // loads, stores
		[]byte{0x36, 0x42, 0x01, 0x08},                                           // multi-memory memarg
		[]byte{0x37, 0x03}, leb(1<<40),                                           // memory64 offset
		[]byte{0x3f, 0x00, 0x40, 0x01}, // memory.size/grow
		[]byte{0x41}, sleb(-1), []byte{0x41}, sleb(math.MinInt32), []byte{0x41}, sleb(3),
		[]byte{0x42}, sleb(math.MinInt64), []byte{0x42}, sleb(1<<62),
		[]byte{0x43, 0x03, 0x0b, 0x03, 0x40},                         // f32.const
		[]byte{0x44, 0x03, 0x40, 0x03, 0x40, 0x0b, 0x0b, 0x0b, 0x0b}, // f64.const
		[]byte{0x45, 0x6a, 0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4},       // numeric, sign extension
		[]byte{0xd0, 0x70, 0xd0, 0x6f, 0xd1, 0xd2, 0x03},             // reference types
		// saturating truncation, bulk memory, table ops; a padded sub-opcode
		[]byte{0xfc, 0x00, 0xfc, 0x01, 0xfc, 0x02, 0xfc, 0x03, 0xfc, 0x04, 0xfc, 0x05, 0xfc, 0x06, 0xfc, 0x07},
		[]byte{0xfc, 0x08, 0x01, 0x00, 0xfc, 0x09, 0x01, 0xfc, 0x0a, 0x00, 0x00, 0xfc, 0x0b, 0x00},
		[]byte{0xfc, 0x0c, 0x02, 0x00, 0xfc, 0x0d, 0x02, 0xfc, 0x0e, 0x00, 0x01, 0xfc, 0x0f, 0x00},
		[]byte{0xfc, 0x10, 0x00, 0xfc, 0x11, 0x00, 0xfc, 0x8b, 0x00, 0x00},
		// SIMD: memargs, v128.const, shuffle, lanes, load/store lane, zero loads
		[]byte{0xfd, 0x00, 0x04, 0x00, 0xfd, 0x0b, 0x04, 0x10},
		[]byte{0xfd, 0x0c}, bytes.Repeat([]byte{0x03, 0x0b}, 8),
		[]byte{0xfd, 0x0d}, bytes.Repeat([]byte{0x03}, 16),
		[]byte{0xfd, 0x0e, 0xfd, 0x15, 0x03, 0xfd, 0x22, 0x01},
		[]byte{0xfd, 0x54, 0x00, 0x00, 0x0f, 0xfd, 0x5b, 0x03, 0x08, 0x01},
		[]byte{0xfd, 0x5c, 0x02, 0x00, 0xfd, 0x5d, 0x03, 0x00},
		[]byte{0xfd, 0x80, 0x01, 0xfd, 0xff, 0x01}, // i16x8.abs, f64x2.convert_low_i32x4_u
		// threads: notify, fence, atomic load, cmpxchg
		[]byte{0xfe, 0x00, 0x02, 0x00, 0xfe, 0x03, 0x00, 0xfe, 0x10, 0x02, 0x00, 0xfe, 0x4e, 0x03, 0x00},
		end, end, end, end, end, end, end, end, end, end, end,
	)
}

// countTo is (i32 n) -> i32: i = 0; do i++ while i < n; return i.
func countTo(loop loopFunc) []byte {
	return cat(loop(0x40), []byte{
		0x20, 0x01, 0x41, 0x01, 0x6a, 0x22, 0x01, // local.get 1; i32.const 1; i32.add; local.tee 1
		0x20, 0x00, 0x48, 0x0d, 0x00, // local.get 0; i32.lt_s; br_if 0
		0x0b, 0x20, 0x01, 0x0b, // end; local.get 1; end
	})
}

// spin is () -> (): loop br 0 end.
func spin(loop loopFunc) []byte {
	return cat(loop(0x40), []byte{0x0c, 0x00, 0x0b, 0x0b})
}

// pow2 is (i32 n) -> i32, function self: n == 0 ? 1 : f(n-1) + f(n-1). It
// makes 2^n calls and has no loop.
func pow2(self uint64) []byte {
	half := cat([]byte{0x20, 0x00, 0x41, 0x01, 0x6b, 0x10}, leb(self)) // local.get 0; i32.const 1; i32.sub; call self
	return cat(
		[]byte{0x20, 0x00, 0x45, 0x04, 0x7f, 0x41, 0x01, 0x05}, // local.get 0; i32.eqz; if (result i32) i32.const 1 else
		half, half, []byte{0x6a, 0x0b, 0x0b}, // i32.add; end; end
	)
}

// double is (i32 n) -> i32: n + n, a leaf.
func double() []byte {
	return []byte{0x20, 0x00, 0x20, 0x00, 0x6a, 0x0b}
}

// recursiveModule is a valid module exporting pow2 (function 0: calls, no
// loop) and double (function 1: neither), built as the input (flag "") or
// as the output of the rewrite with the flag exported under that name.
func recursiveModule(flag string) []byte {
	entry, globals, exports := []byte(nil), []byte(nil), sec(7, vec(funcExport("pow2", 0), funcExport("double", 1)))
	if flag != "" {
		entry, globals = checkOf(0), globalSec()
		exports = exportSec(flag, 0, funcExport("pow2", 0), funcExport("double", 1))
	}
	return module(
		sec(1, vec(i32i32Type)),
		sec(3, vec([]byte{0x00}, []byte{0x00})),
		globals,
		exports,
		code(fn(noLocals, entry, pow2(0)), fn(noLocals, double())),
	)
}

// counterModule is a valid module exporting spin and count, built as the
// input (flag "") or as the output of the rewrite with the flag exported
// under that name.
func counterModule(flag string) []byte {
	loop, globals, exports := plainLoop, []byte(nil), sec(7, vec(funcExport("spin", 0), funcExport("count", 1)))
	if flag != "" {
		loop, globals = checkedLoop(0), globalSec()
		exports = exportSec(flag, 0, funcExport("spin", 0), funcExport("count", 1))
	}
	return module(
		sec(1, vec(voidType, i32i32Type)),
		sec(3, vec([]byte{0x00}, []byte{0x01})),
		globals,
		exports,
		code(fn(noLocals, spin(loop)), fn(vec([]byte{0x01, 0x7f}), countTo(loop))),
	)
}

// rewriteCase is an input module and the output expected for export name
// "flag".
type rewriteCase struct {
	name        string
	in, want    []byte
	wantLoops   int // checks after loop headers
	wantEntries int // checks at the entry of bodies that call
}

// rewriteCases builds the table of hand-assembled modules.
func rewriteCases() []rewriteCase {
	chk0 := checkedLoop(0)
	// With a memory the checks yield: imports has a 64-bit memory, memory
	// a 32-bit one.
	grow0, grow64at2, grow64at4 := loopWith(checkGrowOf(0)), loopWith(checkGrow64Of(2)), loopWith(checkGrow64Of(4))
	types := sec(1, vec(voidType, i32i32Type))
	oneFunc := sec(3, vec([]byte{0x00}))
	memory := sec(5, vec([]byte{0x00, 0x01}))
	imports := sec(2, vec(
		importEntry("f", 0x00, 0x00),
		importEntry("g1", 0x03, 0x7f, 0x00),
		importEntry("m", 0x02, 0x05, 0x01, 0x02), // shared memory 1..2
		importEntry("t", 0x01, 0x70, 0x00, 0x01), // funcref table, min 1
		importEntry("g2", 0x03, 0x7e, 0x01),
		importEntry("e", 0x04, 0x00, 0x00), // tag
	))
	locals := vec([]byte{0x03, 0x7f}, cat(leb(200), []byte{0x7b}), []byte{0x01, 0x70})
	padded := []byte{0x85, 0x80, 0x80, 0x80, 0x00} // 5, non-minimal
	grown := func(loop loopFunc) []byte {
		return cat(loop(0x40), bytes.Repeat([]byte{0x01}, 119), end, end)
	}
	return []rewriteCase{{
		name: "empty module",
		in:   module(),
		want: module(globalSec(), exportSec("flag", 0)),
	}, {
		name: "no global or export section, nested loops",
		in:   module(types, oneFunc, code(fn(noLocals, nestedLoops(plainLoop)))),
		want: module(types, oneFunc, globalSec(), exportSec("flag", 0),
			code(fn(noLocals, nestedLoops(chk0)))),
		wantLoops: 3,
	}, {
		name: "imported and defined globals",
		in: module(types, imports, oneFunc, sec(6, vec(i32Global, i32Global)),
			sec(7, vec(funcExport("run", 1))), code(fn(noLocals, nestedLoops(plainLoop)))),
		want: module(types, imports, oneFunc, globalSec(i32Global, i32Global),
			exportSec("flag", 4, funcExport("run", 1)), code(fn(noLocals, nestedLoops(grow64at4)))),
		wantLoops: 3,
	}, {
		name: "memory and tag sections, no global section",
		in: module(types, oneFunc, memory, sec(13, vec([]byte{0x00, 0x00})),
			sec(7, vec(funcExport("run", 0))), code(fn(noLocals, spin(plainLoop)))),
		want: module(types, oneFunc, memory, sec(13, vec([]byte{0x00, 0x00})), globalSec(),
			exportSec("flag", 0, funcExport("run", 0)), code(fn(noLocals, spin(grow0)))),
		wantLoops: 1,
	}, {
		name: "custom sections, data count and data",
		in: module(custom("first", 1, 2), types, custom("mid"), oneFunc, memory, custom("after memory", 3),
			sec(12, leb(1)), code(fn(noLocals, spin(plainLoop))), sec(11, vec([]byte{0x01, 0x00})),
			custom("name", 0x03, 0x03)),
		want: module(custom("first", 1, 2), types, custom("mid"), oneFunc, memory, custom("after memory", 3),
			globalSec(), exportSec("flag", 0), sec(12, leb(1)), code(fn(noLocals, spin(grow0))),
			sec(11, vec([]byte{0x01, 0x00})), custom("name", 0x03, 0x03)),
		wantLoops: 1,
	}, {
		name: "every immediate, locals of several types",
		in: module(types, imports, sec(3, vec([]byte{0x00}, []byte{0x00})),
			code(fn(noLocals, allImmediates(plainLoop)), fn(locals, nestedLoops(plainLoop)))),
		want: module(types, imports, sec(3, vec([]byte{0x00}, []byte{0x00})),
			globalSec(), exportSec("flag", 2),
			code(fn(noLocals, checkGrow64Of(2), allImmediates(grow64at2)), fn(locals, nestedLoops(grow64at2)))),
		wantLoops:   9,
		wantEntries: 1,
	}, {
		name: "call and no loop: check at the entry, after the locals",
		in:   module(types, oneFunc, code(fn(locals, pow2(0)))),
		want: module(types, oneFunc, globalSec(), exportSec("flag", 0),
			code(fn(locals, checkOf(0), pow2(0)))),
		wantEntries: 1,
	}, {
		name: "neither call nor loop: body unchanged",
		in:   module(types, oneFunc, code(fn(locals, double()))),
		want: module(types, oneFunc, globalSec(), exportSec("flag", 0), code(fn(locals, double()))),
	}, {
		name:        "each call instruction alone; call opcodes inside immediates",
		in:          module(types, imports, code(callers(nil)...)),
		want:        module(types, imports, globalSec(), exportSec("flag", 2), code(callers(checkGrow64Of(2))...)),
		wantEntries: 4,
	}, {
		name: "entry check grows a body size a byte, a leaf after it keeps two bytes",
		in: module(types, sec(3, vec([]byte{0x00}, []byte{0x00})),
			code(fn(noLocals, bigCaller), fn(noLocals, bigLeaf))),
		want: module(types, sec(3, vec([]byte{0x00}, []byte{0x00})), globalSec(), exportSec("flag", 0),
			code(fn(noLocals, checkOf(0), bigCaller), fn(noLocals, bigLeaf))),
		wantEntries: 1,
	}, {
		name:      "body and section sizes grow a byte",
		in:        module(types, oneFunc, code(fn(noLocals, grown(plainLoop)))),
		want:      module(types, oneFunc, globalSec(), exportSec("flag", 0), code(fn(noLocals, grown(chk0)))),
		wantLoops: 1,
	}, {
		name: "padded body size shrinks",
		in:   module(types, oneFunc, sec(10, vec(cat(padded, noLocals, []byte{0x01, 0x01, 0x01, 0x0b})))),
		want: module(types, oneFunc, globalSec(), exportSec("flag", 0),
			code(fn(noLocals, []byte{0x01, 0x01, 0x01, 0x0b}))),
	}, {
		name:      "valid counter module",
		in:        counterModule(""),
		want:      counterModule("flag"),
		wantLoops: 2,
	}, {
		name:        "valid recursive module",
		in:          recursiveModule(""),
		want:        recursiveModule("flag"),
		wantEntries: 1,
	}}
}

// callers are five bodies, built with entry before the first instruction
// of those that call: one for each call instruction (call, call_indirect,
// return_call, return_call_indirect), then a leaf whose immediates hold
// the call opcodes.
func callers(entry []byte) [][]byte {
	return [][]byte{
		fn(noLocals, entry, []byte{0x10, 0x00, 0x0b}),
		fn(noLocals, entry, []byte{0x41, 0x00, 0x11, 0x00, 0x00, 0x0b}),
		fn(noLocals, entry, []byte{0x12, 0x90, 0x01, 0x0b}),
		fn(noLocals, entry, []byte{0x41, 0x00, 0x13, 0x01, 0x00, 0x0b}),
		fn(noLocals, []byte{0x41, 0x10, 0x1a, 0x20, 0x11, 0x1a, 0x42, 0x12, 0x1a, 0x43, 0x13, 0x10, 0x11, 0x12, 0x1a, 0x0b}),
	}
}

// bigCaller is a body of 127 bytes with its (empty) locals that calls;
// bigLeaf one of 200 bytes that does not.
var (
	bigCaller = cat([]byte{0x10, 0x00}, bytes.Repeat([]byte{0x01}, 122), []byte{0x1a, 0x0b})
	bigLeaf   = cat(bytes.Repeat([]byte{0x01}, 198), end)
)

func TestInterruptibleRewrites(t *testing.T) {
	for _, tc := range rewriteCases() {
		t.Run(tc.name, func(t *testing.T) {
			orig := bytes.Clone(tc.in)
			r := rewriter{in: tc.in, name: "flag"}
			if err := r.run(); err != nil {
				t.Fatalf("rewrite: %v", err)
			}
			if !bytes.Equal(r.out, tc.want) {
				t.Errorf("output differs\n got % x\nwant % x", r.out, tc.want)
			}
			if r.loops != tc.wantLoops || r.entries != tc.wantEntries {
				t.Errorf("loops, entries = %d, %d; want %d, %d", r.loops, r.entries, tc.wantLoops, tc.wantEntries)
			}
			if !bytes.Equal(tc.in, orig) {
				t.Error("input was modified")
			}
			out, err := Interruptible(tc.in, "flag")
			if err != nil || !bytes.Equal(out, tc.want) {
				t.Errorf("Interruptible = % x, %v; want the same output", out, err)
			}
		})
	}
}
