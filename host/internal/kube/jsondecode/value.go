package jsondecode

// A JSON parser for watch events. The informers' watch streams carry every
// change of every watched object; decoding them with client-go's machinery
// (a JSON framer, a meta-factory unmarshal for apiVersion and kind, the
// WatchEvent envelope, then sigs.k8s.io/json for the object) read each event
// several times over and cost 15-18 % of the host's CPU in the
// kopfexamples benchmark. parseJSON reads a value once and builds exactly
// what sigs.k8s.io/json.UnmarshalCaseSensitivePreserveInts builds into an
// interface{} (the decoder behind unstructured.Unstructured):
//
//   - objects are map[string]any (keys case-sensitive, the last of
//     duplicate keys wins), arrays []any (empty ones non-nil), strings
//     string, true and false bool, null nil;
//   - a number without a '.' that fits an int64 is an int64 ("-0", "12");
//     any other number is a float64 ("1.0", "1e3", integers beyond int64),
//     and one beyond float64's range is an error;
//   - escapes as in encoding/json, \uXXXX with surrogate pairs; a lone or
//     invalid surrogate becomes U+FFFD, as does each byte of invalid UTF-8;
//   - nesting deeper than 10000 is an error, as in encoding/json.

import (
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth is encoding/json's limit on nested arrays and objects.
const maxJSONDepth = 10000

// jsonSyntaxError is invalid JSON, with the byte offset where the parser
// stopped.
type jsonSyntaxError struct {
	msg    string
	Offset int
}

// Error describes the problem and where it is.
func (e *jsonSyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.msg)
}

// parseJSON parses data, one JSON value with optional whitespace around it
// (see the top of the file for what it becomes).
func parseJSON(data []byte) (any, error) {
	return parseJSONCached(data, nil)
}

// parseJSONCached is parseJSON taking its strings from a cache (nil for
// none).
func parseJSONCached(data []byte, strings *stringCache) (any, error) {
	return parseJSONAt(data, strings, pathPlain)
}

// parseJSONAt is parseJSONCached for a document at path: a watch event or
// an object whose metadata.managedFields are dropped while parsing
// (managedfields.go), or pathPlain for any document, parsed whole.
func parseJSONAt(data []byte, strings *stringCache, path parsePath) (any, error) {
	p := jsonParser{data: data, strings: strings}
	v, err := p.valueAt(path)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, p.errorf("invalid character %q after top-level value", p.data[p.pos])
	}
	return v, nil
}

// jsonParser reads data from pos on; depth counts the open arrays and
// objects. It takes its strings from a cache when it has one.
type jsonParser struct {
	data    []byte
	pos     int
	depth   int
	strings *stringCache // nil: no cache
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return &jsonSyntaxError{msg: fmt.Sprintf(format, args...), Offset: p.pos}
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// value parses the value that starts at pos (after whitespace).
func (p *jsonParser) value() (any, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of JSON input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(pathPlain)
	case c == '[':
		return p.array()
	case c == '"':
		b, err := p.str()
		if err != nil {
			return nil, err
		}
		return p.strings.value(b), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.errorf("invalid character %q looking for beginning of value", c)
	}
}

func (p *jsonParser) literal(word string) error {
	end := p.pos + len(word)
	if end > len(p.data) || string(p.data[p.pos:end]) != word {
		return p.errorf("invalid literal, want %q", word)
	}
	p.pos = end
	return nil
}

// enter opens an array or object at pos.
func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.errorf("exceeded max depth %d", maxJSONDepth)
	}
	p.pos++
	p.skipSpace()
	return nil
}

// next reads the ',' or the closing byte after an element and says
// whether another element follows.
func (p *jsonParser) next(closing byte) (bool, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return false, p.errorf("unexpected end of JSON input")
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		return true, nil
	case closing:
		p.pos++
		p.depth--
		return false, nil
	}
	return false, p.errorf("invalid character %q after element, want ',' or %q", p.data[p.pos], closing)
}

