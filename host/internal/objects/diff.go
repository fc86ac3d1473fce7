package objects

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// DiffItem is one difference, as Kopf's: the operation, the field path, and
// the old and new values (nil when absent).
type DiffItem struct {
	Op    abi.DiffOp
	Field Path
	Old   any
	New   any
}

// Diff is an ordered list of differences; empty means "no essential change".
type Diff []DiffItem

// Compare computes Kopf's diff from a to b. Objects are compared key by key
// (added keys first, then removed, then common ones, each sorted); lists and
// scalars are compared as a whole. A nil value (absent or JSON null) on one
// side makes an "add" or "remove" of the other side's value.
func Compare(a, b any) Diff {
	return compareAt(nil, a, b, nil)
}

func compareAt(out Diff, a, b any, path Path) Diff {
	switch {
	case Equal(a, b):
		return out
	case a == nil:
		return append(out, DiffItem{Op: abi.DiffAdd, Field: clonePath(path), New: b})
	case b == nil:
		return append(out, DiffItem{Op: abi.DiffRemove, Field: clonePath(path), Old: a})
	}
	ma, okA := a.(map[string]any)
	mb, okB := b.(map[string]any)
	if !okA || !okB {
		return append(out, DiffItem{Op: abi.DiffChange, Field: clonePath(path), Old: a, New: b})
	}
	for _, k := range sortedKeys(mb, ma, false) {
		out = compareAt(out, nil, mb[k], append(path, k))
	}
	for _, k := range sortedKeys(ma, mb, false) {
		out = compareAt(out, ma[k], nil, append(path, k))
	}
	for _, k := range sortedKeys(ma, mb, true) {
		out = compareAt(out, ma[k], mb[k], append(path, k))
	}
	return out
}

// sortedKeys lists the keys of m that are (common=true) or are not
// (common=false) in other, sorted.
func sortedKeys(m, other map[string]any, common bool) []string {
	var keys []string
	for k := range m {
		if _, ok := other[k]; ok == common {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func clonePath(p Path) Path {
	out := make(Path, len(p))
	copy(out, p)
	return out
}

// Reduce narrows the diff to one field, as Kopf does for field handlers:
// items under the field keep their path relative to it; an item on a parent
// of the field is re-diffed at the field's depth; others are dropped.
func (d Diff) Reduce(field Path) Diff {
	if len(field) == 0 {
		return d
	}
	var out Diff
	for _, item := range d {
		switch {
		case item.Field.HasPrefix(field):
			out = append(out, DiffItem{Op: item.Op, Field: clonePath(item.Field[len(field):]), Old: item.Old, New: item.New})
		case field.HasPrefix(item.Field):
			tail := field[len(item.Field):]
			oldTail, _ := Get(item.Old, tail)
			newTail, _ := Get(item.New, tail)
			out = compareAt(out, oldTail, newTail, Path{})
		}
	}
	return out
}

// ABI converts the diff to the wire form. The root path is an empty list.
func (d Diff) ABI() ([]abi.DiffItem, error) {
	out := make([]abi.DiffItem, 0, len(d))
	for _, item := range d {
		w := abi.DiffItem{Op: item.Op, Field: []string(clonePath(item.Field))}
		var err error
		if w.Old, err = rawOrNil(item.Old); err != nil {
			return nil, fmt.Errorf("diff field[%s]: %w", item.Field, err)
		}
		if w.New, err = rawOrNil(item.New); err != nil {
			return nil, fmt.Errorf("diff field[%s]: %w", item.Field, err)
		}
		out = append(out, w)
	}
	return out, nil
}

func rawOrNil(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return Encode(v)
}
