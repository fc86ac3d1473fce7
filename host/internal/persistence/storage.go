package persistence

import (
	"errors"
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// Options configure a [Storage]; the reactor copies them from the host's
// settings.Persistence, whose defaults are Kopf's.
type Options struct {
	// Prefix of the annotations, e.g. "kopf.zalando.org". Required.
	Prefix string
	// DiffBaseKey is the diff-base annotation's name under Prefix; empty
	// means "last-handled-configuration".
	DiffBaseKey string
	// Finalizer is the finalizer's name. Required.
	Finalizer string
	// V1Keys also writes Kopf's legacy V1 keys where they differ (Kopf's
	// default, true in the host's settings).
	V1Keys bool
	// DiffBaseInStatus keeps the diff-base in status.kopf.
	// last-handled-configuration (Kopf's StatusDiffBaseStorage: a JSON
	// string) instead of the annotation. With the status subresource, an
	// update then costs one /status request (diff-base and results
	// together) instead of two. The annotation is still read when the
	// status has none, so objects handled by Kopf are not seen as new; but
	// Kopf's default storage does not read the status, so moving back to
	// Kopf makes objects look new.
	DiffBaseInStatus bool
	// DiffBaseAnnotationBytes bounds the diff-base annotation (keys plus
	// values) below the API server's limit on all annotations; 0: that
	// limit only. A larger diff-base is stored reduced (see [Form]).
	DiffBaseAnnotationBytes int
	// DiffBaseObjectBytes bounds, with DiffBaseInStatus, the object's
	// size as JSON with its diff-base; 0: no bound. A diff-base that would
	// pass it is stored reduced.
	DiffBaseObjectBytes int
	// MaxEssenceBytes caps what a compressed diff-base may inflate to when
	// read (a larger one is corrupt); 0: no cap.
	MaxEssenceBytes int
}

// Storage reads and writes an object's handler state: progress records, the
// diff-base and the finalizer. It keeps no state of its own and is safe for
// concurrent use.
type Storage struct {
	keys             keyConvention
	diffBaseKey      string
	finalizer        string
	diffBaseInStatus bool
	annotationBytes  int
	objectBytes      int
	maxEssenceBytes  int
}

// legacyProgress is where Kopf before 1.44 also kept the progress records;
// they are still read and purged, never written.
var legacyProgress = objects.Path{"status", "kopf", "progress"}

// statusDiffBase is where the diff-base lives with Options.DiffBaseInStatus.
var statusDiffBase = objects.Path{"status", "kopf", "last-handled-configuration"}

// New checks the options and returns a storage.
func New(opts Options) (*Storage, error) {
	if opts.Prefix == "" {
		return nil, errors.New("persistence: the annotations prefix is empty")
	}
	if opts.Finalizer == "" {
		return nil, errors.New("persistence: the finalizer is empty")
	}
	if opts.DiffBaseKey == "" {
		opts.DiffBaseKey = "last-handled-configuration"
	}
	return &Storage{
		keys:        keyConvention{prefix: opts.Prefix, v1: opts.V1Keys},
		diffBaseKey: opts.DiffBaseKey,
		finalizer:   opts.Finalizer,

		diffBaseInStatus: opts.DiffBaseInStatus,
		annotationBytes:  opts.DiffBaseAnnotationBytes,
		objectBytes:      opts.DiffBaseObjectBytes,
		maxEssenceBytes:  opts.MaxEssenceBytes,
	}, nil
}

// Keys returns the annotation keys under which a handler's progress lives on
// body: the V2 key, then the V1 key if it differs.
func (s *Storage) Keys(handlerID string, body map[string]any) []string {
	return s.keys.keys(handlerID, body)
}

func annotationPath(key string) objects.Path { return objects.Path{"metadata", "annotations", key} }

// FetchRecord reads a handler's record from body: the annotation keys in
// order, then the legacy status.kopf.progress.<id>. found is false when
// there is none.
func (s *Storage) FetchRecord(body map[string]any, handlerID string) (rec Record, found bool, err error) {
	for _, key := range s.Keys(handlerID, body) {
		v, ok := objects.Get(body, annotationPath(key))
		str, isString := v.(string)
		if !ok || v == nil || !isString {
			continue
		}
		if str == "null" {
			continue
		}
		rec, err := DecodeRecord([]byte(str))
		if err != nil {
			return Record{}, false, fmt.Errorf("progress of handler[%s]: %w", handlerID, withKey(err, key))
		}
		return rec, true, nil
	}
	legacy, ok := objects.GetMap(body, legacyProgress)[handlerID].(map[string]any)
	if !ok {
		return Record{}, false, nil
	}
	raw, err := objects.Encode(legacy)
	if err == nil {
		rec, err = DecodeRecord(raw)
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("legacy progress of handler[%s]: %w", handlerID, err)
	}
	return rec, true, nil
}

func withKey(err error, key string) error {
	var corrupt *CorruptRecordError
	if errors.As(err, &corrupt) && corrupt.Key == "" {
		corrupt.Key = key
	}
	return err
}

// StoreRecord writes a handler's record into the patch under every key,
// plus the prefix's kopf-managed marker where one is needed.
func (s *Storage) StoreRecord(p *Patch, body map[string]any, handlerID string, rec Record) error {
	encoded, err := rec.Encode()
	if err != nil {
		return fmt.Errorf("progress of handler[%s]: %w", handlerID, err)
	}
	for _, key := range s.Keys(handlerID, body) {
		p.Set(annotationPath(key), encoded)
	}
	s.storeMarker(p, body)
	return nil
}

// PurgeRecord removes a handler's record: keys the body has are nulled in
// the patch, keys only the patch has are dropped from it. The legacy status
// record is nulled too if present.
func (s *Storage) PurgeRecord(p *Patch, body map[string]any, handlerID string) {
	for _, key := range s.Keys(handlerID, body) {
		s.purgePath(p, body, annotationPath(key))
	}
	s.purgePath(p, body, append(objects.Path{}, append(legacyProgress, handlerID)...))
}

func (s *Storage) purgePath(p *Patch, body map[string]any, path objects.Path) {
	if _, inBody := objects.Get(body, path); inBody {
		p.Set(path, nil)
	} else if _, inPatch := p.Get(path); inPatch {
		p.Unset(path)
	}
}

// storeMarker adds "<prefix>/kopf-managed: yes" for prefixes that need it,
// unless the body or the patch has it already.
func (s *Storage) storeMarker(p *Patch, body map[string]any) {
	marker := s.keys.markerKey()
	if marker == "" {
		return
	}
	path := annotationPath(marker)
	if _, ok := objects.Get(body, path); ok {
		return
	}
	if _, ok := p.Get(path); !ok {
		p.Set(path, "yes")
	}
}
