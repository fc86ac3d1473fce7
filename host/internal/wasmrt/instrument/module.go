package instrument

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// Section ids.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// sectionRank is the place of each known non-custom section id in the
// order the binary format requires: the tag section goes between memory
// and global, the data-count section between element and code.
var sectionRank = [...]int{
	1: 1, 2: 2, 3: 3, 4: 4, 5: 5, secTag: 6, secGlobal: 7, secExport: 8,
	8: 9, 9: 10, secDataCount: 11, secCode: 12, 11: 13,
}

// header is the magic number and version 1 every module starts with.
var header = [8]byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// Interruptible returns a copy of wasm that checks a new exported mutable
// i32 global named exportName and traps (unreachable) when it is non-zero,
// and that leaves native code for the host every [YieldPeriod] checks (see
// the package documentation): every loop checks at its header, which
// covers iteration, and every function whose body has a call instruction
// (call, call_indirect, return_call, return_call_indirect) checks at its
// entry, which covers recursion. A function that neither loops nor calls
// ends by itself and is left unchecked. The flag starts at 0; the host
// sets it to stop a call. The input is not modified.
//
// The error is an [*UnsupportedError] when the binary uses a feature the
// rewriter does not decode, and wraps [ErrMalformed] or [ErrExportName]
// when the binary is not well formed or exportName cannot be used.
func Interruptible(wasm []byte, exportName string) ([]byte, error) {
	if !utf8.ValidString(exportName) {
		return nil, fmt.Errorf("instrument: %w: %q is not valid UTF-8", ErrExportName, exportName)
	}
	r := rewriter{in: wasm, name: exportName}
	if err := r.run(); err != nil {
		return nil, fmt.Errorf("instrument: %w", err)
	}
	return r.out, nil
}

// rewriter holds the state of one pass over a module.
type rewriter struct {
	in   []byte
	out  []byte
	name string // of the export of the flag global

	importedFuncs   uint32
	importedGlobals uint32
	definedGlobals  uint32

	// memory: the module has a memory (imported or defined); memory64: its
	// first memory has 64-bit addresses. See growZero.
	memory, memory64 bool

	globalDone bool // the global section with the flag is written
	exportDone bool // the export section with the flag is written

	// check is the code inserted after each loop header and at the entry
	// of each body that has a call; loops and entries count the two.
	check   []byte
	loops   int
	entries int
}

// run checks the header and rewrites the sections in order, adding the
// global and export sections where they belong when the module has none.
func (r *rewriter) run() error {
	if err := r.header(); err != nil {
		return err
	}
	r.out = make([]byte, 0, len(r.in)+len(r.in)/32+64)
	r.out = append(r.out, header[:]...)
	last := 0
	for i := len(header); i < len(r.in); {
		id := r.in[i]
		size, p, ok := readU32(r.in, i+1)
		if !ok {
			return malformed("", i+1, fmt.Sprintf("bad size of section %d", id))
		}
		if uint64(size) > uint64(len(r.in)-p) {
			return malformed("", i, fmt.Sprintf("section %d runs past the end of the module", id))
		}
		end := p + int(size)
		if id != secCustom {
			if int(id) >= len(sectionRank) || sectionRank[id] == 0 {
				return unsupported(i, "section %d", id)
			}
			rank := sectionRank[id]
			if rank <= last {
				return malformed("", i, fmt.Sprintf("section %d out of order or repeated", id))
			}
			last = rank
			if err := r.addMissing(rank); err != nil {
				return err
			}
		}
		if err := r.section(id, i, p, end); err != nil {
			return err
		}
		i = end
	}
	return r.addMissing(math.MaxInt)
}

// header checks the magic number and the version.
func (r *rewriter) header() error {
	if len(r.in) < len(header) || string(r.in[:4]) != string(header[:4]) {
		return malformed("", 0, "no wasm magic number")
	}
	if string(r.in[4:8]) != string(header[4:8]) {
		return unsupported(4, "binary version % x", r.in[4:8])
	}
	return nil
}

// addMissing writes new global and export sections when a section of the
// given rank is next and they have not been written yet.
func (r *rewriter) addMissing(rank int) error {
	if !r.globalDone && rank > sectionRank[secGlobal] {
		if err := r.globals(nil, 0, 0); err != nil {
			return err
		}
	}
	if !r.exportDone && rank > sectionRank[secExport] {
		return r.exports(nil, 0, 0)
	}
	return nil
}

// section rewrites or copies the section with the given id that starts
// at start and whose contents are in[p:end].
func (r *rewriter) section(id byte, start, p, end int) error {
	b := r.in[:end]
	switch id {
	case secImport:
		if err := r.imports(b, p); err != nil {
			return err
		}
	case secMemory:
		r.memories(b, p)
	case secGlobal:
		return r.globals(b, p, end)
	case secExport:
		return r.exports(b, p, end)
	case secCode:
		return r.code(b, p)
	}
	r.out = append(r.out, r.in[start:end]...)
	return nil
}

// flagIndex returns the index of the flag global: after the imported and
// the defined globals. The budget global follows it.
func (r *rewriter) flagIndex() (uint32, error) {
	n := uint64(r.importedGlobals) + uint64(r.definedGlobals)
	if n+1 >= math.MaxUint32 {
		return 0, malformed("global section", 0, "too many globals")
	}
	return uint32(n), nil
}

// YieldPeriod is how many checks a guest passes between two exits to the
// host (see the package documentation).
const YieldPeriod = 4096

// yieldPeriodSLEB is YieldPeriod as a signed LEB128 number.
var yieldPeriodSLEB = [2]byte{0x80 | YieldPeriod&0x7f, YieldPeriod >> 7 & 0x7f}

// checkFor returns the check on the flag and budget globals; yield is the
// code that leaves native code for the host (growZero), or nothing:
//
//	global.get budget; i32.const 1; i32.sub; global.set budget
//	global.get budget; i32.eqz
//	if
//	  i32.const YieldPeriod; global.set budget
//	  global.get flag; if unreachable end
//	  yield
//	end
func checkFor(flag, budget uint32, yield []byte) []byte {
	c := appendU32([]byte{opGlobalGet}, budget)
	c = appendU32(append(c, opI32Const, 0x01, opI32Sub, opGlobalSet), budget)
	c = appendU32(append(c, opGlobalGet), budget)
	c = append(c, opI32Eqz, opIf, blockEmpty, opI32Const, yieldPeriodSLEB[0], yieldPeriodSLEB[1], opGlobalSet)
	c = appendU32(c, budget)
	c = appendU32(append(c, opGlobalGet), flag)
	c = append(c, opIf, blockEmpty, opUnreachable, opEnd)
	c = append(c, yield...)
	return append(c, opEnd)
}

// growZero returns `memory.grow 0; drop` on the module's first memory:
// compiled by wazero, memory.grow leaves native code for Go, where the Go
// scheduler can preempt the goroutine (a stop-the-world of the garbage
// collector waits for every goroutine to reach such a point, and nothing in
// native wasm code is one). A module without a memory gets no yield.
func (r *rewriter) growZero() []byte {
	switch {
	case !r.memory:
		return nil
	case r.memory64:
		return []byte{opI64Const, 0x00, opMemoryGrow, 0x00, opDrop}
	}
	return []byte{opI32Const, 0x00, opMemoryGrow, 0x00, opDrop}
}
