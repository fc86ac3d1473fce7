package instrument

// The parts of Bounded's walk that wazero decodes without allocating by
// them but that lie between the counts it does: custom sections (the name
// section), element and data segments, and their constant expressions.

// custom checks a custom section at p: its name and, for the name
// section, the names of its subsections.
func (w bounder) custom(p int) error {
	start, end, ok := readName(w.b, p)
	if !ok {
		return malformed(w.where, p, "a custom section's name running past the end")
	}
	if string(w.b[start:end]) != "name" {
		return nil
	}
	for i := end; i < len(w.b); {
		size, p, ok := readU32(w.b, i+1)
		if !ok || uint64(size) > uint64(len(w.b)-p) {
			return malformed("the name section", i, "a subsection running past the end")
		}
		sub := bounder{b: w.b[:p+int(size)], where: "the name section"}
		var err error
		switch w.b[i] {
		case 0: // the module's name
			_, err = sub.bytes(p)
		case 1: // the functions' names
			_, err = sub.vector(p, sub.indexedName)
		case 2: // the locals' names
			_, err = sub.vector(p, func(i int) (int, error) {
				i, err := sub.leb(i)
				if err != nil {
					return i, err
				}
				return sub.vector(i, sub.indexedName)
			})
		}
		if err != nil {
			return err
		}
		i = p + int(size)
	}
	return nil
}

// indexedName skips an index and a name at i.
func (w bounder) indexedName(i int) (int, error) {
	i, err := w.leb(i)
	if err != nil {
		return i, err
	}
	return w.bytes(i)
}

// element skips an element segment at i (its flags 0 to 7 say which
// parts it has).
func (w bounder) element(i int) (int, error) {
	flags, i, ok := readU32(w.b, i)
	if !ok || flags > 7 {
		return i, unsupported(i, "element segment flags in %s", w.where)
	}
	var err error
	if flags&0x03 == 0x02 { // an explicit table index
		i, err = w.leb(i)
	}
	if err == nil && flags&0x01 == 0 { // active: an offset
		i, err = w.constExpr(i)
	}
	if err == nil && flags&0x03 != 0 { // an element kind or reference type
		i, err = w.refType(i)
	}
	if err != nil {
		return i, err
	}
	if flags&0x04 != 0 { // expressions
		return w.vector(i, w.constExpr)
	}
	return w.vector(i, w.leb) // function indices
}

// data skips a data segment at i.
func (w bounder) data(i int) (int, error) {
	flags, i, ok := readU32(w.b, i)
	if !ok || flags > 2 {
		return i, unsupported(i, "data segment flags in %s", w.where)
	}
	var err error
	if flags == 2 { // a memory index
		i, err = w.leb(i)
	}
	if err == nil && flags != 1 { // active: an offset
		i, err = w.constExpr(i)
	}
	if err != nil {
		return i, err
	}
	return w.bytes(i)
}

// refType skips a reference type (or an element kind, 0x00) at i.
func (w bounder) refType(i int) (int, error) {
	if i >= len(w.b) {
		return i, malformed(w.where, i, "truncated reference type")
	}
	if w.b[i] == 0x63 || w.b[i] == 0x64 {
		return w.leb(i + 1)
	}
	return i + 1, nil
}

// constExpr skips a constant expression at i, through its end.
func (w bounder) constExpr(i int) (int, error) {
	for i < len(w.b) {
		op := w.b[i]
		i++
		var err error
		switch op {
		case opEnd:
			return i, nil
		case 0x41, 0x42, 0x23, 0xd0, 0xd2: // *.const, global.get, ref.null, ref.func
			i, err = w.leb(i)
		case 0x43: // f32.const
			i += 4
		case 0x44: // f64.const
			i += 8
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended constants
		case 0xfd: // v128.const
			sub, next, ok := readU32(w.b, i)
			if !ok || sub != 12 {
				return i, unsupported(i, "constant instruction 0xfd %d in %s", sub, w.where)
			}
			i = next + 16
		default:
			return i - 1, unsupported(i-1, "constant instruction 0x%02x in %s", op, w.where)
		}
		if err != nil {
			return i, err
		}
	}
	return i, malformed(w.where, i, "truncated constant expression")
}
