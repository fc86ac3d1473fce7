package kopf

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Index returns an index of the module (Kopf's kwarg named by the index
// handler's id) at the time of the call: each key with the values that
// objects contributed under it, in no particular order. A map result of
// the index handler contributes each of its keys; any other result is
// under the key "null". Nil when the module has no such index.
//
// The host carries small indexes in every request; a large one (above
// the host's execution.indexInline setting) it sends only when asked:
// Index then asks the host for the whole index each time it is called, so
// call it once per handler call, or use [Context.IndexLookup] to read one
// key, which costs the same whatever the index's size.
func (c *Context) Index(id string) map[string][]any {
	raw, ok := c.req.Indices[id]
	if !ok {
		return nil
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		var reply abi.IndexLookupResponse
		if err := c.hostCall(abi.HostIndexLookup, abi.IndexLookupRequest{Index: id, Key: json.RawMessage("null"), All: true}, &reply); err != nil || reply.Error != nil {
			c.Logger().Error("kopf: the index could not be read from the host", "index", id, "error", firstErr(err, reply.Error))
			return map[string][]any{}
		}
		raw = reply.Index
	}
	var out map[string][]any
	decodeInto(raw, &out)
	if out == nil {
		out = map[string][]any{}
	}
	return out
}

// IndexKey is Kopf's tuple key, {(namespace, name): value}, for an index
// handler's result: the JSON array of parts, compact, as encoding/json
// writes it ("[\"default\",\"north\"]"). JSON object keys are strings,
// so a tuple key travels as the text of its array: the host matches a
// look-up key that is not a string by its JSON text, so
// ctx.IndexLookup(index, []any{"default", "north"}) finds the values
// under IndexKey("default", "north"), and ctx.Index(index) holds them
// under that string. Parts are any JSON values (strings, numbers, nil).
func IndexKey(parts ...any) string {
	if parts == nil {
		parts = []any{}
	}
	raw, err := json.Marshal(parts) // as IndexLookup encodes its key
	if err != nil {
		panic(fmt.Sprintf("kopf: an index key part is no JSON value: %v", err))
	}
	return string(raw)
}

func firstErr(err error, herr *abi.HostError) error {
	if err != nil {
		return err
	}
	return herr
}
