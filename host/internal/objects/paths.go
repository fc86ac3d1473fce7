package objects

import "strings"

// Path is a field path as a list of keys, e.g. {"spec", "field"}. The empty
// path is the root.
type Path []string

// ParsePath splits a dotted field ("spec.field") into a [Path], as Kopf
// parses its field= option. The empty string is the root.
func ParsePath(dotted string) Path {
	if dotted == "" {
		return nil
	}
	return Path(strings.Split(dotted, "."))
}

// String is the dotted form of the path.
func (p Path) String() string { return strings.Join(p, ".") }

// HasPrefix reports whether prefix is the beginning of p (or equals p).
func (p Path) HasPrefix(prefix Path) bool {
	if len(prefix) > len(p) {
		return false
	}
	for i := range prefix {
		if p[i] != prefix[i] {
			return false
		}
	}
	return true
}

// Get returns the value at path and whether it is there. A key holding a JSON
// null is there (the value is nil); a missing key, or a step through a
// non-object, is not. The root of a nil object is absent.
func Get(obj any, path Path) (any, bool) {
	if obj == nil {
		return nil, false
	}
	cur := obj
	for _, key := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[key]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// GetMap returns the object at path, or nil when it is absent or not an
// object.
func GetMap(obj any, path Path) map[string]any {
	v, _ := Get(obj, path)
	m, _ := v.(map[string]any)
	return m
}

// GetString returns the string at path, or "" when it is absent or not a
// string.
func GetString(obj any, path Path) string {
	v, _ := Get(obj, path)
	s, _ := v.(string)
	return s
}

// Set stores value at path in obj, creating (or replacing non-object) parents
// as needed. Setting the root path does nothing.
func Set(obj map[string]any, path Path, value any) {
	if len(path) == 0 {
		return
	}
	cur := obj
	for _, key := range path[:len(path)-1] {
		next, ok := cur[key].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[key] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = value
}

// Remove deletes the value at path from obj if it is there, and reports
// whether it was. Emptied parents are left in place.
func Remove(obj map[string]any, path Path) bool {
	if len(path) == 0 {
		return false
	}
	parent := GetMap(obj, path[:len(path)-1])
	if parent == nil {
		return false
	}
	if _, ok := parent[path[len(path)-1]]; !ok {
		return false
	}
	delete(parent, path[len(path)-1])
	return true
}

// DeepCopy copies a JSON-like value: maps and slices are copied recursively,
// everything else is returned as is.
func DeepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return DeepCopyMap(v)
	case []any:
		out := make([]any, len(v))
		for i := range v {
			out[i] = DeepCopy(v[i])
		}
		return out
	default:
		return v
	}
}

// DeepCopyMap copies a JSON object; nil stays nil.
func DeepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = DeepCopy(v)
	}
	return out
}
