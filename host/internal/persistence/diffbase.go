package persistence

import (
	"fmt"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// kubectlLastApplied is kubectl's own copy of the applied configuration; it
// changes with every apply and is never essential.
const kubectlLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Essence builds the diff-base essence of body as Kopf does: the body
// without apiVersion, kind, status and metadata, except metadata.labels and
// metadata.annotations; minus the annotations of any Kopf-managed prefix
// (ours included) and kubectl's last-applied-configuration; plus the extra
// fields handlers declare (e.g. status.phase for a field handler on it);
// without empty labels, annotations, metadata or status. body is not
// modified.
func (s *Storage) Essence(body map[string]any, extraFields []objects.Path) map[string]any {
	essence := map[string]any{}
	for key, value := range body {
		switch key {
		case "apiVersion", "kind", "metadata", "status":
		default:
			essence[key] = objects.DeepCopy(value)
		}
	}
	for _, field := range []objects.Path{{"metadata", "labels"}, {"metadata", "annotations"}} {
		cherryPick(essence, body, field)
	}
	if annotations := objects.GetMap(essence, objects.Path{"metadata", "annotations"}); annotations != nil {
		dropNonEssential(annotations, s.keys.prefix)
	}
	for _, field := range extraFields {
		cherryPick(essence, body, field)
	}
	return s.clear(essence)
}

func cherryPick(dst, src map[string]any, field objects.Path) {
	if v, ok := objects.Get(src, field); ok && len(field) > 0 {
		objects.Set(dst, field, objects.DeepCopy(v))
	}
}

func dropNonEssential(annotations map[string]any, ownPrefix string) {
	managed := managedPrefixes(annotations)
	managed[ownPrefix] = true
	for key := range annotations {
		prefix, _, hasPrefix := strings.Cut(key, "/")
		if key == kubectlLastApplied || (hasPrefix && managed[prefix]) {
			delete(annotations, key)
		}
	}
}

// clear strips the storage's own state from an essence (our annotations, the
// legacy status.kopf.progress) and the empty stanzas, as Kopf's progress
// storage does to both the stored and the fresh essence.
func (s *Storage) clear(essence map[string]any) map[string]any {
	if annotations := objects.GetMap(essence, objects.Path{"metadata", "annotations"}); annotations != nil {
		for key := range annotations {
			if strings.HasPrefix(key, s.keys.prefix+"/") {
				delete(annotations, key)
			}
		}
	}
	objects.Remove(essence, legacyProgress)
	objects.Remove(essence, statusDiffBase)
	for _, path := range []objects.Path{{"metadata", "annotations"}, {"metadata", "labels"}, {"metadata"}, {"status"}} {
		if v, ok := objects.Get(essence, path); ok && isEmptyStanza(v) {
			objects.Remove(essence, path)
		}
	}
	return essence
}

func isEmptyStanza(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// FetchDiffBase reads the last handled essence from body (with
// Options.DiffBaseInStatus the status first; then the V2 key, then the V1
// key), cleared as [Storage.Essence] clears a fresh one; fresh is the
// object's essence now. old is nil when there is none: the object was never
// handled (a creation). A compressed diff-base ([FormGzip]) is read back
// whole. For a digest ([FormDigest]), old is fresh when fresh has that
// digest (nothing changed); otherwise old is nil and unknown is true:
// something changed since, but what it was is lost (the cause is an update
// whose old essence is null).
func (s *Storage) FetchDiffBase(body, fresh map[string]any) (old map[string]any, unknown bool, err error) {
	st, err := s.readDiffBase(body)
	if err != nil || st.form != FormDigest {
		return st.essence, false, err
	}
	encoded, err := objects.EncodeASCII(fresh)
	if err != nil {
		return nil, false, fmt.Errorf("diff-base: %w", err)
	}
	if digest(encoded) == st.digest {
		return fresh, false, nil
	}
	return nil, true, nil
}

// stored is a diff-base as read from an object: its essence (nil for none
// and for a digest), the digest of FormDigest, and its form.
type stored struct {
	essence map[string]any
	digest  string
	form    Form
}

func (s *Storage) readDiffBase(body map[string]any) (stored, error) {
	if s.diffBaseInStatus {
		if value, isString := getString(body, statusDiffBase); isString {
			if st, err := s.decodeDiffBase(statusDiffBase.String(), value); err != nil || st.form != FormNone {
				return st, err
			}
		}
	}
	for _, key := range s.Keys(s.diffBaseKey, body) {
		value, isString := getString(body, annotationPath(key))
		if !isString {
			continue
		}
		if st, err := s.decodeDiffBase(key, value); err != nil || st.form != FormNone {
			return st, err
		}
	}
	return stored{}, nil
}

func getString(body map[string]any, path objects.Path) (string, bool) {
	v, _ := objects.Get(body, path)
	str, ok := v.(string)
	return str, ok
}

// decodeDiffBase reads one stored value in any [Form]; JSON null is none.
func (s *Storage) decodeDiffBase(key, value string) (stored, error) {
	corrupt := func(err error) (stored, error) {
		return stored{}, fmt.Errorf("diff-base: %w", &CorruptRecordError{Key: key, Err: err})
	}
	form, raw := FormJSON, []byte(value)
	switch {
	case strings.HasPrefix(value, DigestPrefix):
		sum, err := parseDigest(value[len(DigestPrefix):])
		if err != nil {
			return corrupt(err)
		}
		return stored{digest: sum, form: FormDigest}, nil
	case strings.HasPrefix(value, GzipPrefix):
		var err error
		if raw, err = inflate(value[len(GzipPrefix):], s.maxEssenceBytes); err != nil {
			return corrupt(err)
		}
		form = FormGzip
	}
	essence, err := objects.DecodeMap(raw)
	if err != nil {
		return corrupt(err)
	}
	if essence == nil {
		return stored{}, nil
	}
	return stored{essence: s.clear(essence), form: form}, nil
}

// StoreDiffBase writes essence as the new diff-base into p, unless body
// already holds an equal one: compact JSON with a trailing newline (Kopf's
// format, as kubectl's own), under every key, with the marker if needed; or,
// with Options.DiffBaseInStatus, as a JSON string in the status. A
// diff-base with no room for it there is stored reduced ([fit] decides);
// the patch then notes it ([Patch.Reduced]) unless body holds that form
// already. After [Patch.DigestOnly] it is stored as its digest.
func (s *Storage) StoreDiffBase(p *Patch, body map[string]any, essence map[string]any) error {
	st, err := s.readDiffBase(body)
	if err != nil {
		st = stored{} // a corrupt one is overwritten
	}
	if st.essence != nil && objects.Equal(st.essence, essence) {
		return nil
	}
	encoded, err := objects.EncodeASCII(essence)
	if err != nil {
		return fmt.Errorf("diff-base: %w", err)
	}
	if st.form == FormDigest && st.digest == digest(encoded) {
		return nil
	}
	r := &Reduced{InStatus: s.diffBaseInStatus, Size: len(encoded), Refused: p.digestOnly}
	var value string
	if s.diffBaseInStatus {
		r.Room, r.Limit = s.statusRoom(body), s.objectBytes
		value, r.Form = fit(encoded, "", r.room(), quotedLen) // Kopf's status storage: no newline
		p.Set(statusDiffBase, value)
	} else {
		s.storeMarker(p, body) // first: the room counts the marker too
		keys := s.Keys(s.diffBaseKey, body)
		r.Room, r.Limit = s.annotationRoom(p, body, keys), s.annotationLimit()
		value, r.Form = fit(encoded, "\n", r.room(), func(v string) int { return len(v) })
		for _, key := range keys {
			p.Set(annotationPath(key), value)
		}
	}
	r.Stored = len(value)
	p.reduced = nil
	if r.Form != FormJSON && r.Form != st.form {
		p.reduced = r
	}
	return nil
}
