package instrument

// A tiny assembler for test modules: sections are built from byte slices,
// and function bodies from instructions, with loops written through a
// function so that the same body can be built with and without the checks
// the rewriter inserts.

// leb encodes v as unsigned LEB128 (independently of the package's own
// encoder).
func leb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// sleb encodes v as signed LEB128.
func sleb(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// cat concatenates byte slices.
func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// vec is a vector: the count of items, then the items.
func vec(items ...[]byte) []byte {
	return cat(leb(uint64(len(items))), cat(items...))
}

// str is a name: its length, then its bytes.
func str(s string) []byte {
	return cat(leb(uint64(len(s))), []byte(s))
}

// sec is a section with the given id and contents.
func sec(id byte, contents ...[]byte) []byte {
	c := cat(contents...)
	return cat([]byte{id}, leb(uint64(len(c))), c)
}

// custom is a custom section with the given name and payload.
func custom(name string, payload ...byte) []byte {
	return sec(0, str(name), payload)
}

// module is the wasm header followed by the sections.
func module(sections ...[]byte) []byte {
	return cat([]byte("\x00asm\x01\x00\x00\x00"), cat(sections...))
}

// fn is a sized function body: local declarations (a vector) and code.
func fn(locals []byte, code ...[]byte) []byte {
	b := cat(locals, cat(code...))
	return cat(leb(uint64(len(b))), b)
}

// noLocals is an empty vector of local declarations.
var noLocals = vec()

// code is a code section.
func code(bodies ...[]byte) []byte { return sec(10, vec(bodies...)) }

// loopFunc writes a loop instruction with its block type; bodies are built
// by functions of one, so that a test can build the input with plainLoop
// and the expected output with checkedLoop(index).
type loopFunc func(blockType ...byte) []byte

// plainLoop is a loop instruction as the input has it.
func plainLoop(bt ...byte) []byte { return cat([]byte{0x03}, bt) }

// checkOf is the check of the flag global idx and the budget global idx+1
// in a module without a memory (no yield).
func checkOf(idx uint64) []byte { return checkBytes(idx, nil) }

// checkGrowOf is the check in a module whose first memory is 32-bit: its
// yield is i32.const 0; memory.grow 0; drop.
func checkGrowOf(idx uint64) []byte {
	return checkBytes(idx, []byte{0x41, 0x00, 0x40, 0x00, 0x1a})
}

// checkGrow64Of is the check in a module whose first memory is 64-bit.
func checkGrow64Of(idx uint64) []byte {
	return checkBytes(idx, []byte{0x42, 0x00, 0x40, 0x00, 0x1a})
}

// checkBytes spells out the check: count the budget down, and when it
// reaches zero refill it (4096, LEB 0x80 0x20), trap if the flag is set,
// and yield.
func checkBytes(idx uint64, yield []byte) []byte {
	budget := leb(idx + 1)
	return cat(
		[]byte{0x23}, budget, []byte{0x41, 0x01, 0x6b, 0x24}, budget, // budget--
		[]byte{0x23}, budget, []byte{0x45, 0x04, 0x40}, // if budget == 0
		[]byte{0x41, 0x80, 0x20, 0x24}, budget, // budget = 4096
		[]byte{0x23}, leb(idx), []byte{0x04, 0x40, 0x00, 0x0b}, // if flag: unreachable
		yield, end)
}

// checkedLoop returns a loopFunc that writes a loop followed by the check
// of global idx (in a module without a memory).
func checkedLoop(idx uint64) loopFunc { return loopWith(checkOf(idx)) }

// loopWith returns a loopFunc that writes a loop followed by check.
func loopWith(check []byte) loopFunc {
	return func(bt ...byte) []byte {
		return cat(plainLoop(bt...), check)
	}
}

// globalSec is a global section holding the given entries and then the
// flag (i32 = 0) and budget (i32 = 4096) globals.
func globalSec(entries ...[]byte) []byte {
	return sec(6, vec(append(entries, []byte{0x7f, 0x01, 0x41, 0x00, 0x0b}, []byte{0x7f, 0x01, 0x41, 0x80, 0x20, 0x0b})...))
}

// exportSec is an export section with the given entries and the export of
// the flag global idx under name.
func exportSec(name string, idx uint64, entries ...[]byte) []byte {
	return sec(7, vec(append(entries, cat(str(name), []byte{0x03}, leb(idx)))...))
}

// Common pieces.
var (
	voidType   = []byte{0x60, 0x00, 0x00}             // () -> ()
	i32i32Type = []byte{0x60, 0x01, 0x7f, 0x01, 0x7f} // (i32) -> i32
	i32Global  = []byte{0x7f, 0x00, 0x41, 0x07, 0x0b} // immutable i32 = 7
	end        = []byte{0x0b}
)

// funcExport is an export entry of function idx.
func funcExport(name string, idx uint64) []byte {
	return cat(str(name), []byte{0x00}, leb(idx))
}

// importEntry is an import entry of module "env".
func importEntry(name string, desc ...byte) []byte {
	return cat(str("env"), str(name), desc)
}
