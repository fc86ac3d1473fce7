package persistence

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// The room a diff-base has on an object. An annotation's is counted as the
// API server counts it (bytes of keys and values); the status's from the
// object's size as compact JSON, counted without encoding it.

// annotationRoom is how long each of the diff-base's values under keys may
// be: the smaller of the configured budget and what the object's other
// annotations (as the patch leaves them) leave under the API server's
// limit, shared by the keys.
func (s *Storage) annotationRoom(p *Patch, body map[string]any, keys []string) int {
	mine := map[string]bool{}
	total := 0
	for _, key := range keys {
		mine[key] = true
		total += len(key)
	}
	patched, _ := p.Get(objects.Path{"metadata", "annotations"})
	changes, _ := patched.(map[string]any)
	others := 0
	for key, value := range objects.GetMap(body, objects.Path{"metadata", "annotations"}) {
		if _, changed := changes[key]; !changed && !mine[key] {
			others += len(key) + stringLen(value)
		}
	}
	for key, value := range changes {
		if value, set := value.(string); set && !mine[key] { // a removal (nil) leaves nothing
			others += len(key) + len(value)
		}
	}
	room := min(s.annotationLimit(), annotationsLimit-others)
	return (room - total) / len(keys)
}

// annotationLimit is the configured bound on the diff-base annotation, or
// the API server's limit on all annotations.
func (s *Storage) annotationLimit() int {
	if s.annotationBytes > 0 {
		return min(s.annotationBytes, annotationsLimit)
	}
	return annotationsLimit
}

func stringLen(v any) int {
	s, _ := v.(string)
	return len(s)
}

// statusOverhead is what the status diff-base adds to the object besides
// its value: its key, and status.kopf if that is new.
const statusOverhead = len(`,"kopf":{"last-handled-configuration":}`)

// statusRoom is how long the status diff-base's value (as a JSON string)
// may be: what is left of the configured object size once the object
// without its stored diff-base is counted. With no configured size it is
// unbounded.
func (s *Storage) statusRoom(body map[string]any) int {
	if s.objectBytes <= 0 {
		return math.MaxInt
	}
	size := jsonSize(body) + statusOverhead
	if old, ok := objects.Get(body, statusDiffBase); ok {
		size -= jsonSize(old)
	}
	return s.objectBytes - size
}

// jsonSize is the length of v as compact JSON (UTF-8 left as it is, as the
// API server stores it), counted without encoding v.
func jsonSize(v any) int {
	switch v := v.(type) {
	case nil:
		return len("null")
	case bool:
		if v {
			return len("true")
		}
		return len("false")
	case string:
		return quotedLen(v)
	case int64:
		var buf [24]byte
		return len(strconv.AppendInt(buf[:0], v, 10))
	case float64:
		raw, _ := json.Marshal(v) // encoding/json's own float format
		return len(raw)
	case map[string]any:
		n := 2 + max(0, len(v)-1) // braces, commas
		for key, value := range v {
			n += quotedLen(key) + 1 + jsonSize(value)
		}
		return n
	case []any:
		n := 2 + max(0, len(v)-1)
		for _, value := range v {
			n += jsonSize(value)
		}
		return n
	}
	raw, _ := json.Marshal(v) // other numbers; never on a decoded body
	return len(raw)
}

// quotedLen is the length of s as encoding/json writes it without HTML
// escaping (as objects.Encode): quotes, two-character escapes for quotes,
// backslashes and \b \f \n \r \t, \u00XX for other control characters,
// \ufffd for invalid UTF-8, \u2028 and \u2029 for those separators.
func quotedLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}
