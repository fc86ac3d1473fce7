package wasmrt

// sliceMemory is a linear memory in a Go slice, for when a mapping is not
// available; it grows by doubling its capacity.
type sliceMemory struct{ buf []byte }

func (m *sliceMemory) Reallocate(size uint64) []byte {
	if size > uint64(cap(m.buf)) {
		grown := make([]byte, size, max(size, 2*uint64(cap(m.buf))))
		copy(grown, m.buf)
		m.buf = grown
	}
	m.buf = m.buf[:size]
	return m.buf
}

func (m *sliceMemory) Free() { m.buf = nil }
