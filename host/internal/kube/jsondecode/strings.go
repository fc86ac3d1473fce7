package jsondecode

// String interning for parseJSON (see value.go). The events of one
// watch repeat the same keys and many of the same values (apiVersion,
// kind, label values, managers, field names) from object to object; a
// watch's decoder keeps one copy of each and hands it out again, which
// saves two allocations per string (its bytes and, for values, the
// interface's box) and shares the memory between the cached objects.

// Limits of a stringCache: strings longer than maxCachedString are not
// cached, and a cache that holds maxCachedStrings keys (or values) takes no
// more, so strings that never recur (uids, resourceVersions) cannot make
// it grow without bound.
const (
	maxCachedString  = 64
	maxCachedStrings = 4096
)

// stringCache holds the strings that a parser has built. It is not safe
// for concurrent use; a nil *stringCache caches nothing.
type stringCache struct {
	keys   map[string]string
	values map[string]any
}

func newStringCache() *stringCache {
	return &stringCache{keys: map[string]string{}, values: map[string]any{}}
}

// key returns b as a string, from the cache when it is there.
func (c *stringCache) key(b []byte) string {
	if c == nil || len(b) > maxCachedString {
		return string(b)
	}
	if s, ok := c.keys[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(c.keys) < maxCachedStrings {
		c.keys[s] = s
	}
	return s
}

// value returns b as a string in an interface, from the cache when it is
// there.
func (c *stringCache) value(b []byte) any {
	if c == nil || len(b) > maxCachedString {
		return string(b)
	}
	if v, ok := c.values[string(b)]; ok {
		return v
	}
	s := string(b)
	var v any = s
	if len(c.values) < maxCachedStrings {
		c.values[s] = v
	}
	return v
}
