package indexing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Key is an index key: a string, or null (the key of results that are not
// JSON objects).
type Key struct {
	Name string
	Null bool
}

// NullKey is the key of non-object results.
var NullKey = Key{Null: true}

// String is the key as a request's index carries it: the name, or "null".
func (k Key) String() string {
	if k.Null {
		return "null"
	}
	return k.Name
}

// KeyOf reads a look-up key (any JSON value): a string is the key of that
// name, null the null key, anything else the key named by its compact
// JSON text.
func KeyOf(raw json.RawMessage) (Key, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return NullKey, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return Key{}, fmt.Errorf("the key is not valid JSON: %w", err)
		}
		return Key{Name: s}, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return Key{}, fmt.Errorf("the key is not valid JSON: %w", err)
	}
	return Key{Name: buf.String()}, nil
}

// Contributions reads what an index handler returned (its result, raw
// JSON) as Kopf does: a JSON object gives one value per member, any other
// value is the one value under the null key, and null or nothing means
// "keep the previous values" (keep is then true).
func Contributions(result json.RawMessage) (values map[Key]json.RawMessage, keep bool, err error) {
	result = bytes.TrimSpace(result)
	if len(result) == 0 || string(result) == "null" {
		return nil, true, nil
	}
	if result[0] != '{' {
		return map[Key]json.RawMessage{NullKey: result}, false, nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(result, &members); err != nil {
		return nil, false, fmt.Errorf("the result is not a JSON object: %w", err)
	}
	values = make(map[Key]json.RawMessage, len(members))
	for name, v := range members {
		values[Key{Name: name}] = v
	}
	return values, false, nil
}

// Index is one index: key → object → value, with the reverse map from each
// object to its keys. It is not safe for concurrent use: its set guards it.
type Index struct {
	values  map[Key]*store
	reverse map[string][]Key
	// size approximates the encoded index in bytes; encoded caches the
	// encoding until the next change.
	size    int
	encoded json.RawMessage
}

// store is the values under one key, by object, with their list ordered
// by object cached until the next change.
type store struct {
	byObject map[string]json.RawMessage
	sorted   []json.RawMessage
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{values: map[Key]*store{}, reverse: map[string][]Key{}, size: 2}
}

// Replace makes values the contributions of object obj: keys it no longer
// has are dropped, the others replaced or added.
func (ix *Index) Replace(obj string, values map[Key]json.RawMessage) {
	old := ix.reverse[obj]
	for _, k := range old {
		if _, still := values[k]; !still {
			ix.drop(k, obj)
		}
	}
	if len(values) == 0 {
		delete(ix.reverse, obj)
		return
	}
	keys := make([]Key, 0, len(values))
	for k, v := range values {
		keys = append(keys, k)
		st := ix.values[k]
		if st == nil {
			st = &store{byObject: map[string]json.RawMessage{}}
			ix.values[k] = st
			ix.size += len(k.String()) + 6 // "name":[],
		}
		if prev, ok := st.byObject[obj]; ok {
			if bytes.Equal(prev, v) {
				continue
			}
			ix.size -= len(prev) + 1
		}
		st.byObject[obj] = v
		st.sorted = nil
		ix.size += len(v) + 1
		ix.encoded = nil
	}
	ix.reverse[obj] = keys
}

// Discard drops every contribution of object obj.
func (ix *Index) Discard(obj string) {
	for _, k := range ix.reverse[obj] {
		ix.drop(k, obj)
	}
	delete(ix.reverse, obj)
}

func (ix *Index) drop(k Key, obj string) {
	st := ix.values[k]
	if st == nil {
		return
	}
	v, ok := st.byObject[obj]
	if !ok {
		return
	}
	delete(st.byObject, obj)
	st.sorted = nil
	ix.size -= len(v) + 1
	if len(st.byObject) == 0 {
		delete(ix.values, k)
		ix.size -= len(k.String()) + 6
	}
	ix.encoded = nil
}

// Lookup returns the values under k, ordered by object (nil when none).
// The list is cached until the key's values change: callers must not
// modify it.
func (ix *Index) Lookup(k Key) []json.RawMessage {
	st := ix.values[k]
	if st == nil {
		return nil
	}
	if st.sorted != nil {
		return st.sorted
	}
	objs := make([]string, 0, len(st.byObject))
	for obj := range st.byObject {
		objs = append(objs, obj)
	}
	slices.Sort(objs)
	out := make([]json.RawMessage, len(objs))
	for i, obj := range objs {
		out[i] = st.byObject[obj]
	}
	st.sorted = out
	return out
}

// Len is the number of keys.
func (ix *Index) Len() int { return len(ix.values) }

// Objects is the number of objects that contribute.
func (ix *Index) Objects() int { return len(ix.reverse) }

// Size approximates the encoded index in bytes.
func (ix *Index) Size() int { return ix.size }

// Encode returns the index as requests carry it: a JSON object from key
// (the null key as "null") to the list of its values, keys sorted and
// values ordered by object. The encoding is cached until the next change.
func (ix *Index) Encode() json.RawMessage {
	if ix.encoded != nil {
		return ix.encoded
	}
	keys := make([]Key, 0, len(ix.values))
	for k := range ix.values {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Key) int { return strings.Compare(a.String(), b.String()) })
	b := make([]byte, 0, ix.size+16)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(k.String())
		b = append(b, name...)
		b = append(b, ':', '[')
		for j, v := range ix.Lookup(k) {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, v...)
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	ix.encoded = b
	return b
}
