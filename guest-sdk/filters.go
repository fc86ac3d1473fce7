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

// Labels filters on labels: each key maps to a string (the value must be
// equal), [Present] or [Absent].
func Labels(filters map[string]any) Option {
	return option("Labels", resourceKinds, func(h *handler) error {
		m, err := metaFilters(filters)
		h.spec.Filters.Labels = m
		return err
	})
}

// Annotations filters on annotations as [Labels] does on labels.
func Annotations(filters map[string]any) Option {
	return option("Annotations", resourceKinds, func(h *handler) error {
		m, err := metaFilters(filters)
		h.spec.Filters.Annotations = m
		return err
	})
}

func metaFilters(filters map[string]any) (map[string]abi.MetaFilter, error) {
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
			return out, fmt.Errorf("the filter of %q is %T; use a string, kopf.Present or kopf.Absent", k, v)
		}
	}
	return out, nil
}

// Field makes the handler watch one field (a dotted path, "spec.field");
// mandatory for [OnField]. The handler's id gets "/<field>" appended.
func Field(path string) Option {
	return set("Field", resourceKinds, func(h *handler) { h.spec.Filters.Field = path })
}

// Value filters on the field's value: a JSON literal, [Present] or
// [Absent]. For changing handlers the old or the new value may match.
func Value(v any) Option {
	return option("Value", resourceKinds, func(h *handler) (err error) {
		h.spec.Filters.Value, err = valueFilter(v)
		return err
	})
}

// Old filters on the field's old value (update and field handlers).
func Old(v any) Option {
	return option("Old", oldNewKinds, func(h *handler) (err error) {
		h.spec.Filters.Old, err = valueFilter(v)
		return err
	})
}

// New filters on the field's new value (update and field handlers).
func New(v any) Option {
	return option("New", oldNewKinds, func(h *handler) (err error) {
		h.spec.Filters.New, err = valueFilter(v)
		return err
	})
}

func valueFilter(v any) (*abi.ValueFilter, error) {
	switch v := v.(type) {
	case nil:
		return nil, errors.New("nil value; use kopf.Absent for a missing field")
	case Marker:
		return &abi.ValueFilter{Present: v == Present, Absent: v == Absent}, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &abi.ValueFilter{Value: raw}, nil
}

// When adds a callback filter, Kopf's when=: before calling the handler the
// host asks the module whether fn matches the object. fn must only look.
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
