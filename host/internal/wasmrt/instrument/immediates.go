package instrument

// Skipping of the immediates that have some structure. The functions
// return the position after the immediate and whether it is complete.

// skipBytes skips n bytes.
func skipBytes(b []byte, i, n int) (int, bool) {
	if len(b)-i < n {
		return i, false
	}
	return i + n, true
}

// skipBrTable skips the label vector and the default label of br_table.
func skipBrTable(b []byte, i int) (int, bool) {
	n, i, ok := readU32(b, i)
	if !ok || uint64(n) >= uint64(len(b)-i) {
		return i, false // each label takes at least one byte
	}
	for k := uint32(0); k <= n && ok; k++ {
		i, ok = skipLEB(b, i, maxLen32)
	}
	return i, ok
}

// skipMemarg skips a memory argument: the alignment, whose bit 6 says a
// memory index follows (multi-memory), then the offset, up to 64 bits
// (memory64).
func skipMemarg(b []byte, i int) (int, bool) {
	align, i, ok := readU32(b, i)
	if ok && align&0x40 != 0 {
		i, ok = skipLEB(b, i, maxLen32)
	}
	if ok {
		i, ok = skipLEB(b, i, maxLen64)
	}
	return i, ok
}

// blockType skips the block type at b[i:] of the block, loop or if at at:
// 0x40 (empty), a one-byte value type or a non-negative s33 type index.
func (w *walker) blockType(at, i int) (int, error) {
	b := w.b
	if i >= len(b) {
		return i, w.truncated(at, b[at])
	}
	c := b[i]
	switch {
	case c == 0x40 || isValType(c):
		return i + 1, nil
	case c < 0x40: // a type index below 64
		return i + 1, nil
	case c < 0x80: // negative: a value type this walker does not know
		return i, w.unsupported(i, "block type 0x%02x", c)
	}
	j, ok := skipLEB(b, i, maxLen32)
	if !ok {
		return j, w.truncated(at, b[at])
	}
	if b[j-1]&0x40 != 0 {
		return j, w.unsupported(i, "block type % x", b[i:j])
	}
	return j, nil
}

// selectTypes skips the value type vector of the typed select at at.
func (w *walker) selectTypes(at, i int) (int, error) {
	b := w.b
	n, i, ok := readU32(b, i)
	if !ok || uint64(n) > uint64(len(b)-i) {
		return i, w.truncated(at, b[at])
	}
	for end := i + int(n); i < end; i++ {
		if !isValType(b[i]) {
			return i, w.unsupported(i, "value type 0x%02x in select", b[i])
		}
	}
	return i, nil
}

// heapType skips the heap type of the ref.null at at: funcref or
// externref.
func (w *walker) heapType(at, i int) (int, error) {
	b := w.b
	if i >= len(b) {
		return i, w.truncated(at, b[at])
	}
	if !isRefType(b[i]) {
		return i, w.unsupported(i, "heap type 0x%02x", b[i])
	}
	return i + 1, nil
}
