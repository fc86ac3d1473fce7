package kopftest

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// essence approximates Kopf's diff-base essence: the object without status
// and with only the labels and annotations of its metadata.
func essence(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range obj {
		switch k {
		case "status", "apiVersion", "kind":
		case "metadata":
			meta, _ := v.(map[string]any)
			kept := map[string]any{}
			for _, key := range []string{"labels", "annotations"} {
				if m, ok := meta[key]; ok {
					kept[key] = m
				}
			}
			if len(kept) > 0 {
				out[k] = kept
			}
		default:
			out[k] = v
		}
	}
	return out
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
