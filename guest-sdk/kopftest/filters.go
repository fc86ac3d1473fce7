package kopftest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// WhyNot says why the host would not call handler id for obj (old is the
// previous state, as for [Host.Run]), or "" when it would. It applies the
// handler's filters as the host does: labels and annotations on the
// object, the field's value (for changing handlers on the old or the new
// essence), for update and field handlers that the field (or, without
// one, the essence) changed, the old and new filters, and last the
// module's own callback filters ([kopf.When], callable filters), asked as
// the host asks them. The reason of the call is not checked: [Host.Run]
// chooses it from the handler's kind.
func (h *Host) WhyNot(id string, obj, old map[string]any) string {
	h.t.Helper()
	spec := h.Spec(id)
	if why := declaredWhyNot(spec, obj, old); why != "" {
		return why
	}
	if spec.Kind.IsActivity() || spec.Kind == abi.KindConvert {
		return ""
	}
	if !h.Match(id, obj, old) {
		return spec.Filters.CallbackRefusal()
	}
	return ""
}

// declaredWhyNot applies a handler's declarative filters, every filter
// but the module's callbacks, as the host does ("" when they match).
// The shared table abi/testdata/filters.json checks it against the host.
func declaredWhyNot(spec abi.HandlerSpec, obj, old map[string]any) string {
	if spec.Kind.IsActivity() || spec.Kind == abi.KindConvert {
		return ""
	}
	body := obj
	if body == nil {
		body = old
	}
	f := spec.Filters
	meta, _ := body["metadata"].(map[string]any)
	if why := metaMismatch("labels", f.Labels, meta["labels"]); why != "" {
		return why
	}
	if why := metaMismatch("annotations", f.Annotations, meta["annotations"]); why != "" {
		return why
	}
	changing := spec.Kind.IsChanging()
	var before, after map[string]any
	if changing {
		before, after = essence(old, f.Field), essence(body, f.Field)
	}
	if f.Field != "" {
		if why := fieldValueMismatch(f, changing, body, before, after); why != "" {
			return why
		}
	}
	if changing {
		return changeMismatch(spec, before, after)
	}
	return ""
}

// fieldValueMismatch is Kopf's value= check: without a value filter the
// field must be present in one of the values, else one value must match.
func fieldValueMismatch(f abi.Filters, changing bool, body, before, after map[string]any) string {
	values := [][2]any{}
	if changing {
		nv, nf := lookup(after, f.Field)
		ov, of := lookup(before, f.Field)
		values = append(values, [2]any{nv, nf}, [2]any{ov, of})
	} else {
		v, found := lookup(body, f.Field)
		values = append(values, [2]any{v, found})
	}
	for _, v := range values {
		found := v[1].(bool)
		if f.Value == nil && found || f.Value != nil && checkValue(f.Value, v[0], found) {
			return ""
		}
	}
	if f.Value == nil {
		return fmt.Sprintf("its field %s is absent", f.Field)
	}
	return fmt.Sprintf("its field %s does not match the value filter %s", f.Field, describe(f.Value))
}

// changeMismatch checks that an update or field handler's field (or the
// essence) changed, and the old and new filters.
func changeMismatch(spec abi.HandlerSpec, before, after map[string]any) string {
	f := spec.Filters
	needsChange := spec.Kind == abi.KindUpdate || spec.Kind == abi.KindField
	if f.Field == "" {
		if spec.Kind == abi.KindUpdate && reflect.DeepEqual(normal(before), normal(after)) {
			return "nothing essential changed between the old and the new object"
		}
		return ""
	}
	ov, of := lookup(before, f.Field)
	nv, nf := lookup(after, f.Field)
	if needsChange && of == nf && reflect.DeepEqual(normal(ov), normal(nv)) {
		return fmt.Sprintf("its field %s did not change", f.Field)
	}
	if f.Old != nil && !checkValue(f.Old, ov, of) {
		return fmt.Sprintf("the old value of %s does not match the old filter %s", f.Field, describe(f.Old))
	}
	if f.New != nil && !checkValue(f.New, nv, nf) {
		return fmt.Sprintf("the new value of %s does not match the new filter %s", f.Field, describe(f.New))
	}
	return ""
}

// checkValue matches one value against a value filter; callbacks are the
// module's when call's to decide.
func checkValue(f *abi.ValueFilter, v any, found bool) bool {
	switch {
	case f.Callback:
		return true
	case f.Present:
		return found
	case f.Absent:
		return !found
	}
	var want any
	if err := json.Unmarshal(f.Value, &want); err != nil {
		return false
	}
	return found && reflect.DeepEqual(normal(want), normal(v))
}

// metaMismatch explains the first label or annotation filter (by key)
// that the object's labels or annotations do not match.
func metaMismatch(what string, filters map[string]abi.MetaFilter, content any) string {
	m, _ := content.(map[string]any)
	keys := make([]string, 0, len(filters))
	for k := range filters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		f := filters[key]
		v, found := m[key]
		s, isString := v.(string)
		switch {
		case f.Callback:
		case f.Absent && found:
			return fmt.Sprintf("its %s filter wants %s absent, the object has %q", what, key, fmt.Sprint(v))
		case f.Present && !found:
			return fmt.Sprintf("its %s filter wants %s present, the object has none", what, key)
		case f.Value != nil && !found:
			return fmt.Sprintf("its %s filter wants %s=%q, the object has none", what, key, *f.Value)
		case f.Value != nil && (!isString || s != *f.Value):
			return fmt.Sprintf("its %s filter wants %s=%q, the object has %s=%q", what, key, *f.Value, key, fmt.Sprint(v))
		}
	}
	return ""
}

func describe(f *abi.ValueFilter) string {
	switch {
	case f.Present:
		return "present"
	case f.Absent:
		return "absent"
	case f.Callback:
		return "(a callback)"
	}
	return strings.TrimSpace(string(f.Value))
}

// lookup is the value at a dotted path and whether it is there.
func lookup(obj map[string]any, path string) (any, bool) {
	var v any = obj
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}
