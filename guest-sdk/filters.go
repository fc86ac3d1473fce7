package kopf

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Marker is [Present] or [Absent], Kopf's kopf.PRESENT and kopf.ABSENT.
type Marker int

// Markers for filters on labels, annotations and field values.
const (
	// Present matches any value, an empty string included.
	Present Marker = iota + 1
	// Absent matches a missing key or field.
	Absent
)

// ValueFunc is a callable filter, Kopf's callable label, annotation and
// value filters: it gets the value (nil when the key or field is absent)
// and the handler's context (Kopf's kwargs), and says whether it matches.
// It must only look.
type ValueFunc func(value any, ctx *Context) bool

// Labels filters on labels: each key maps to a string (the value must be
// equal), [Present], [Absent], or a [ValueFunc] (also a plain
// func(any, *Context) bool), called with the label's value or nil.
func Labels(filters map[string]any) Option {
	return option("Labels", resourceKinds, func(h *handler) error {
		m, err := metaFilters(h, "labels", filters)
		h.spec.Filters.Labels = m
		return err
	})
}

// Annotations filters on annotations as [Labels] does on labels.
func Annotations(filters map[string]any) Option {
	return option("Annotations", resourceKinds, func(h *handler) error {
		m, err := metaFilters(h, "annotations", filters)
		h.spec.Filters.Annotations = m
		return err
	})
}

func metaFilters(h *handler, where string, filters map[string]any) (map[string]abi.MetaFilter, error) {
	out := make(map[string]abi.MetaFilter, len(filters))
	keys := make([]string, 0, len(filters))
	for k := range filters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch v := filters[k].(type) {
		case string:
			out[k] = abi.MetaFilter{Value: &v}
		case Marker:
			out[k] = abi.MetaFilter{Present: v == Present, Absent: v == Absent}
		default:
			fn := valueFunc(v)
			if fn == nil {
				return out, fmt.Errorf("the filter of %q is %T; use a string, kopf.Present, kopf.Absent or a kopf.ValueFunc", k, v)
			}
			out[k] = abi.MetaFilter{Callback: true}
			h.addCallback(metaCallback(where, k, fn))
		}
	}
	return out, nil
}

// Field makes the handler watch one field (a dotted path, "spec.field");
// mandatory for [OnField]. The handler's id gets "/<field>" appended.
func Field(path string) Option {
	return set("Field", resourceKinds, func(h *handler) { h.spec.Filters.Field = path })
}

// Value filters on the field's value: a JSON literal, [Present], [Absent]
// or a [ValueFunc]. For changing handlers the old or the new value may
// match.
func Value(v any) Option {
	return option("Value", resourceKinds, func(h *handler) (err error) {
		h.spec.Filters.Value, err = valueFilter(h, fieldValue, v)
		return err
	})
}

// Old filters on the field's old value (update and field handlers).
func Old(v any) Option {
	return option("Old", oldNewKinds, func(h *handler) (err error) {
		h.spec.Filters.Old, err = valueFilter(h, fieldOld, v)
		return err
	})
}

// New filters on the field's new value (update and field handlers).
func New(v any) Option {
	return option("New", oldNewKinds, func(h *handler) (err error) {
		h.spec.Filters.New, err = valueFilter(h, fieldNew, v)
		return err
	})
}

func valueFilter(h *handler, which fieldWhich, v any) (*abi.ValueFilter, error) {
	switch v := v.(type) {
	case nil:
		return nil, errors.New("nil value; use kopf.Absent for a missing field")
	case Marker:
		return &abi.ValueFilter{Present: v == Present, Absent: v == Absent}, nil
	}
	if fn := valueFunc(v); fn != nil {
		h.addCallback(fieldCallback(which, fn))
		return &abi.ValueFilter{Callback: true}, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &abi.ValueFilter{Value: raw}, nil
}

// When adds a callback filter, Kopf's when=: before calling the handler the
// host asks the module whether fn matches the object. fn must only look;
// it sees what the handler would (for changing handlers the reason and
// the whole object's old, new and diff), and runs last, after every other
// filter, callable ones included.
func When(fn func(ctx *Context) bool) Option {
	return option("When", resourceKinds, func(h *handler) error {
		if fn == nil {
			return errors.New("nil function")
		}
		h.when = fn
		h.spec.Filters.When = true
		return nil
	})
}
