package instrument

import (
	"fmt"
	"math"
)

// Import kinds.
const (
	importFunc   = 0x00
	importTable  = 0x01
	importMemory = 0x02
	importGlobal = 0x03
	importTag    = 0x04
)

// addedGlobals are the definitions of the two globals the rewrite adds:
// the flag (i32, mutable, init i32.const 0) and the budget (i32, mutable,
// init i32.const YieldPeriod).
var addedGlobals = []byte{
	0x7f, 0x01, 0x41, 0x00, 0x0b,
	0x7f, 0x01, 0x41, yieldPeriodSLEB[0], yieldPeriodSLEB[1], 0x0b,
}

// imports counts the imported functions and globals of the import section
// b[p:]; the section itself is copied unchanged by the caller.
func (r *rewriter) imports(b []byte, p int) error {
	n, i, ok := readU32(b, p)
	if !ok {
		return malformed("import section", p, "bad count")
	}
	for k := uint32(0); k < n; k++ {
		var err error
		if i, err = r.importEntry(b, i); err != nil {
			return err
		}
	}
	if i != len(b) {
		return malformed("import section", i, "trailing bytes")
	}
	return nil
}

// importEntry reads the import at b[i:] and returns the position after it.
func (r *rewriter) importEntry(b []byte, i int) (int, error) {
	const where = "import section"
	start := i
	i, ok := skipName(b, i)
	if ok {
		i, ok = skipName(b, i)
	}
	if !ok || i >= len(b) {
		return i, malformed(where, start, "truncated import")
	}
	kind := b[i]
	i++
	switch kind {
	case importFunc:
		r.importedFuncs++
		i, ok = skipLEB(b, i, maxLen32)
	case importTable:
		if i < len(b) && !isRefType(b[i]) {
			return i, unsupported(i, "table element type 0x%02x", b[i])
		}
		return skipLimits(b, i+1)
	case importMemory:
		r.noteMemory(b, i)
		return skipLimits(b, i)
	case importGlobal:
		r.importedGlobals++
		if i < len(b) && !isValType(b[i]) {
			return i, unsupported(i, "value type 0x%02x", b[i])
		}
		i += 2 // value type, mutability
		ok = i <= len(b)
	case importTag:
		i, ok = skipLEB(b, i+1, maxLen32) // attribute, type index
	default:
		return i, unsupported(i-1, "import kind 0x%02x", kind)
	}
	if !ok {
		return i, malformed(where, start, "truncated import")
	}
	return i, nil
}

// readName returns the bounds of the name (a byte vector) at b[i:].
func readName(b []byte, i int) (start, end int, ok bool) {
	n, start, ok := readU32(b, i)
	if !ok || uint64(n) > uint64(len(b)-start) {
		return start, start, false
	}
	return start, start + int(n), true
}

// skipName returns the position after the name at b[i:].
func skipName(b []byte, i int) (int, bool) {
	_, end, ok := readName(b, i)
	return end, ok
}

// skipLimits returns the position after the limits of a table or memory
// at b[i:]: a flags byte (bit 0: has a maximum, bit 1: shared, bit 2:
// 64-bit) and the minimum and maximum.
func skipLimits(b []byte, i int) (int, error) {
	const where = "import section"
	if i >= len(b) {
		return i, malformed(where, i, "truncated limits")
	}
	flags := b[i]
	if flags > 0x07 {
		return i, unsupported(i, "limits flags 0x%02x", flags)
	}
	max := maxLen32
	if flags&0x04 != 0 {
		max = maxLen64
	}
	j, ok := skipLEB(b, i+1, max)
	if ok && flags&0x01 != 0 {
		j, ok = skipLEB(b, j, max)
	}
	if !ok {
		return j, malformed(where, i, "truncated limits")
	}
	return j, nil
}

// globals writes the global section b[p:end] with the flag global added,
// or a new global section holding only it when b is nil.
func (r *rewriter) globals(b []byte, p, end int) error {
	var rest []byte
	if b != nil {
		n, i, ok := readU32(b, p)
		if !ok {
			return malformed("global section", p, "bad count")
		}
		r.definedGlobals, rest = n, b[i:end]
	}
	idx, err := r.flagIndex()
	if err != nil {
		return err
	}
	r.check = checkFor(idx, idx+1, r.growZero())
	count := r.definedGlobals + 2
	return r.writeSection(secGlobal, count, rest, addedGlobals)
}

// exports writes the export section b[p:end] with the export of the flag
// global added, or a new export section holding only it when b is nil. It
// fails when the section already exports the name.
func (r *rewriter) exports(b []byte, p, end int) error {
	var count uint32
	var rest []byte
	if b != nil {
		n, i, err := r.scanExports(b, p)
		if err != nil {
			return err
		}
		if n == math.MaxUint32 {
			return malformed("export section", p, "too many exports")
		}
		count, rest = n, b[i:end]
	}
	idx, err := r.flagIndex()
	if err != nil {
		return err
	}
	entry := appendU32(make([]byte, 0, len(r.name)+16), uint32(len(r.name)))
	entry = append(entry, r.name...)
	entry = appendU32(append(entry, importGlobal), idx)
	return r.writeSection(secExport, count+1, rest, entry)
}

// scanExports reads the export section b[p:] and returns its count and
// the position of its first entry; it fails when an export has the name.
func (r *rewriter) scanExports(b []byte, p int) (uint32, int, error) {
	const where = "export section"
	n, first, ok := readU32(b, p)
	if !ok {
		return 0, p, malformed(where, p, "bad count")
	}
	i := first
	for k := uint32(0); k < n; k++ {
		start := i
		nameStart, nameEnd, ok := readName(b, i)
		if ok {
			i, ok = skipLEB(b, nameEnd+1, maxLen32) // kind, index
		}
		if !ok {
			return 0, i, malformed(where, start, "truncated export")
		}
		if string(b[nameStart:nameEnd]) == r.name {
			return 0, i, fmt.Errorf("%w: %q is already exported", ErrExportName, r.name)
		}
	}
	if i != len(b) {
		return 0, i, malformed(where, i, "trailing bytes")
	}
	return n, first, nil
}

// writeSection appends a section with the given id, count, entries copied
// from rest and one more entry extra.
func (r *rewriter) writeSection(id byte, count uint32, rest, extra []byte) error {
	size := uint64(lebLen(count)) + uint64(len(rest)) + uint64(len(extra))
	if size > math.MaxUint32 {
		return malformed("", 0, fmt.Sprintf("section %d too large", id))
	}
	r.out = appendU32(append(r.out, id), uint32(size))
	r.out = appendU32(r.out, count)
	r.out = append(r.out, rest...)
	r.out = append(r.out, extra...)
	if id == secGlobal {
		r.globalDone = true
	} else {
		r.exportDone = true
	}
	return nil
}

// noteMemory records the first memory of the module, whose limits are at
// b[i:], for the yield of the checks.
func (r *rewriter) noteMemory(b []byte, i int) {
	if r.memory || i >= len(b) {
		return
	}
	r.memory, r.memory64 = true, b[i]&0x04 != 0
}

// memories notes the first memory of the memory section b[p:], unless an
// imported memory came first; the section is copied unchanged.
func (r *rewriter) memories(b []byte, p int) {
	if n, i, ok := readU32(b, p); ok && n > 0 {
		r.noteMemory(b, i)
	}
}