// object parses the object at pos; at a path other than pathPlain, its
// members are parsed as member says.
func (p *jsonParser) object(path parsePath) (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	m := make(map[string]any)
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return m, nil
	}
	for more := true; more; {
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		var v any
		keep := true
		if path == pathPlain {
			v, err = p.value()
		} else {
			v, keep, err = p.member(path, key)
		}
		if err != nil {
			return nil, err
		}
		if keep {
			m[key] = v
		}
		if more, err = p.next('}'); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// key reads an object's key and the ':' after it.
func (p *jsonParser) key() (string, error) {
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return "", p.errorf("want a string for an object key")
	}
	b, err := p.str()
	if err != nil {
		return "", err
	}
	key := p.strings.key(b)
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != ':' {
		return "", p.errorf("want ':' after an object key")
	}
	p.pos++
	return key, nil
}

func (p *jsonParser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	a := make([]any, 0)
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return a, nil
	}
	for more := true; more; {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		if more, err = p.next(']'); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// str reads the string that starts at pos (at its opening quote) and
// returns its contents: the input's own bytes for strings of plain valid
// UTF-8 (the caller copies them), else the unescaped bytes.
func (p *jsonParser) str() ([]byte, error) {
	start := p.pos + 1
	ascii := true
	for i := start; i < len(p.data); i++ {
		switch c := p.data[i]; {
		case c == '"':
			raw := p.data[start:i]
			if !ascii && !utf8.Valid(raw) {
				return p.unquote(start)
			}
			p.pos = i + 1
			return raw, nil
		case c == '\\':
			return p.unquote(start)
		case c < ' ':
			p.pos = i
			return nil, p.errorf("invalid control character %q in string", c)
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	p.pos = len(p.data)
	return nil, p.errorf("unexpected end of JSON input in a string")
}

// unquote decodes the string whose contents start at start, with escapes
// and invalid UTF-8 handled as encoding/json handles them.
func (p *jsonParser) unquote(start int) ([]byte, error) {
	b := make([]byte, 0, 64)
	i := start
	for i < len(p.data) {
		switch c := p.data[i]; {
		case c == '"':
			p.pos = i + 1
			return b, nil
		case c == '\\':
			var err error
			if b, i, err = p.escape(b, i); err != nil {
				return nil, err
			}
		case c < ' ':
			p.pos = i
			return nil, p.errorf("invalid control character %q in string", c)
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(p.data[i:])
			b = utf8.AppendRune(b, r) // U+FFFD for each invalid byte
			i += size
		}
	}
	p.pos = len(p.data)
	return nil, p.errorf("unexpected end of JSON input in a string")
}

// escape appends the character that the escape at i (its backslash)
// stands for to b, and returns where the string goes on.
func (p *jsonParser) escape(b []byte, i int) ([]byte, int, error) {
	if i+1 >= len(p.data) {
		p.pos = len(p.data)
		return nil, 0, p.errorf("unexpected end of JSON input in a string")
	}
	switch c := p.data[i+1]; c {
	case '"', '\\', '/':
		return append(b, c), i + 2, nil
	case 'b':
		return append(b, '\b'), i + 2, nil
	case 'f':
		return append(b, '\f'), i + 2, nil
	case 'n':
		return append(b, '\n'), i + 2, nil
	case 'r':
		return append(b, '\r'), i + 2, nil
	case 't':
		return append(b, '\t'), i + 2, nil
	case 'u':
		return p.escapeU(b, i)
	}
	p.pos = i + 1
	return nil, 0, p.errorf("invalid escape character %q in string", p.data[i+1])
}

// escapeU decodes \uXXXX at i, with the low half of a surrogate pair when
// one follows.
func (p *jsonParser) escapeU(b []byte, i int) ([]byte, int, error) {
	r := hex4(p.data, i)
	if r < 0 {
		p.pos = i
		return nil, 0, p.errorf("invalid \\u escape in string")
	}
	i += 6
	if utf16.IsSurrogate(r) {
		if pair := utf16.DecodeRune(r, hex4(p.data, i)); pair != unicode.ReplacementChar {
			return utf8.AppendRune(b, pair), i + 6, nil
		}
		r = unicode.ReplacementChar
	}
	return utf8.AppendRune(b, r), i, nil
}

// hex4 decodes \uXXXX at data[i:], or returns -1.
func hex4(data []byte, i int) rune {
	if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range data[i+2 : i+6] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
