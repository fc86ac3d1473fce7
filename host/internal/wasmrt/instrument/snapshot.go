package instrument

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Pre-initialisation, as Wizer does it: a module is instantiated, runs its
// initialisation once (for the Python runtime: CPython's start-up and the
// import of the author's files, which take 50–200 ms), and the state it
// ends in becomes the initial state of a new module, so that every
// instance of that module starts ready in the time it takes to copy its
// memory. [ExportGlobals] prepares the module so that the caller can read
// its mutable globals after the initialisation; [Snapshot] writes the new
// module from the original and the state read.
//
// What a snapshot keeps: the linear memory (as active data segments over
// its non-zero bytes, with the memory's minimum raised to its size) and
// the values of the mutable globals. What it cannot keep and refuses: an
// imported memory, passive data segments (code may still need them) and a
// start function (it would run again). Tables are copied as they are: an
// initialisation that changes a table is not supported (the Python runtime
// does not). Host state, such as WASI's open files, is not part of the
// module: the instance of a snapshot starts with none, and an initialisation
// must not leave state that depends on them (a preopened folder's file
// descriptor kept in memory stays valid only if the same folders are
// mounted, in the same order).

// State is what an instance ended its initialisation with.
type State struct {
	// Memory is the instance's whole linear memory.
	Memory []byte
	// Globals are the values of mutable globals, by index in the global
	// index space (imported globals first), as their raw bits: i32 and
	// f32 in the low 32 bits.
	Globals map[uint32]uint64
	// Drop names exports the new module leaves out: the initialisation's
	// own entry points (WASI's _initialize must not run again).
	Drop []string
}

// ExportedGlobalPrefix starts the names under which [ExportGlobals]
// exports the mutable globals: the prefix and the global's index.
const ExportedGlobalPrefix = "kopf_wasm_global_"

// ExportGlobals returns wasm with every mutable global it defines also
// exported (as ExportedGlobalPrefix and its index, for instance
// "kopf_wasm_global_0" for __stack_pointer), and those indices, so that
// the caller can read their values after an initialisation.
func ExportGlobals(wasm []byte) ([]byte, []uint32, error) {
	m, err := scanModule(wasm)
	if err != nil {
		return nil, nil, fmt.Errorf("instrument: %w", err)
	}
	var extra []byte
	for _, idx := range m.mutable {
		name := fmt.Sprintf("%s%d", ExportedGlobalPrefix, idx)
		extra = appendU32(extra, uint32(len(name)))
		extra = append(extra, name...)
		extra = append(extra, 0x03) // global
		extra = appendU32(extra, idx)
	}
	out := make([]byte, 0, len(wasm)+len(extra)+16)
	out = append(out, header[:]...)
	wrote := false
	err = m.each(func(id byte, start, p, end int) error {
		if id == secExport {
			n, q, _ := readU32(wasm, p)
			out = appendSection(out, secExport, n+uint32(len(m.mutable)), wasm[q:end], extra)
			wrote = true
			return nil
		}
		if !wrote && id != secCustom && sectionRank[id] > sectionRank[secExport] {
			out = appendSection(out, secExport, uint32(len(m.mutable)), nil, extra)
			wrote = true
		}
		out = append(out, wasm[start:end]...)
		return nil
	})
	if !wrote {
		out = appendSection(out, secExport, uint32(len(m.mutable)), nil, extra)
	}
	return out, m.mutable, err
}

