package jsondecode

// Dropping metadata.managedFields while parsing. They are often the larger
// part of an object (61 % of the bench's listing) and the host keeps them
// only when settings.Kube.KeepManagedFields asks; stripping them after
// decoding (an informer transform) meant building them first, for every
// event and, worse, for the whole initial listing at once. The parser
// instead skips them: it knows where it is through the parsePath of each
// object it parses, and reads a dropped value's bytes (checking that they
// are valid JSON, so that a document it accepts is one it would accept in
// full) without building anything.

// parsePath says which object the parser is in, as far as dropping
// managedFields is concerned; everything else is pathPlain.
type parsePath uint8

const (
	// pathPlain is any object: parsed whole.
	pathPlain parsePath = iota
	// pathEvent is a watch event: its "object" is a resource.
	pathEvent
	// pathResource is a Kubernetes object: its "metadata" is metadata.
	pathResource
	// pathMetadata is an object's metadata: its "managedFields" is dropped.
	pathMetadata
)

// valueAt parses the value at pos: an object there is parsed at path.
func (p *jsonParser) valueAt(path parsePath) (any, error) {
	if path == pathPlain {
		return p.value()
	}
	if p.skipSpace(); p.pos < len(p.data) && p.data[p.pos] == '{' {
		return p.object(path)
	}
	return p.value()
}

// member parses the value of key in an object at path; keep is false for
// a dropped one.
func (p *jsonParser) member(path parsePath, key string) (v any, keep bool, err error) {
	switch {
	case path == pathEvent && key == "object":
		v, err = p.valueAt(pathResource)
	case path == pathResource && key == "metadata":
		v, err = p.valueAt(pathMetadata)
	case path == pathMetadata && key == "managedFields":
		return nil, false, p.skip()
	default:
		v, err = p.value()
	}
	return v, true, err
}

// skip reads past the value at pos without building it, with the checks
// (grammar, depth, number range) that parsing it would make.
func (p *jsonParser) skip() error {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return p.errorf("unexpected end of JSON input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.skipComposite('}')
	case c == '[':
		return p.skipComposite(']')
	case c == '"':
		return p.skipString()
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := p.number()
		return err
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	default:
		return p.errorf("invalid character %q looking for beginning of value", c)
	}
}

// skipComposite skips the object or array at pos, which ends with closing.
func (p *jsonParser) skipComposite(closing byte) error {
	if err := p.enter(); err != nil {
		return err
	}
	if p.pos < len(p.data) && p.data[p.pos] == closing {
		p.pos++
		p.depth--
		return nil
	}
	for more := true; more; {
		if closing == '}' {
			if err := p.skipKey(); err != nil {
				return err
			}
		}
		if err := p.skip(); err != nil {
			return err
		}
		var err error
		if more, err = p.next(closing); err != nil {
			return err
		}
	}
	return nil
}

// skipKey skips an object's key and the ':' after it.
func (p *jsonParser) skipKey() error {
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return p.errorf("want a string for an object key")
	}
	if err := p.skipString(); err != nil {
		return err
	}
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != ':' {
		return p.errorf("want ':' after an object key")
	}
	p.pos++
	return nil
}

// skipString skips the string at pos (at its opening quote), checking its
// escapes and that it holds no control character, as str does.
func (p *jsonParser) skipString() error {
	for i := p.pos + 1; i < len(p.data); i++ {
		switch c := p.data[i]; {
		case c == '"':
			p.pos = i + 1
			return nil
		case c < ' ':
			p.pos = i
			return p.errorf("invalid control character %q in string", c)
		case c != '\\':
		case i+1 >= len(p.data):
			p.pos = len(p.data)
			return p.errorf("unexpected end of JSON input in a string")
		case p.data[i+1] == 'u':
			if hex4(p.data, i) < 0 {
				p.pos = i
				return p.errorf("invalid \\u escape in string")
			}
			i += 5
		case isEscape(p.data[i+1]):
			i++
		default:
			p.pos = i + 1
			return p.errorf("invalid escape character %q in string", p.data[i+1])
		}
	}
	p.pos = len(p.data)
	return p.errorf("unexpected end of JSON input in a string")
}

// isEscape says whether c may follow a backslash (other than 'u').
func isEscape(c byte) bool {
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	}
	return false
}
