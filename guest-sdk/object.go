package kopf

import "strings"

// Object is a Kubernetes object or part of one, as decoded from JSON
// (numbers are float64). Reading a nil Object is safe.
type Object map[string]any

// Get returns the value at a dotted path ("spec.replicas") and whether it
// is there.
func (o Object) Get(path string) (any, bool) {
	return lookup(o, splitPath(path))
}

// String returns the string at a dotted path, or "".
func (o Object) String(path string) string {
	v, _ := o.Get(path)
	s, _ := v.(string)
	return s
}

// Map returns the object at a dotted path, or nil.
func (o Object) Map(path string) Object {
	v, _ := o.Get(path)
	return asObject(v)
}

func splitPath(path string) []string {
	if path == "" {
		return nil
	}
	return strings.Split(path, ".")
}

func lookup(o map[string]any, keys []string) (any, bool) {
	var v any = o
	for _, k := range keys {
		m := asObject(v)
		if m == nil {
			return nil, false
		}
		var ok bool
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func asObject(v any) Object {
	switch m := v.(type) {
	case Object:
		return m
	case map[string]any:
		return m
	}
	return nil
}

// stringMap converts a JSON object of strings (labels, annotations).
func stringMap(v any) map[string]string {
	m := asObject(v)
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// ensureMap returns the object under key in o, creating it (or replacing a
// non-object) when missing. Typed map[string]string values are converted.
func ensureMap(o map[string]any, key string) map[string]any {
	switch m := o[key].(type) {
	case Object:
		return m
	case map[string]any:
		return m
	case map[string]string:
		c := make(map[string]any, len(m))
		for k, v := range m {
			c[k] = v
		}
		o[key] = c
		return c
	}
	c := map[string]any{}
	o[key] = c
	return c
}
