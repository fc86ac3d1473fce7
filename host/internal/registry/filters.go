package registry

import (
	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// valueFilter is a decoded abi.ValueFilter: a literal, present, absent,
// or a callback the guest evaluates in its when (always passed here).
type valueFilter struct {
	present, absent, callback bool
	literal                   any
}

func decodeValueFilter(f *abi.ValueFilter) (*valueFilter, error) {
	if f == nil {
		return nil, nil
	}
	out := &valueFilter{present: f.Present, absent: f.Absent, callback: f.Callback}
	if len(f.Value) > 0 {
		v, err := objects.Decode(f.Value)
		if err != nil {
			return nil, err
		}
		out.literal = v
	}
	return out, nil
}

// check matches one value (found tells whether the field is there).
func (f *valueFilter) check(v any, found bool) bool {
	switch {
	case f.callback:
		return true // the guest's when decides
	case f.present:
		return found
	case f.absent:
		return !found
	}
	return found && objects.Equal(f.literal, v)
}

// matchesMeta applies label or annotation filters to the body's labels or
// annotations: a value must be equal, present means the key is there (an
// empty value counts), absent that it is not; a callback is the guest's
// when's to decide.
func matchesMeta(filters map[string]abi.MetaFilter, content map[string]any) bool {
	for key, f := range filters {
		v, found := content[key]
		switch {
		case f.Absent:
			if found {
				return false
			}
		case f.Present:
			if !found {
				return false
			}
		case f.Value != nil:
			if s, ok := v.(string); !found || !ok || s != *f.Value {
				return false
			}
		}
	}
	return true
}

// values are the field's values a filter sees: for changing causes the new
// and the old essence, otherwise the body alone.
type fieldValue struct {
	v     any
	found bool
}

func (h *Handler) fieldValues(c *Cause) []fieldValue {
	if c.changing() {
		nv, nf := objects.Get(c.New, h.Field)
		ov, of := objects.Get(c.Old, h.Field)
		return []fieldValue{{nv, nf}, {ov, of}}
	}
	v, found := objects.Get(c.Body, h.Field)
	return []fieldValue{{v, found}}
}

// matchesFieldValues is Kopf's value= check: with no value filter the field
// must be present in one of the values, otherwise one value must match.
func (h *Handler) matchesFieldValues(c *Cause) bool {
	if h.Field == nil {
		return true
	}
	for _, fv := range h.fieldValues(c) {
		if h.value == nil && fv.found || h.value != nil && h.value.check(fv.v, fv.found) {
			return true
		}
	}
	return false
}

// needsChange reports whether the handler fires only when its field
// changed: update and field handlers (Kopf's field_needs_change).
func (h *Handler) needsChange() bool {
	return h.Kind() == abi.KindUpdate || h.Kind() == abi.KindField
}

// matchesFieldChanges is Kopf's old=/new= check, plus "the field changed"
// for update and field handlers; it applies to changing handlers with a
// field on changing causes only.
func (h *Handler) matchesFieldChanges(c *Cause) bool {
	if h.Field == nil || !h.Kind().IsChanging() || !c.changing() {
		return true
	}
	ov, of := objects.Get(c.Old, h.Field)
	nv, nf := objects.Get(c.New, h.Field)
	if h.needsChange() && of == nf && objects.Equal(ov, nv) {
		return false
	}
	return (h.old == nil || h.old.check(ov, of)) && (h.new == nil || h.new.check(nv, nf))
}

// prematches is every filter but the field change and the callback.
func (h *Handler) prematches(c *Cause) bool {
	return matchesMeta(h.Spec.Filters.Labels, objects.GetMap(c.Body, objects.Path{"metadata", "labels"})) &&
		matchesMeta(h.Spec.Filters.Annotations, objects.GetMap(c.Body, objects.Path{"metadata", "annotations"})) &&
		h.matchesFieldValues(c)
}

// matches is every filter but the callback.
func (h *Handler) matches(c *Cause) bool {
	return h.prematches(c) && h.matchesFieldChanges(c)
}

// MatchesBody applies the handler's labels, annotations and field value
// filters to a body, as for event handlers, timers, daemons, indexes and
// webhooks. The callback filter is not evaluated (see [Handler.NeedsWhen]).
func (h *Handler) MatchesBody(body map[string]any) bool {
	return h.prematches(&Cause{Body: body})
}

// WhenFunc evaluates a handler's callback filter for a cause by asking its
// guest; the reactor supplies it. It is called only for handlers whose
// other filters match, last, as Kopf does.
type WhenFunc func(h *Handler, c *Cause) (bool, error)

// passesWhen applies the callback filter, if any. A nil when lets every
// callback pass.
func passesWhen(h *Handler, c *Cause, when WhenFunc) (bool, error) {
	if !h.NeedsWhen() || when == nil {
		return true, nil
	}
	ok, err := when(h, c)
	if err != nil {
		return false, &WhenError{Module: h.Module, Handler: h.ID(), Err: err}
	}
	return ok, nil
}
