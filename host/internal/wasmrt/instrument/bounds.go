package instrument

import (
	"errors"
	"fmt"
)

// ErrLimit is wrapped by the error [Bounded] returns when a module is over
// one of the implementation limits that every web engine keeps (the
// WebAssembly JS API's "Implementation-defined limits").
var ErrLimit = errors.New("over an implementation limit")

// maxLocals is the JS API's limit on the locals a function declares.
const maxLocals = 50000

// Bounded reports whether every count and size that wazero's decoder
// allocates by fits in the module: a vector's count in the bytes left of
// its section (each element takes a byte at least), a name's or a data
// segment's size in the bytes left, and a function's declared locals under
// the JS API's 50,000. wazero (v1.11, v1.12) allocates by such a number
// before it reads what the number promises: a code section of 200 bytes
// declaring three billion bodies made it ask for 222 GB, and the Go runtime
// ends a process whose allocation fails, whatever recovers. Bounded checks
// nothing else; wazero validates what it compiles.
//
// The error wraps [ErrMalformed] or [ErrLimit], or is an
// [*UnsupportedError] for a section or construct Bounded cannot walk (it
// cannot vouch for what follows it).
func Bounded(wasm []byte) error {
	if len(wasm) < len(header) || string(wasm[:4]) != string(header[:4]) {
		return fmt.Errorf("instrument: %w", malformed("", 0, "no wasm magic number"))
	}
	for i := len(header); i < len(wasm); {
		id := wasm[i]
		size, p, ok := readU32(wasm, i+1)
		if !ok || uint64(size) > uint64(len(wasm)-p) {
			return fmt.Errorf("instrument: %w", malformed("", i, fmt.Sprintf("section %d runs past the end of the module", id)))
		}
		end := p + int(size)
		if err := boundSection(id, wasm[:end], p); err != nil {
			return fmt.Errorf("instrument: %w", err)
		}
		i = end
	}
	return nil
}

// bounder walks one section: b is the input up to the section's end.
type bounder struct {
	b     []byte
	where string
}

// boundSection checks the section id whose contents are b[p:].
func boundSection(id byte, b []byte, p int) error {
	w := bounder{b: b, where: fmt.Sprintf("section %d", id)}
	var err error
	switch id {
	case secCustom:
		err = w.custom(p)
	case secType:
		_, err = w.vector(p, w.funcType)
	case secImport:
		_, err = w.vector(p, func(i int) (int, error) { return new(rewriter).importEntry(b, i) })
	case secExport:
		_, err = w.vector(p, w.export)
	case secElement:
		_, err = w.vector(p, w.element)
	case secCode:
		_, err = w.vector(p, w.body)
	case secData:
		_, err = w.vector(p, w.data)
	case secFunction, secTable, secMemory, secGlobal, secTag:
		_, _, err = w.count(p)
	case secStart, secDataCount:
	default:
		err = unsupported(p, "section %d", id)
	}
	return err
}

// count reads a vector's count at i and checks it against the bytes left.
func (w bounder) count(i int) (uint32, int, error) {
	n, next, ok := readU32(w.b, i)
	if !ok {
		return 0, next, malformed(w.where, i, "bad count")
	}
	if uint64(n) > uint64(len(w.b)-next) {
		return 0, next, malformed(w.where, i, fmt.Sprintf("a count of %d in %d bytes", n, len(w.b)-next))
	}
	return n, next, nil
}

// vector walks the vector at i whose elements elem walks, and returns the
// position after it.
func (w bounder) vector(i int, elem func(int) (int, error)) (int, error) {
	n, i, err := w.count(i)
	for k := uint32(0); k < n && err == nil; k++ {
		i, err = elem(i)
	}
	return i, err
}

// bytes skips the byte vector (a name, a data segment's contents) at i.
func (w bounder) bytes(i int) (int, error) {
	if end, ok := skipName(w.b, i); ok {
		return end, nil
	}
	return i, malformed(w.where, i, "a name or bytes running past the end")
}

// leb skips the LEB128 number at i.
func (w bounder) leb(i int) (int, error) {
	if next, ok := skipLEB(w.b, i, maxLen64); ok {
		return next, nil
	}
	return i, malformed(w.where, i, "truncated number")
}

// valTypes skips the vector of value types at i: one byte each, or a
// reference type's byte and its heap type.
func (w bounder) valTypes(i int) (int, error) {
	return w.vector(i, func(i int) (int, error) {
		if i < len(w.b) && (w.b[i] == 0x63 || w.b[i] == 0x64) {
			return w.leb(i + 1)
		}
		return i + 1, nil
	})
}

// funcType skips a function type at i: 0x60, the parameters, the results.
func (w bounder) funcType(i int) (int, error) {
	if i >= len(w.b) || w.b[i] != 0x60 {
		return i, unsupported(i, "type form in %s", w.where)
	}
	i, err := w.valTypes(i + 1)
	if err != nil {
		return i, err
	}
	return w.valTypes(i)
}

// export skips an export at i: its name, kind and index.
func (w bounder) export(i int) (int, error) {
	i, err := w.bytes(i)
	if err != nil {
		return i, err
	}
	return w.leb(i + 1)
}

// body checks a function body at i: its size, and the count and number of
// its locals. The instructions are wazero's to read.
func (w bounder) body(i int) (int, error) {
	start, end, ok := readName(w.b, i)
	if !ok {
		return i, malformed(w.where, i, "a function body running past the end")
	}
	in := bounder{b: w.b[:end], where: w.where}
	var locals uint64
	_, err := in.vector(start, func(i int) (int, error) {
		n, next, ok := readU32(in.b, i)
		if !ok {
			return next, malformed(w.where, i, "bad count of locals")
		}
		if locals += uint64(n); locals > maxLocals {
			return next, fmt.Errorf("%w: a function declaring more than %d locals at byte %#x", ErrLimit, maxLocals, start)
		}
		return next + 1, nil
	})
	return end, err
}
