package kopftest

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// kubectlLastApplied is kubectl's copy of the applied configuration: it
// changes with every apply and is never essential (the host drops it too).
const kubectlLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// essence is the diff-base essence as the host builds it: the object
// without apiVersion, kind, status and metadata, except the labels and
// annotations (without kubectl's last-applied configuration and the
// annotations of operators: [essentialAnnotation]); plus the
// handler's field when it has one (a field in status is essential to
// its handler); without empty labels, annotations or metadata.
func essence(obj map[string]any, field string) map[string]any {
	if obj == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range obj {
		switch k {
		case "status", "apiVersion", "kind", "metadata":
		default:
			out[k] = v
		}
	}
	meta, _ := obj["metadata"].(map[string]any)
	kept := map[string]any{}
	for _, key := range []string{"labels", "annotations"} {
		m, _ := meta[key].(map[string]any)
		copied := map[string]any{}
		for k, v := range m {
			if key != "annotations" || essentialAnnotation(k, m) {
				copied[k] = v
			}
		}
		if len(copied) > 0 {
			kept[key] = copied
		}
	}
	if len(kept) > 0 {
		out["metadata"] = kept
	}
	if field != "" {
		if v, ok := lookup(obj, field); ok {
			setPath(out, strings.Split(field, "."), v)
		}
	}
	return out
}

// essentialAnnotation tells whether an annotation is part of the essence:
// not kubectl's last-applied configuration, nor under an operator's
// prefix (Kopf's kopf.zalando.org, its subdomains, or a prefix whose
// annotations include its "kopf-managed" marker), as the host decides.
func essentialAnnotation(key string, annotations map[string]any) bool {
	prefix, _, found := strings.Cut(key, "/")
	if key == kubectlLastApplied {
		return false
	}
	if !found {
		return true
	}
	_, marked := annotations[prefix+"/kopf-managed"]
	return !marked && prefix != "kopf.zalando.org" && !strings.HasSuffix(prefix, ".kopf.zalando.org")
}

// setPath sets the value at a path, copying the maps on the way (they
// may be the object's own).
func setPath(obj map[string]any, path []string, v any) {
	if len(path) == 1 {
		obj[path[0]] = v
		return
	}
	next := map[string]any{}
	if m, ok := obj[path[0]].(map[string]any); ok {
		for k, x := range m {
			next[k] = x
		}
	}
	obj[path[0]] = next
	setPath(next, path[1:], v)
}

// fieldValue is the value at a dotted path, nil when absent.
func fieldValue(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// diff lists the differences between two JSON values as Kopf does: objects
// are compared key by key, anything else as a whole.
func diff(path []string, old, new any) []abi.DiffItem {
	old, new = normal(old), normal(new)
	if reflect.DeepEqual(old, new) {
		return nil
	}
	om, oldIsMap := old.(map[string]any)
	nm, newIsMap := new.(map[string]any)
	switch {
	case old == nil:
		return []abi.DiffItem{{Op: abi.DiffAdd, Field: fieldPath(path), New: jsonOrNil(new)}}
	case new == nil:
		return []abi.DiffItem{{Op: abi.DiffRemove, Field: fieldPath(path), Old: jsonOrNil(old)}}
	case !oldIsMap || !newIsMap:
		return []abi.DiffItem{{Op: abi.DiffChange, Field: fieldPath(path), Old: jsonOrNil(old), New: jsonOrNil(new)}}
	}
	keys := map[string]bool{}
	for k := range om {
		keys[k] = true
	}
	for k := range nm {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []abi.DiffItem
	for _, k := range sorted {
		out = append(out, diff(append(path[:len(path):len(path)], k), om[k], nm[k])...)
	}
	return out
}

func fieldPath(path []string) []string {
	if path == nil {
		return []string{}
	}
	return path
}

// normal makes typed maps comparable with decoded JSON.
func normal(v any) any {
	if v == nil {
		return nil
	}
	var out any
	if err := json.Unmarshal(mustJSON(v), &out); err != nil {
		return v
	}
	return out
}
