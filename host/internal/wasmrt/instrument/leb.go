package instrument

// LEB128 reading and writing. Readers take the whole input sliced to the
// end of the enclosing section or body, so that positions stay offsets in
// the input and nothing can be read past that end; they report failure
// instead of panicking.

// Maximum encoded lengths of LEB128 numbers.
const (
	maxLen32 = 5  // u32, s32, s33
	maxLen64 = 10 // u64, s64
)

// readU32 decodes the unsigned LEB128 u32 at b[i:] and returns it with the
// position after it. ok is false when the number is truncated, longer than
// five bytes or does not fit 32 bits.
func readU32(b []byte, i int) (v uint32, next int, ok bool) {
	var shift uint
	for n := 0; n < maxLen32; n++ {
		if i >= len(b) {
			return 0, i, false
		}
		c := b[i]
		i++
		if n == maxLen32-1 && c > 0x0f {
			return 0, i, false
		}
		v |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return v, i, true
		}
		shift += 7
	}
	return 0, i, false
}

// skipLEB returns the position after the LEB128 number at b[i:], which may
// be at most max bytes long; ok is false when it is truncated or too long.
// The unused bits of the last byte are the validator's business.
func skipLEB(b []byte, i, max int) (next int, ok bool) {
	end := i + max
	if end > len(b) {
		end = len(b)
	}
	for ; i < end; i++ {
		if b[i] < 0x80 {
			return i + 1, true
		}
	}
	return i, false
}

// lebLen returns the length of the shortest LEB128 encoding of v.
func lebLen(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// appendU32 appends the shortest LEB128 encoding of v to b.
func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// putU32 writes the shortest LEB128 encoding of v at b[at:], which must
// have room for lebLen(v) bytes.
func putU32(b []byte, at int, v uint32) {
	for v >= 0x80 {
		b[at] = byte(v) | 0x80
		v >>= 7
		at++
	}
	b[at] = byte(v)
}

// reserved is the room left in the output for a size not yet known.
var reserved [maxLen32]byte

// fillSize writes size at b[at:], where room bytes were reserved for it
// before the sized content that now ends b. When the encoding needs more
// or fewer bytes than reserved, the content moves; callers reserve the
// length of the input's size, which rarely changes.
func fillSize(b []byte, at, room int, size uint32) []byte {
	n := lebLen(size)
	if n != room {
		end := len(b)
		if n > room {
			b = append(b, reserved[:n-room]...)
		}
		copy(b[at+n:], b[at+room:end])
		b = b[:end+n-room]
	}
	putU32(b, at, size)
	return b
}
