package instrument

import (
	"encoding/binary"
	"fmt"
)

// Start is what an instance of a module that [Split] took apart starts
// with besides the code: the initial memory its data segments wrote and,
// for a snapshot, its memory's size and its mutable globals' values.
type Start struct {
	// Image is the initial memory, which the host gives each instance
	// itself (it maps it copy-on-write).
	Image Image
	// Pages is the memory's initial size in pages. When Globals is set,
	// the code's memory starts empty and the host grows it to Pages.
	Pages uint32
	// Globals are the initial values of the module's mutable globals, by
	// index, as raw bits (i32 and f32 in the low 32 bits). The code starts
	// them at zero and exports each as ExportedGlobalPrefix and its index,
	// for the host to set. Nil when the code keeps its globals.
	Globals map[uint32]uint64
}

// Split takes out of wasm what is particular to one module of the same
// code, and returns the code, what each instance starts with, and ok.
//
// Every module whose memory is its own and whose data segments are all
// active, at constant offsets within its initial memory, loses its data
// segments to Start.Image: wazero then keeps no copy of them in the heap
// and writes none into each new instance (the host maps the image
// copy-on-write, so that instances share the pages they only read). The
// image's segments are slices of wasm: nothing is copied.
//
// A module written by [Snapshot] (a Python module: the runtime with the
// author's files imported) also loses its memory's size and its mutable
// globals' values, the rest of what a snapshot changed: the code of every
// snapshot of one runtime is then the same bytes, which the host compiles
// once for all of them.
//
// ok is false for any other module (passive data, an imported memory, a
// segment past the initial memory, no data), which is returned unchanged.
func Split(wasm []byte) (code []byte, st Start, ok bool, err error) {
	m, err := scanModule(wasm)
	if err != nil {
		return wasm, Start{}, false, fmt.Errorf("instrument: %w", err)
	}
	if m.passiveData || m.importedMemory || m.dataBytes == 0 {
		return wasm, Start{}, false, nil
	}
	snapshot := m.snapshot && m.constGlobals()
	out := make([]byte, 0, len(wasm)-m.dataBytes)
	out = append(out, header[:]...)
	err = m.each(func(id byte, start, p, end int) error {
		b := wasm[:end]
		var err error
		switch {
		case id == secMemory:
			if st.Pages, err = memoryMin(b, p); err == nil && snapshot {
				out, err = setMemoryMin(out, b, p, 0)
				return err
			}
		case id == secGlobal && snapshot:
			out, st.Globals, err = zeroGlobals(out, b, p, m.importedGlobals)
			return err
		case id == secData:
			out = appendSection(out, secData, 0, nil, nil)
			return eachDataSegment(b, p, func(off uint32, data []byte) {
				st.Image.Segments = append(st.Image.Segments, Segment{Offset: off, Data: data})
				st.Image.Size = max(st.Image.Size, uint64(off)+uint64(len(data)))
			})
		case id == secDataCount:
			out = appendSection(out, secDataCount, 0, nil, nil)
			return nil
		}
		if err != nil {
			return err
		}
		out = append(out, wasm[start:end]...)
		return nil
	})
	if _, ok := err.(*UnsupportedError); ok {
		return wasm, Start{}, false, nil // a form this does not take apart: compiled as it is
	}
	if err != nil {
		return wasm, Start{}, false, fmt.Errorf("instrument: %w", err)
	}
	if st.Image.Size > uint64(st.Pages)*wasmPage {
		// wazero must refuse to instantiate it, as the module says.
		return wasm, Start{}, false, nil
	}
	if snapshot {
		if out, _, err = ExportGlobals(out); err != nil {
			return wasm, Start{}, false, err
		}
	}
	return out, st, true, nil
}

// constGlobals reports whether every mutable global the module defines
// starts at a constant, whose value Split can read.
func (m *moduleShape) constGlobals() bool {
	ok := true
	_ = m.each(func(id byte, _, p, end int) error {
		if id == secGlobal {
			_, err := eachGlobal(m.wasm[:end], p, m.importedGlobals, func(_ uint32, _ byte, mutable bool, init []byte) error {
				if mutable {
					_, err := constValue(init)
					return err
				}
				return nil
			})
			ok = err == nil
		}
		return nil
	})
	return ok
}

// zeroGlobals writes the global section b[p:] with every mutable global
// started at zero, and returns their values.
func zeroGlobals(out, b []byte, p int, imported uint32) ([]byte, map[uint32]uint64, error) {
	var body []byte
	values := map[uint32]uint64{}
	n, err := eachGlobal(b, p, imported, func(idx uint32, vt byte, mutable bool, init []byte) error {
		if !mutable {
			body = append(body, vt, 0)
			body = append(body, init...)
			return nil
		}
		v, err := constValue(init)
		if err != nil {
			return fmt.Errorf("global %d: %w", idx, err)
		}
		zero, err := constOf(vt, 0)
		if err != nil {
			return fmt.Errorf("global %d: %w", idx, err)
		}
		values[idx] = v
		body = append(append(body, vt, 1), zero...)
		return nil
	})
	if err != nil {
		return out, nil, err
	}
	return appendSection(out, secGlobal, n, nil, body), values, nil
}

// eachGlobal calls fn with each global of the global section b[p:]: its
// index, value type, mutability and initial expression (through its end).
func eachGlobal(b []byte, p int, imported uint32, fn func(idx uint32, vt byte, mutable bool, init []byte) error) (uint32, error) {
	w := bounder{b: b, where: "global section"}
	idx := imported
	n, _, _ := readU32(b, p)
	_, err := w.vector(p, func(i int) (int, error) {
		if i+2 > len(b) {
			return i, malformed(w.where, i, "truncated global")
		}
		next, err := w.constExpr(i + 2)
		if err != nil {
			return next, err
		}
		if err := fn(idx, b[i], b[i+1] == 1, b[i+2:next]); err != nil {
			return i, err
		}
		idx++
		return next, nil
	})
	return n, err
}

// constValue returns the raw bits of a constant expression of one
// *.const instruction (the inverse of constOf).
func constValue(init []byte) (uint64, error) {
	if len(init) < 2 || init[len(init)-1] != opEnd {
		return 0, fmt.Errorf("not a constant")
	}
	arg := init[1 : len(init)-1]
	switch init[0] {
	case 0x41: // i32.const
		v, next, ok := readSigned(init, 1, maxLen32)
		if ok && next == len(init)-1 {
			return uint64(uint32(int32(v))), nil
		}
	case 0x42: // i64.const
		v, next, ok := readSigned(init, 1, maxLen64)
		if ok && next == len(init)-1 {
			return uint64(v), nil
		}
	case 0x43: // f32.const
		if len(arg) == 4 {
			return uint64(binary.LittleEndian.Uint32(arg)), nil
		}
	case 0x44: // f64.const
		if len(arg) == 8 {
			return binary.LittleEndian.Uint64(arg), nil
		}
	}
	return 0, fmt.Errorf("an initial value that is not one constant")
}