// Snapshot returns wasm with st as its initial state: its memory's minimum
// is st.Memory's size and its data are st.Memory's non-zero bytes, its
// mutable globals start with st.Globals' values, and the exports in
// st.Drop are gone. Every other section is copied byte for byte.
func Snapshot(wasm []byte, st State) ([]byte, error) {
	m, err := scanModule(wasm)
	if err != nil {
		return nil, fmt.Errorf("instrument: %w", err)
	}
	switch {
	case m.importedMemory:
		return nil, fmt.Errorf("instrument: cannot snapshot a module that imports its memory")
	case m.start:
		return nil, fmt.Errorf("instrument: cannot snapshot a module with a start function: it would run again")
	case m.passiveData:
		return nil, fmt.Errorf("instrument: cannot snapshot a module with passive data segments")
	case len(st.Memory)%wasmPage != 0:
		return nil, fmt.Errorf("instrument: a memory of %d bytes is not whole pages", len(st.Memory))
	}
	segments := dataSegments(st.Memory)
	appendData := func(out []byte, segs []segment) []byte { return appendDataFrom(out, st.Memory, segs) }
	out := make([]byte, 0, len(st.Memory)/2+len(wasm))
	out = append(out, header[:]...)
	wroteData := false
	err = m.each(func(id byte, start, p, end int) error {
		var err error
		switch id {
		case secMemory:
			out, err = snapshotMemory(out, wasm[:end], p, uint32(len(st.Memory)/wasmPage))
		case secGlobal:
			out, err = snapshotGlobals(out, wasm[:end], p, m.importedGlobals, st.Globals)
		case secExport:
			out, err = dropExports(out, wasm[:end], p, st.Drop)
		case secDataCount:
			out = appendSection(out, secDataCount, uint32(len(segments)), nil, nil)
		case secData:
			out = appendData(out, segments)
			wroteData = true
		default:
			if !wroteData && id != secCustom && sectionRank[id] > sectionRank[secData] {
				out = appendData(out, segments)
				wroteData = true
			}
			out = append(out, wasm[start:end]...)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("instrument: %w", err)
	}
	if !wroteData {
		out = appendData(out, segments)
	}
	// The marker: a custom section after the data, which Split looks
	// for. Its payload, a version byte, is never empty: wazero (v1.11)
	// fails to read an empty custom section at the end of a module.
	marker := append(appendU32(nil, uint32(len(SnapshotSection))), SnapshotSection...)
	marker = append(marker, 1)
	out = append(out, secCustom)
	out = appendU32(out, uint32(len(marker)))
	return append(out, marker...), nil
}

// SnapshotSection names the custom section that marks a module written by
// [Snapshot]: its data segments are an instance's whole initial memory,
// which [Split] takes out of the module with its memory's size and
// its globals' values, so that snapshots of one runtime share one code.
const SnapshotSection = "kopf-wasm.snapshot"

// maxImage bounds the initial memory Split reads: a wasm32 memory.
const maxImage = 1 << 32

// Image is a module's initial memory as its active data segments write it:
// Size bytes (to the end of the last segment), zero where no segment
// writes. A Python module's is ~14 MB: its user writes the segments where
// they go (a file the instances map) rather than building it in memory.
type Image struct {
	Size     uint64
	Segments []Segment
}

// Segment is one active data segment: Data written at Offset of memory 0.
type Segment struct {
	Offset uint32
	Data   []byte
}

// Bytes returns the image as one slice.
func (im Image) Bytes() []byte {
	out := make([]byte, im.Size)
	for _, s := range im.Segments {
		copy(out[s.Offset:], s.Data)
	}
	return out
}

// eachDataSegment calls fn with the offset in memory 0 and the bytes of each
// active data segment of the data section b[p:], in order.
func eachDataSegment(b []byte, p int, fn func(off uint32, data []byte)) error {
	w := bounder{b: b, where: "data section"}
	_, err := w.vector(p, func(i int) (int, error) {
		flags, j, ok := readU32(b, i)
		if !ok || flags != 0 || j >= len(b) || b[j] != 0x41 {
			return i, unsupported(i, "a data segment that is not active at an i32.const offset")
		}
		off, k, ok := readS32(b, j+1)
		if !ok || k >= len(b) || b[k] != opEnd {
			return i, malformed(w.where, j, "bad offset")
		}
		n, q, ok := readU32(b, k+1)
		if !ok || uint64(n) > uint64(len(b)-q) {
			return i, malformed(w.where, k, "a segment running past the section")
		}
		end := uint64(uint32(off)) + uint64(n)
		if end > maxImage {
			return i, malformed(w.where, i, "a segment past 4 GiB")
		}
		fn(uint32(off), b[q:q+int(n)])
		return q + int(n), nil
	})
	return err
}

// readS32 decodes the signed LEB128 s32 at b[i:].
func readS32(b []byte, i int) (v int32, next int, ok bool) {
	v64, next, ok := readSigned(b, i, maxLen32)
	if !ok || v64 != int64(int32(v64)) {
		return 0, next, false
	}
	return int32(v64), next, true
}

// readSigned decodes a signed LEB128 number of at most max bytes at b[i:].
func readSigned(b []byte, i, max int) (v int64, next int, ok bool) {
	var shift uint
	for n := 0; n < max; n++ {
		if i >= len(b) {
			return 0, i, false
		}
		c := b[i]
		i++
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c < 0x80 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, i, true
		}
	}
	return 0, i, false
}

// wasmPage is the size of a page of linear memory.
const wasmPage = 64 << 10

// moduleShape is what Snapshot and ExportGlobals need to know of a module
// before they write it.
type moduleShape struct {
	wasm                               []byte
	importedGlobals                    uint32
	mutable                            []uint32 // defined mutable globals
	importedMemory, start, passiveData bool
	snapshot                           bool // has the SnapshotSection
	dataBytes                          int  // the data section's size, header included
}

// scanModule reads the module's sections once: its imports, globals, start
// and data segments.
func scanModule(wasm []byte) (*moduleShape, error) {
	if len(wasm) < len(header) || string(wasm[:8]) != string(header[:]) {
		return nil, malformed("", 0, "no wasm magic number and version 1")
	}
	m := &moduleShape{wasm: wasm}
	err := m.each(func(id byte, start, p, end int) error {
		b := wasm[:end]
		switch id {
		case secImport:
			r := new(rewriter)
			if err := r.imports(b, p); err != nil {
				return err
			}
			m.importedGlobals, m.importedMemory = r.importedGlobals, r.memory
		case secGlobal:
			return m.scanGlobals(b, p)
		case secStart:
			m.start = true
		case secCustom:
			if s, e, ok := readName(b, p); ok && string(b[s:e]) == SnapshotSection {
				m.snapshot = true
			}
		case secData:
			m.dataBytes = end - start
			w := bounder{b: b, where: "data section"}
			_, err := w.vector(p, func(i int) (int, error) {
				if flags, _, ok := readU32(b, i); ok && flags == 1 {
					m.passiveData = true
				}
				return w.data(i)
			})
			return err
		}
		return nil
	})
	return m, err
}

// each calls fn for every section: its id, where it starts, where its
// contents start and where it ends.
func (m *moduleShape) each(fn func(id byte, start, p, end int) error) error {
	for i := len(header); i < len(m.wasm); {
		id := m.wasm[i]
		size, p, ok := readU32(m.wasm, i+1)
		if !ok || uint64(size) > uint64(len(m.wasm)-p) {
			return malformed("", i, fmt.Sprintf("section %d runs past the end of the module", id))
		}
		if id != secCustom && (int(id) >= len(sectionRank) || sectionRank[id] == 0) {
			return unsupported(i, "section %d", id)
		}
		end := p + int(size)
		if err := fn(id, i, p, end); err != nil {
			return err
		}
		i = end
	}
	return nil
}

// scanGlobals notes the indices of the mutable globals the section defines.
func (m *moduleShape) scanGlobals(b []byte, p int) error {
	w := bounder{b: b, where: "global section"}
	idx := m.importedGlobals
	_, err := w.vector(p, func(i int) (int, error) {
		if i+2 > len(b) {
			return i, malformed(w.where, i, "truncated global")
		}
		if b[i+1] == 1 {
			m.mutable = append(m.mutable, idx)
		}
		idx++
		return w.constExpr(i + 2)
	})
	return err
}

// snapshotMemory writes the memory section b[p:] with the minimum of its
// one memory raised to pages.
func snapshotMemory(out, b []byte, p int, pages uint32) ([]byte, error) {
	min, err := memoryMin(b, p)
	if err != nil {
		return out, err
	}
	if pages < min {
		return out, fmt.Errorf("the memory shrank from %d to %d pages", min, pages)
	}
	return setMemoryMin(out, b, p, pages)
}

// memoryMin returns the minimum of the one memory of the memory section b[p:].
func memoryMin(b []byte, p int) (uint32, error) {
	_, i, err := memoryFlags(b, p)
	if err != nil {
		return 0, err
	}
	min, _, ok := readU32(b, i)
	if !ok {
		return 0, malformed("memory section", i, "bad minimum")
	}
	return min, nil
}

// memoryFlags returns the limits flags of the one memory of the memory
// section b[p:] and where its minimum starts.
func memoryFlags(b []byte, p int) (flags byte, next int, err error) {
	n, i, ok := readU32(b, p)
	if !ok || n != 1 || i >= len(b) {
		return 0, i, unsupported(p, "a memory section without exactly one memory")
	}
	if b[i]&^0x01 != 0 {
		return 0, i, unsupported(i, "memory limits flags 0x%02x (shared or 64-bit)", b[i])
	}
	return b[i], i + 1, nil
}

// setMemoryMin writes the memory section b[p:] with the minimum of its one
// memory set to pages, its maximum kept.
func setMemoryMin(out, b []byte, p int, pages uint32) ([]byte, error) {
	flags, i, err := memoryFlags(b, p)
	if err != nil {
		return out, err
	}
	_, j, ok := readU32(b, i)
	if !ok {
		return out, malformed("memory section", i, "bad minimum")
	}
	body := []byte{flags}
	body = appendU32(body, pages)
	if flags&0x01 != 0 {
		max, _, ok := readU32(b, j)
		if !ok {
			return out, malformed("memory section", j, "bad maximum")
		}
		body = appendU32(body, max)
	}
	return appendSection(out, secMemory, 1, nil, body), nil
}

// snapshotGlobals writes the global section b[p:] with each global in
// values started at its value: a constant of its type.
func snapshotGlobals(out, b []byte, p int, imported uint32, values map[uint32]uint64) ([]byte, error) {
	var body []byte
	n, err := eachGlobal(b, p, imported, func(idx uint32, vt byte, mutable bool, init []byte) error {
		v, ok := values[idx]
		switch {
		case !ok:
			body = append(append(body, vt, boolByte(mutable)), init...)
		case !mutable:
			return fmt.Errorf("global %d is immutable: its value cannot change", idx)
		default:
			c, err := constOf(vt, v)
			if err != nil {
				return fmt.Errorf("global %d: %w", idx, err)
			}
			body = append(append(body, vt, 1), c...)
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	return appendSection(out, secGlobal, n, nil, body), nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// constOf returns the constant expression (through its end) that gives a
// global of the value type vt the raw value v.
func constOf(vt byte, v uint64) ([]byte, error) {
	switch vt {
	case 0x7f: // i32
		return append(appendS64([]byte{0x41}, int64(int32(uint32(v)))), opEnd), nil
	case 0x7e: // i64
		return append(appendS64([]byte{0x42}, int64(v)), opEnd), nil
	case 0x7d: // f32
		return append(binary.LittleEndian.AppendUint32([]byte{0x43}, uint32(v)), opEnd), nil
	case 0x7c: // f64
		return append(binary.LittleEndian.AppendUint64([]byte{0x44}, v), opEnd), nil
	}
	return nil, fmt.Errorf("a global of value type 0x%02x cannot be snapshotted", vt)
}

// appendS64 appends the signed LEB128 encoding of v.
func appendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// dropExports writes the export section b[p:] without the exports named
// in drop.
func dropExports(out, b []byte, p int, drop []string) ([]byte, error) {
	w := bounder{b: b, where: "export section"}
	var body []byte
	var kept uint32
	_, err := w.vector(p, func(i int) (int, error) {
		start, end, ok := readName(b, i)
		if !ok {
			return i, malformed(w.where, i, "bad export name")
		}
		next, err := w.export(i)
		if err != nil {
			return next, err
		}
		for _, d := range drop {
			if string(b[start:end]) == d {
				return next, nil
			}
		}
		body = append(body, b[i:next]...)
		kept++
		return next, nil
	})
	if err != nil {
		return out, err
	}
	return appendSection(out, secExport, kept, nil, body), nil
}

// zeroGap is the shortest run of zero bytes that splits a data segment: a
// segment costs about 8 bytes of header, and instantiation copies every
// byte of every segment.
const zeroGap = 64

// segment is a range of memory written by an active data segment.
type segment struct{ offset, end int }

// dataSegments covers mem's non-zero bytes with segments that are split
// at runs of at least zeroGap zero bytes.
func dataSegments(mem []byte) []segment {
	var segs []segment
	for i := 0; i < len(mem); {
		for i < len(mem) && mem[i] == 0 {
			i++
		}
		if i == len(mem) {
			break
		}
		s := segment{offset: i}
		zeros := 0
		for ; i < len(mem) && zeros < zeroGap; i++ {
			if mem[i] == 0 {
				zeros++
			} else {
				zeros = 0
			}
		}
		s.end = i - zeros
		segs = append(segs, s)
	}
	return segs
}

// appendDataFrom appends a data section with one active segment (memory 0, an
// i32.const offset) for each of segs, its bytes taken from mem.
func appendDataFrom(out []byte, mem []byte, segs []segment) []byte {
	var body []byte
	for _, s := range segs {
		body = append(body, 0x00, 0x41)
		body = appendS64(body, int64(int32(uint32(s.offset))))
		body = append(body, opEnd)
		body = appendU32(body, uint32(s.end-s.offset))
		body = append(body, mem[s.offset:s.end]...)
	}
	return appendSection(out, secData, uint32(len(segs)), nil, body)
}

// appendSection appends a section: its id, size, the count and the
// entries in rest and extra.
func appendSection(out []byte, id byte, count uint32, rest, extra []byte) []byte {
	contents := appendU32(nil, count)
	size := uint64(len(contents)) + uint64(len(rest)) + uint64(len(extra))
	if size > math.MaxUint32 {
		panic("instrument: a section above 4 GiB")
	}
	out = append(out, id)
	out = appendU32(out, uint32(size))
	out = append(out, contents...)
	out = append(out, rest...)
	return append(out, extra...)
}
