package instrument

// immKind says what immediates follow an opcode. The zero value marks
// opcodes the walker does not know.
type immKind uint8

const (
	immUnknown    immKind = iota
	immNone               // no immediate
	immBlock              // block type (block, if)
	immLoop               // block type, then the check goes in
	immIdx                // one u32 index
	immIdx2               // two u32 indices
	immBrTable            // vector of labels and a default label
	immMemarg             // align (bit 6: memory index follows), offset
	immLane               // one lane byte
	immMemargLane         // memarg and a lane byte
	immI32                // signed LEB128, 32 bits
	immI64                // signed LEB128, 64 bits
	immBytes4             // f32.const
	immBytes8             // f64.const
	immBytes16            // v128.const, i8x16.shuffle
	immSelect             // vector of value types
	immRefNull            // heap type
	immFence              // one zero byte
	immPrefixFC           // bulk memory and saturating truncation
	immPrefixFD           // SIMD
	immPrefixFE           // threads
)

// Opcodes the rewriter looks at or writes.
const (
	opUnreachable        = 0x00
	opLoop               = 0x03
	opIf                 = 0x04
	opEnd                = 0x0b
	opDrop               = 0x1a
	opGlobalGet          = 0x23
	opGlobalSet          = 0x24
	opMemoryGrow         = 0x40
	opI32Const           = 0x41
	opI64Const           = 0x42
	opI32Eqz             = 0x45
	opI32Sub             = 0x6b
	blockEmpty           = 0x40
	opCall               = 0x10
	opCallIndirect       = 0x11
	opReturnCall         = 0x12
	opReturnCallIndirect = 0x13
)

// Value types that take one byte: i32, i64, f32, f64, v128, funcref,
// externref.
func isValType(b byte) bool {
	return (b >= 0x7b && b <= 0x7f) || isRefType(b)
}

// isRefType reports whether b is funcref or externref.
func isRefType(b byte) bool {
	return b == 0x70 || b == 0x6f
}

// opKinds gives the immediates of the one-byte opcodes.
var opKinds = func() (t [256]immKind) {
	set := func(k immKind, ops ...int) {
		for _, op := range ops {
			t[op] = k
		}
	}
	span := func(k immKind, from, to int) {
		for op := from; op <= to; op++ {
			t[op] = k
		}
	}
	// unreachable nop else end return drop select ref.is_null
	set(immNone, 0x00, 0x01, 0x05, 0x0b, 0x0f, 0x1a, 0x1b, 0xd1)
	set(immBlock, 0x02, 0x04) // block if
	set(immLoop, opLoop)
	// br br_if call return_call local.* global.* table.get/set
	// memory.size memory.grow ref.func
	set(immIdx, 0x0c, 0x0d, opCall, opReturnCall, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x3f, 0x40, 0xd2)
	// call_indirect return_call_indirect: expr relies on their being the
	// only one-byte opcodes with two indices
	set(immIdx2, opCallIndirect, opReturnCallIndirect)
	set(immBrTable, 0x0e)
	set(immSelect, 0x1c)
	span(immMemarg, 0x28, 0x3e) // loads and stores
	set(immI32, 0x41)
	set(immI64, 0x42)
	set(immBytes4, 0x43)
	set(immBytes8, 0x44)
	span(immNone, 0x45, 0xc4) // numeric, sign extension
	set(immRefNull, 0xd0)
	set(immPrefixFC, 0xfc)
	set(immPrefixFD, 0xfd)
	set(immPrefixFE, 0xfe)
	return t
}()

// fcKinds gives the immediates of the 0xFC sub-opcodes 0 to 17.
var fcKinds = [...]immKind{
	0: immNone, 1: immNone, 2: immNone, 3: immNone, // i32.trunc_sat_*
	4: immNone, 5: immNone, 6: immNone, 7: immNone, // i64.trunc_sat_*
	8:  immIdx2, // memory.init data memory
	9:  immIdx,  // data.drop data
	10: immIdx2, // memory.copy memory memory
	11: immIdx,  // memory.fill memory
	12: immIdx2, // table.init elem table
	13: immIdx,  // elem.drop elem
	14: immIdx2, // table.copy table table
	15: immIdx,  // table.grow table
	16: immIdx,  // table.size table
	17: immIdx,  // table.fill table
}

// fdKinds gives the immediates of the 0xFD (SIMD) sub-opcodes 0 to 255;
// unassigned ones stay unknown.
var fdKinds = func() (t [256]immKind) {
	for op := range t {
		t[op] = immNone
	}
	for op := 0x00; op <= 0x0b; op++ { // v128.load* v128.store
		t[op] = immMemarg
	}
	t[0x0c] = immBytes16               // v128.const
	t[0x0d] = immBytes16               // i8x16.shuffle
	for op := 0x15; op <= 0x22; op++ { // extract_lane, replace_lane
		t[op] = immLane
	}
	for op := 0x54; op <= 0x5b; op++ { // v128.load*_lane, v128.store*_lane
		t[op] = immMemargLane
	}
	t[0x5c] = immMemarg // v128.load32_zero
	t[0x5d] = immMemarg // v128.load64_zero
	for _, op := range []int{0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb,
		0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee} {
		t[op] = immUnknown
	}
	return t
}()

// feKind returns the immediates of the 0xFE (threads) sub-opcode op.
func feKind(op uint32) immKind {
	switch {
	case op <= 0x02: // memory.atomic.notify, wait32, wait64
		return immMemarg
	case op == 0x03: // atomic.fence
		return immFence
	case op >= 0x10 && op <= 0x4e: // atomic loads, stores, rmw, cmpxchg
		return immMemarg
	}
	return immUnknown
}

// prefixKind returns the immediates of sub-opcode sub of prefix.
func prefixKind(prefix byte, sub uint32) immKind {
	switch prefix {
	case 0xfc:
		if sub < uint32(len(fcKinds)) {
			return fcKinds[sub]
		}
	case 0xfd:
		if sub < uint32(len(fdKinds)) {
			return fdKinds[sub]
		}
	case 0xfe:
		return feKind(sub)
	}
	return immUnknown
}
