package jsonfast

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Decode parses data, one JSON value with optional surrounding whitespace,
// into exactly what json.Unmarshal stores in an any: map[string]any,
// []any, string, float64, bool or nil, the last of repeated keys winning.
// It reports false, and the caller should use encoding/json, when data is
// not valid JSON, has data after the value, nests too deeply, or has a
// number that does not fit a float64 (json.Unmarshal's errors).
func Decode(data []byte) (any, bool) {
	d := decoder{data: data}
	d.space()
	v, ok := d.value(0)
	if !ok {
		return nil, false
	}
	if d.space(); d.i != len(d.data) {
		return nil, false
	}
	return v, true
}

// DecodeObject is [Decode] for a JSON object or null: what json.Unmarshal
// stores in a nil map[string]any (nil for null). Any other value, which
// json.Unmarshal rejects with a type error, reports false.
func DecodeObject(data []byte) (map[string]any, bool) {
	v, ok := Decode(data)
	if !ok {
		return nil, false
	}
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case nil:
		return nil, true
	}
	return nil, false
}

// decoder reads one JSON value from data at i.
type decoder struct {
	data []byte
	i    int
}

func (d *decoder) space() {
	for d.i < len(d.data) && isSpace(d.data[d.i]) {
		d.i++
	}
}

// literal consumes word if data continues with it.
func (d *decoder) literal(word string) bool {
	if len(d.data)-d.i < len(word) || string(d.data[d.i:d.i+len(word)]) != word {
		return false
	}
	d.i += len(word)
	return true
}

func (d *decoder) value(depth int) (any, bool) {
	if d.i >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.i]; {
	case c == '"':
		s, ok := d.str()
		return s, ok
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	return nil, false
}

func (d *decoder) object(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	m := map[string]any{}
	d.i++
	if d.space(); d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return nil, false
		}
		key, ok := d.str()
		if !ok {
			return nil, false
		}
		if d.space(); d.i >= len(d.data) || d.data[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.space()
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[key] = v
		if more, ok := d.next('}'); !more {
			return m, ok
		}
	}
}

// next consumes the separator after a member or element: more after a
// comma (and the whitespace after it), done after the closing bracket, not
// ok on anything else.
func (d *decoder) next(closing byte) (more, ok bool) {
	d.space()
	if d.i >= len(d.data) {
		return false, false
	}
	c := d.data[d.i]
	d.i++
	switch c {
	case ',':
		d.space()
		return true, true
	case closing:
		return false, true
	}
	return false, false
}

func (d *decoder) array(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	a := make([]any, 0)
	d.i++
	if d.space(); d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if more, ok := d.next(']'); !more {
			return a, ok
		}
	}
}

func (d *decoder) number() (any, bool) {
	end, ok := scanNumber(d.data, d.i)
	if !ok {
		return nil, false
	}
	s := d.data[d.i:end]
	d.i = end
	if f, ok := smallInt(s); ok {
		return f, true
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return nil, false
	}
	return f, true
}

// smallInt converts an integer of up to 15 digits, which a float64 holds
// exactly, as strconv.ParseFloat would (-0 included).
func smallInt(s []byte) (float64, bool) {
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	f := float64(n)
	if neg {
		f = -f
	}
	return f, true
}

// str reads the string at i (at its opening quote). Strings without
// escapes or invalid UTF-8 are copied at once; others are unquoted as
// encoding/json does.
func (d *decoder) str() (string, bool) {
	start := d.i + 1
	for i := start; i < len(d.data); {
		c := d.data[i]
		switch {
		case c == '"':
			d.i = i + 1
			return string(d.data[start:i]), true
		case c == '\\':
			return d.unquote(start, i)
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(d.data[i:])
			if r == utf8.RuneError && size == 1 {
				return d.unquote(start, i)
			}
			i += size
		}
	}
	return "", false
}

// unquote reads the rest of a string with escapes or invalid UTF-8 from
// i, where the plain prefix data[start:i] ends.
func (d *decoder) unquote(start, i int) (string, bool) {
	b := make([]byte, 0, i-start+16)
	b = append(b, d.data[start:i]...)
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			d.i = i + 1
			return string(b), true
		case c == '\\':
			var ok bool
			if b, i, ok = d.escape(b, i); !ok {
				return "", false
			}
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default: // invalid bytes become U+FFFD, one each
			r, size := utf8.DecodeRune(d.data[i:])
			b = utf8.AppendRune(b, r)
			i += size
		}
	}
	return "", false
}

// escape appends the character of the escape at data[i] (a backslash) and
// returns the index after it.
func (d *decoder) escape(b []byte, i int) ([]byte, int, bool) {
	if i+1 >= len(d.data) {
		return b, i, false
	}
	switch c := d.data[i+1]; c {
	case '"', '\\', '/':
		return append(b, c), i + 2, true
	case 'b':
		return append(b, '\b'), i + 2, true
	case 'f':
		return append(b, '\f'), i + 2, true
	case 'n':
		return append(b, '\n'), i + 2, true
	case 'r':
		return append(b, '\r'), i + 2, true
	case 't':
		return append(b, '\t'), i + 2, true
	case 'u':
		r := hex4(d.data, i)
		if r < 0 {
			return b, i, false
		}
		i += 6
		if utf16.IsSurrogate(r) {
			// A valid pair is one character; anything else makes this
			// half U+FFFD and leaves what follows to be read on its own.
			if dec := utf16.DecodeRune(r, hex4(d.data, i)); dec != utf8.RuneError {
				return utf8.AppendRune(b, dec), i + 6, true
			}
			r = utf8.RuneError
		}
		return utf8.AppendRune(b, r), i, true
	}
	return b, i, false
}

// hex4 returns the code unit of the \uXXXX escape at b[i], or -1.
func hex4(b []byte, i int) rune {
	if len(b)-i < 6 || b[i] != '\\' || b[i+1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[i+2 : i+6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
