package jsonfast

// Compacted reports whether raw is one valid JSON value that json.Marshal
// would copy unchanged when it encodes a json.RawMessage holding it: no
// whitespace outside strings, and none of the characters json.Marshal
// escapes in raw messages (<, >, & and U+2028, U+2029). The output of
// json.Marshal and of [Append] always is. Callers that write raw messages
// themselves check it and otherwise fall back to json.Marshal, which
// compacts, escapes, or rejects invalid JSON.
func Compacted(raw []byte) bool {
	c := checker{data: raw}
	return c.value(0) && c.i == len(raw)
}

// checker walks one compact JSON value without building it.
type checker struct {
	data []byte
	i    int
}

func (c *checker) at(b byte) bool {
	if c.i < len(c.data) && c.data[c.i] == b {
		c.i++
		return true
	}
	return false
}

func (c *checker) value(depth int) bool {
	if c.i >= len(c.data) {
		return false
	}
	switch c.data[c.i] {
	case '"':
		return c.str()
	case '{':
		c.i++
		return depth < maxDepth && (c.at('}') || c.members(depth+1))
	case '[':
		c.i++
		return depth < maxDepth && (c.at(']') || c.elements(depth+1))
	case 't':
		return c.literal("true")
	case 'f':
		return c.literal("false")
	case 'n':
		return c.literal("null")
	}
	end, ok := scanNumber(c.data, c.i)
	c.i = end
	return ok
}

func (c *checker) members(depth int) bool {
	for {
		if c.i >= len(c.data) || c.data[c.i] != '"' || !c.str() || !c.at(':') || !c.value(depth) {
			return false
		}
		if !c.at(',') {
			return c.at('}')
		}
	}
}

func (c *checker) elements(depth int) bool {
	for {
		if !c.value(depth) {
			return false
		}
		if !c.at(',') {
			return c.at(']')
		}
	}
}

func (c *checker) literal(word string) bool {
	if len(c.data)-c.i < len(word) || string(c.data[c.i:c.i+len(word)]) != word {
		return false
	}
	c.i += len(word)
	return true
}

// str checks the string at i: valid escapes, no control characters, none
// of the characters that json.Marshal would escape. Invalid UTF-8 is
// copied by json.Marshal as it is, so it passes.
func (c *checker) str() bool {
	for i := c.i + 1; i < len(c.data); {
		switch b := c.data[i]; {
		case b == '"':
			c.i = i + 1
			return true
		case b == '\\':
			n := escapeLen(c.data, i)
			if n == 0 {
				return false
			}
			i += n
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			return false
		case b == 0xE2 && i+2 < len(c.data) && c.data[i+1] == 0x80 && c.data[i+2]&^1 == 0xA8:
			return false
		default:
			i++
		}
	}
	return false
}

// escapeLen is the length of the valid escape at b[i], or 0.
func escapeLen(b []byte, i int) int {
	if i+1 >= len(b) {
		return 0
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if hex4(b, i) >= 0 {
			return 6
		}
	}
	return 0
}
