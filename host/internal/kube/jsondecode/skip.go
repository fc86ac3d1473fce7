package jsondecode

// Events over the decoder's caps (settings.Watching.MaxEventBytes and
// MaxEventDepth) are skipped rather than buffered and parsed: the decoder
// reads on to the event's end, keeping nothing of it but the few fields
// that name its object, and reports it. Ending the stream instead would not
// help: the informer would resume it from the same resource version and
// meet the same event again, and every other object's changes would wait
// behind it.

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// SkippedEvent describes a watch event that the decoder skipped. The
// fields that name the object are empty when they could not be read
// (they come after the cap was reached, or the event is not a watch event).
type SkippedEvent struct {
	// Reason says which cap it passed: "size" or "depth".
	Reason string
	// Bytes is the event's length (as far as it was read, if the stream
	// ended within it); Depth its deepest nesting, as far as it was read.
	Bytes, Depth int
	// Limit is the cap it passed (bytes or levels).
	Limit int
	// Type is the event's type (ADDED, MODIFIED, DELETED...).
	Type string
	// The object's apiVersion, kind and metadata.
	APIVersion, Kind, Namespace, Name, UID, ResourceVersion string
}

// Object names the object, as far as it is known: "namespace/name",
// "name", or "an unnamed object".
func (s SkippedEvent) Object() string {
	switch {
	case s.Name == "":
		return "an unnamed object"
	case s.Namespace == "":
		return s.Name
	}
	return s.Namespace + "/" + s.Name
}

// Message says what was skipped, why, and what to do about it, in one line.
func (s SkippedEvent) Message() string {
	what, setting := fmt.Sprintf("%d bytes", s.Bytes), "watching.maxEventBytes"
	if s.Reason == "depth" {
		what, setting = fmt.Sprintf("nested %d levels deep", s.Depth), "watching.maxEventDepth"
	}
	var about []string
	if s.Type != "" {
		about = append(about, s.Type)
	}
	if s.ResourceVersion != "" {
		about = append(about, "resourceVersion "+s.ResourceVersion)
	}
	desc := ""
	if len(about) > 0 {
		desc = " (" + strings.Join(about, ", ") + ")"
	}
	return fmt.Sprintf("Skipped a watch event%s of %s: %s, over %s (%d); its handlers do not see this version. "+
		"Shrink the object, or raise %s.", desc, s.Object(), what, setting, s.Limit, setting)
}

// Stub returns, for a skipped DELETED event whose object is known, that
// object with only its identity: enough for the watch cache to drop it and
// for the handlers to hear it is gone, where skipping the deletion would
// leave it in the cache for good. Otherwise nil.
func (s *SkippedEvent) Stub() *unstructured.Unstructured {
	if s == nil || s.Type != string(watch.Deleted) || s.Name == "" || s.Kind == "" || s.APIVersion == "" {
		return nil
	}
	meta := map[string]any{"name": s.Name}
	for key, value := range map[string]string{"namespace": s.Namespace, "uid": s.UID, "resourceVersion": s.ResourceVersion} {
		if value != "" {
			meta[key] = value
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": s.APIVersion, "kind": s.Kind, "metadata": meta}}
}

// maxCaptured is the longest value kept for a naming field; longer ones
// (no valid name is) are cut.
const maxCaptured = 253

// skipScanner reads an event it does not keep, chunk by chunk, to find its
// end, its depth and the fields that name its object: "type", and the
// object's apiVersion, kind, and metadata's name, namespace, uid and
// resourceVersion. It tracks the keys of the first three levels only.
type skipScanner struct {
	ev       SkippedEvent
	depth    int
	keys     [4]string // the current key at levels 1-3
	inArray  [4]bool   // levels 1-3 that are arrays
	wantKey  bool      // the next string at this level is a key
	inString bool
	escaped  bool
	str      strings.Builder // the string being read, when it may matter
	capture  bool            // str is being kept
	pending  string          // a key read, before its ':'
}

// feed scans the next chunk of the event and returns how many of its bytes
// belong to the event and whether the event ended there.
func (s *skipScanner) feed(b []byte) (int, bool) {
	for i, c := range b {
		s.ev.Bytes++
		switch {
		case s.escaped:
			s.escaped = false
			s.keep(c)
		case s.inString:
			s.readString(c)
		case c == '"':
			s.inString = true
			s.str.Reset()
			s.capture = s.depth <= 3
		case c == ':':
			if s.depth <= 3 {
				s.keys[s.depth] = s.pending
			}
		case c == ',':
			s.wantKey = s.depth <= 3 && !s.inArray[s.depth]
		case c == '{' || c == '[':
			s.open(c == '[')
		case c == '}' || c == ']':
			if s.depth--; s.depth <= 0 {
				return i + 1, true
			}
			s.wantKey = false
		}
	}
	return len(b), false
}

func (s *skipScanner) open(array bool) {
	s.depth++
	s.ev.Depth = max(s.ev.Depth, s.depth)
	s.wantKey = !array
	if s.depth <= 3 {
		s.inArray[s.depth] = array
		s.keys[s.depth] = ""
	}
}

func (s *skipScanner) keep(c byte) {
	if s.capture && s.str.Len() < maxCaptured {
		s.str.WriteByte(c)
	}
}

func (s *skipScanner) readString(c byte) {
	switch c {
	case '\\':
		s.escaped = true
		s.keep(c)
	case '"':
		s.inString = false
		if s.capture && s.wantKey {
			s.pending = s.str.String()
			s.wantKey = false
		} else if s.capture {
			s.value(s.str.String())
		}
	default:
		s.keep(c)
	}
}

// value records a string value at the current level when it names the
// event's object.
func (s *skipScanner) value(v string) {
	if s.depth < 1 || s.inArray[s.depth] {
		return
	}
	k := s.keys
	switch {
	case s.depth == 1 && k[1] == "type":
		s.ev.Type = v
	case s.depth == 2 && k[1] == "object" && !s.inArray[1]:
		switch k[2] {
		case "apiVersion":
			s.ev.APIVersion = v
		case "kind":
			s.ev.Kind = v
		}
	case s.depth == 3 && k[1] == "object" && k[2] == "metadata" && !s.inArray[2]:
		switch k[3] {
		case "name":
			s.ev.Name = v
		case "namespace":
			s.ev.Namespace = v
		case "uid":
			s.ev.UID = v
		case "resourceVersion":
			s.ev.ResourceVersion = v
		}
	}
}
