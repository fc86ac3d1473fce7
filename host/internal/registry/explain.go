package registry

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// WhyNot says why the host would not call h for c, with the same filters
// as [Registry.Due] (changing handlers, on the cause's essences) and
// [Handler.MatchesBody] (every other kind, on c.Body), the callback filter
// last through when (nil: callbacks pass). It returns "" when h would be
// called. The cause's reason is not checked: offline calls choose it. It
// serves `kopf-wasm invoke`, which tells an author what the operator
// would do.
func WhyNot(h *Handler, c *Cause, when WhenFunc) (string, error) {
	f := h.Spec.Filters
	if why := metaMismatch("labels", f.Labels, objects.GetMap(c.Body, objects.Path{"metadata", "labels"})); why != "" {
		return why, nil
	}
	if why := metaMismatch("annotations", f.Annotations, objects.GetMap(c.Body, objects.Path{"metadata", "annotations"})); why != "" {
		return why, nil
	}
	if !h.matchesFieldValues(c) {
		if h.value == nil {
			return fmt.Sprintf("its field %s is absent", h.Field), nil
		}
		return fmt.Sprintf("its field %s does not match the value filter %s", h.Field, describeValue(f.Value)), nil
	}
	if h.Kind().IsChanging() && c.changing() {
		if why := h.fieldChangeMismatch(c); why != "" {
			return why, nil
		}
		if h.Field == nil && h.Kind() == abi.KindUpdate && len(c.Diff) == 0 {
			return "nothing essential changed between the old and the new object", nil
		}
	}
	ok, err := passesWhen(h, c, when)
	if err != nil {
		return "", err
	}
	if !ok {
		return f.CallbackRefusal(), nil
	}
	return "", nil
}

// fieldChangeMismatch explains a failed [Handler.matchesFieldChanges].
func (h *Handler) fieldChangeMismatch(c *Cause) string {
	if h.matchesFieldChanges(c) {
		return ""
	}
	ov, of := objects.Get(c.Old, h.Field)
	nv, nf := objects.Get(c.New, h.Field)
	if h.needsChange() && of == nf && objects.Equal(ov, nv) {
		return fmt.Sprintf("its field %s did not change", h.Field)
	}
	if h.old != nil && !h.old.check(ov, of) {
		return fmt.Sprintf("the old value of %s does not match the old filter %s", h.Field, describeValue(h.Spec.Filters.Old))
	}
	return fmt.Sprintf("the new value of %s does not match the new filter %s", h.Field, describeValue(h.Spec.Filters.New))
}

// metaMismatch explains a failed label or annotation filter, naming the
// first key (in order) that does not match.
func metaMismatch(what string, filters map[string]abi.MetaFilter, content map[string]any) string {
	keys := make([]string, 0, len(filters))
	for k := range filters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		f := filters[key]
		if matchesMeta(map[string]abi.MetaFilter{key: f}, content) {
			continue
		}
		v, found := content[key]
		switch {
		case f.Absent:
			return fmt.Sprintf("its %s filter wants %s absent, the object has %q", what, key, fmt.Sprint(v))
		case !found:
			return fmt.Sprintf("its %s filter wants %s, the object has none", what, describeMeta(key, f))
		}
		return fmt.Sprintf("its %s filter wants %s, the object has %s=%q", what, describeMeta(key, f), key, fmt.Sprint(v))
	}
	return ""
}

func describeMeta(key string, f abi.MetaFilter) string {
	if f.Value != nil {
		return fmt.Sprintf("%s=%q", key, *f.Value)
	}
	return key + " present"
}

func describeValue(f *abi.ValueFilter) string {
	switch {
	case f == nil:
		return "(none)"
	case f.Present:
		return "present"
	case f.Absent:
		return "absent"
	case f.Callback:
		return "(a callback)"
	}
	return strings.TrimSpace(string(json.RawMessage(f.Value)))
}
