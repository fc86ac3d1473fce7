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
// key), cleared as [Storage.Essence] clears a fresh one. It returns nil
// when there is none: the object was never handled (a creation).
func (s *Storage) FetchDiffBase(body map[string]any) (map[string]any, error) {
	if s.diffBaseInStatus {
		if str, ok := objects.Get(body, statusDiffBase); ok {
			if encoded, isString := str.(string); isString {
				essence, err := objects.DecodeMap([]byte(encoded))
				if err != nil {
					return nil, fmt.Errorf("diff-base: %w", &CorruptRecordError{Key: statusDiffBase.String(), Err: err})
				}
				if essence != nil {
					return s.clear(essence), nil
				}
			}
		}
	}
	for _, key := range s.Keys(s.diffBaseKey, body) {
		encoded, ok := objects.Get(body, annotationPath(key))
		str, isString := encoded.(string)
		if !ok || !isString {
			continue
		}
		essence, err := objects.DecodeMap([]byte(str))
		if err != nil {
			return nil, fmt.Errorf("diff-base: %w", &CorruptRecordError{Key: key, Err: err})
		}
		if essence != nil {
			return s.clear(essence), nil
		}
	}
	return nil, nil
}

// StoreDiffBase writes essence as the new diff-base into p, unless body
// already holds an equal one: compact JSON with a trailing newline (Kopf's
// format, as kubectl's own), under every key, with the marker if needed; or,
// with Options.DiffBaseInStatus, as a JSON string in the status.
func (s *Storage) StoreDiffBase(p *Patch, body map[string]any, essence map[string]any) error {
	if stored, err := s.FetchDiffBase(body); err == nil && stored != nil && objects.Equal(stored, essence) {
		return nil
	}
	encoded, err := objects.EncodeASCII(essence)
	if err != nil {
		return fmt.Errorf("diff-base: %w", err)
	}
	if s.diffBaseInStatus {
		p.Set(statusDiffBase, encoded) // Kopf's status storage: no newline
		return nil
	}
	for _, key := range s.Keys(s.diffBaseKey, body) {
		p.Set(annotationPath(key), encoded+"\n")
	}
	s.storeMarker(p, body)
	return nil
}
