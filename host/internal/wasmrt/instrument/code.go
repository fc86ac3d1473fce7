package instrument

import (
	"fmt"
	"math"
)

// code rewrites the code section whose contents are b[p:]: every body
// gets the check after each loop header and, when it calls, at its entry;
// the sizes are recomputed.
func (r *rewriter) code(b []byte, p int) error {
	n, i, ok := readU32(b, p)
	if !ok {
		return malformed("code section", p, "bad count")
	}
	r.out = append(r.out, secCode)
	sizeAt, room := len(r.out), lebLen(uint32(len(b)-p))
	r.out = append(r.out, reserved[:room]...)
	start := len(r.out)
	r.out = appendU32(r.out, n)
	for k := uint32(0); k < n; k++ {
		var err error
		if i, err = r.body(b, i, int(uint64(r.importedFuncs)+uint64(k))); err != nil {
			return err
		}
	}
	if i != len(b) {
		return malformed("code section", i, "trailing bytes")
	}
	size := len(r.out) - start
	if uint64(size) > math.MaxUint32 {
		return malformed("code section", p, "section too large after rewriting")
	}
	r.out = fillSize(r.out, sizeAt, room, uint32(size))
	return nil
}

// body rewrites the sized function body at b[i:] of function fn and
// returns the position after it.
func (r *rewriter) body(b []byte, i, fn int) (int, error) {
	w := walker{fn: fn}
	size, p, ok := readU32(b, i)
	if !ok || uint64(size) > uint64(len(b)-p) {
		return i, w.malformed(i, "bad body size")
	}
	end := p + int(size)
	w.b = b[:end]
	q, err := w.locals(p)
	if err != nil {
		return i, err
	}
	sizeAt, room := len(r.out), lebLen(size)
	r.out = append(r.out, reserved[:room]...)
	start := len(r.out)
	r.out = append(r.out, b[p:q]...)
	// The entry check goes in before the first instruction. Most bodies
	// call, so it is written now and taken out again when this one does
	// not.
	entry := len(r.out)
	r.out = append(r.out, r.check...)
	var loops int
	var calls bool
	if r.out, loops, calls, err = w.expr(r.out, q, r.check); err != nil {
		return i, err
	}
	r.loops += loops
	if calls {
		r.entries++
	} else {
		n := copy(r.out[entry:], r.out[entry+len(r.check):])
		r.out = r.out[:entry+n]
	}
	newSize := len(r.out) - start
	if uint64(newSize) > math.MaxUint32 {
		return i, w.malformed(i, "body too large after rewriting")
	}
	r.out = fillSize(r.out, sizeAt, room, uint32(newSize))
	return end, nil
}

// walker walks the instructions of one function body.
type walker struct {
	b  []byte // the input up to the end of the body
	fn int    // function index, for errors
}

// malformed returns an error wrapping ErrMalformed for the body.
func (w *walker) malformed(off int, what string) error {
	return malformed(fmt.Sprintf("function %d", w.fn), off, what)
}

// unsupported returns an *UnsupportedError for the body.
func (w *walker) unsupported(off int, format string, args ...any) error {
	return &UnsupportedError{Feature: fmt.Sprintf(format, args...), Func: w.fn, Offset: off}
}

// locals returns the position after the local declarations at b[i:].
func (w *walker) locals(i int) (int, error) {
	n, i, ok := readU32(w.b, i)
	if !ok {
		return i, w.malformed(i, "bad count of local declarations")
	}
	for k := uint32(0); k < n; k++ {
		if i, ok = skipLEB(w.b, i, maxLen32); !ok || i >= len(w.b) {
			return i, w.malformed(i, "truncated local declarations")
		}
		if !isValType(w.b[i]) {
			return i, w.unsupported(i, "value type 0x%02x in locals", w.b[i])
		}
		i++
	}
	return i, nil
}

// expr appends the instructions from b[i:] to the end of the body to out,
// with check after every loop header, and returns it with the number of
// loops and whether the body has a call instruction (call, call_indirect,
// return_call, return_call_indirect). The last instruction must be end.
func (w *walker) expr(out []byte, i int, check []byte) (_ []byte, loops int, calls bool, err error) {
	b := w.b
	copied := i
	ended := false
	for i < len(b) {
		at, op := i, b[i]
		i++
		ended = op == opEnd
		k := opKinds[op]
		switch k {
		case immNone:
			continue
		case immIdx:
			var ok bool
			if i, ok = skipLEB(b, i, maxLen32); !ok {
				return out, 0, false, w.truncated(at, op)
			}
			if op == opCall || op == opReturnCall {
				calls = true
			}
			continue
		case immIdx2: // only call_indirect and return_call_indirect
			calls = true
		case immPrefixFC, immPrefixFD, immPrefixFE:
			sub, next, ok := readU32(b, i)
			if !ok {
				return out, 0, false, w.malformed(at, fmt.Sprintf("bad sub-opcode after 0x%02x", op))
			}
			if k = prefixKind(op, sub); k == immUnknown {
				return out, 0, false, w.unsupported(at, "opcode 0x%02x %d", op, sub)
			}
			i = next
		case immUnknown:
			return out, 0, false, w.unsupported(at, "opcode 0x%02x", op)
		}
		if i, err = w.immediate(k, op, at, i); err != nil {
			return out, 0, false, err
		}
		if k == immLoop {
			out = append(out, b[copied:i]...)
			out = append(out, check...)
			copied = i
			loops++
		}
	}
	if !ended {
		return out, 0, false, w.malformed(i, "body does not end with end")
	}
	return append(out, b[copied:i]...), loops, calls, nil
}

// truncated returns the error for an immediate of op at at that runs past
// the body or is an overlong LEB128 number.
func (w *walker) truncated(at int, op byte) error {
	return w.malformed(at, fmt.Sprintf("truncated or overlong immediate of opcode 0x%02x", op))
}

// immediate returns the position after the immediates of kind k at b[i:]
// of the instruction op at at.
func (w *walker) immediate(k immKind, op byte, at, i int) (int, error) {
	b := w.b
	ok := true
	switch k {
	case immNone:
	case immBlock, immLoop:
		return w.blockType(at, i)
	case immIdx, immI32:
		i, ok = skipLEB(b, i, maxLen32)
	case immIdx2:
		if i, ok = skipLEB(b, i, maxLen32); ok {
			i, ok = skipLEB(b, i, maxLen32)
		}
	case immI64:
		i, ok = skipLEB(b, i, maxLen64)
	case immBrTable:
		i, ok = skipBrTable(b, i)
	case immMemarg:
		i, ok = skipMemarg(b, i)
	case immMemargLane:
		if i, ok = skipMemarg(b, i); ok {
			i, ok = skipBytes(b, i, 1)
		}
	case immLane:
		i, ok = skipBytes(b, i, 1)
	case immBytes4:
		i, ok = skipBytes(b, i, 4)
	case immBytes8:
		i, ok = skipBytes(b, i, 8)
	case immBytes16:
		i, ok = skipBytes(b, i, 16)
	case immFence:
		if i >= len(b) || b[i] != 0x00 {
			return i, w.malformed(at, "atomic.fence without its zero byte")
		}
		i++
	case immSelect:
		return w.selectTypes(at, i)
	case immRefNull:
		return w.heapType(at, i)
	}
	if !ok {
		return i, w.truncated(at, op)
	}
	return i, nil
}
