package persistence

import (
	"slices"

	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// Finalizers are written with the merge patch of the cycle, not with a
// separate JSON patch as Kopf 1.44 does: a merge patch replaces the whole
// list, so the list is computed from the body the cycle saw and the patch is
// locked to that body's resourceVersion ([Patch.Lock]). If anyone changed
// the object meanwhile (another controller's finalizer included), the API
// server answers 409 and the reactor retries from the fresh state; nothing
// of others is ever re-added or dropped. This keeps the finalizer in the
// same request as the cycle's other changes (one PATCH instead of two).

var finalizersPath = objects.Path{"metadata", "finalizers"}

// DeletionOngoing reports whether body is marked for deletion.
func DeletionOngoing(body map[string]any) bool {
	v, ok := objects.Get(body, objects.Path{"metadata", "deletionTimestamp"})
	return ok && v != nil
}

// HasFinalizer reports whether body carries the storage's finalizer.
func (s *Storage) HasFinalizer(body map[string]any) bool {
	return slices.Contains(finalizerList(body), s.finalizer)
}

// Finalizer is the finalizer's name.
func (s *Storage) Finalizer() string { return s.finalizer }

func finalizerList(body map[string]any) []string {
	v, _ := objects.Get(body, finalizersPath)
	list, _ := v.([]any)
	out := make([]string, 0, len(list)+1)
	for _, item := range list {
		if str, ok := item.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

// AddFinalizer blocks the object's deletion: it appends the finalizer to
// body's list in p (if body lacks it) and locks p to body's
// resourceVersion.
func (s *Storage) AddFinalizer(p *Patch, body map[string]any) {
	if s.HasFinalizer(body) {
		return
	}
	s.setFinalizers(p, body, append(finalizerList(body), s.finalizer))
}

// RemoveFinalizer releases the object: it removes the finalizer from body's
// list in p (if body has it) and locks p to body's resourceVersion.
func (s *Storage) RemoveFinalizer(p *Patch, body map[string]any) {
	if !s.HasFinalizer(body) {
		return
	}
	list := slices.DeleteFunc(finalizerList(body), func(f string) bool { return f == s.finalizer })
	s.setFinalizers(p, body, list)
	if DeletionOngoing(body) {
		p.releases = true
	}
}

func (s *Storage) setFinalizers(p *Patch, body map[string]any, list []string) {
	items := make([]any, len(list))
	for i, f := range list {
		items[i] = f
	}
	if len(items) == 0 {
		p.Set(finalizersPath, nil)
	} else {
		p.Set(finalizersPath, items)
	}
	p.Lock(objects.GetString(body, objects.Path{"metadata", "resourceVersion"}))
}
