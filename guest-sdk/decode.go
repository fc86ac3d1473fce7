package kopf

import (
	"encoding/json"
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Decode converts a decoded object (an [Object], a map, a slice, any JSON
// value) into a Go type T, as encoding/json would have decoded its JSON:
// the map stays available, and T is typically a struct with json tags.
//
//	type Spec struct {
//		Size     string `json:"size"`
//		Replicas int    `json:"replicas"`
//	}
//	spec, err := kopf.Decode[Spec](ctx.Spec())
//
// To decode parts of the handler's object prefer [Context.DecodeSpec] and
// its siblings: they decode the request's bytes directly.
func Decode[T any](v any) (T, error) {
	var out T
	raw, err := json.Marshal(v)
	if err != nil {
		return out, fmt.Errorf("kopf: decode %T: %w", out, err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("kopf: decode %T: %w", out, err)
	}
	return out, nil
}

// DecodeBody decodes the whole object into v (a pointer, as for
// json.Unmarshal), straight from the request's JSON.
func (c *Context) DecodeBody(v any) error {
	return decodeRaw("the body", orNull(c.req.Body), v)
}

// DecodeSpec decodes the object's spec into v (a pointer, as for
// json.Unmarshal), straight from the request's JSON: no map is built. An
// object without a spec leaves v unchanged.
func (c *Context) DecodeSpec(v any) error { return c.decodePart("spec", v) }

// DecodeStatus decodes the object's status into v, as [Context.DecodeSpec].
func (c *Context) DecodeStatus(v any) error { return c.decodePart("status", v) }

// DecodeMeta decodes the object's metadata into v, as [Context.DecodeSpec].
func (c *Context) DecodeMeta(v any) error { return c.decodePart("metadata", v) }

// decodePart decodes the body's top-level field name into v.
func (c *Context) decodePart(name string, v any) error {
	if c.body.done { // the map may be all there is (a test's request)
		raw, err := json.Marshal(c.body.v[name])
		if err != nil {
			return fmt.Errorf("kopf: decode the %s: %w", name, err)
		}
		return decodeRaw("the "+name, raw, v)
	}
	var raw []byte
	if len(c.req.Body) > 0 {
		_ = eachMember(c.req.Body, func(key string, val []byte) error {
			if key == name {
				raw = val
			}
			return nil
		})
	}
	return decodeRaw("the "+name, orNull(raw), v)
}

// decodeRaw is json.Unmarshal with an error that names what was decoded.
func decodeRaw(what string, raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("kopf: decode %s into %T: %w", what, v, err)
	}
	return nil
}

// GetInto reads an object into v (a pointer to a struct, such as a typed
// Kubernetes object, or to a map), decoding the reply's JSON directly.
func (k Client) GetInto(name string, v any) error {
	req := newGet(name)
	raw, err := k.raw(req, nil)
	if err != nil {
		return err
	}
	return k.decodeReply(raw, v, req)
}

// ListInto reads the objects of the client's namespace (all when none)
// into v, a pointer to a slice (of structs or maps), from the list's items.
func (k Client) ListInto(opts ListOptions, v any) error {
	req := newList(opts)
	raw, err := k.raw(req, nil)
	if err != nil {
		return err
	}
	var list struct {
		Items json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(orNull(raw), &list); err != nil {
		return fmt.Errorf("kopf: %s: decode the reply: %w", k.describe(k.complete(req, nil)), err)
	}
	return k.decodeReply(list.Items, v, req)
}

// decodeReply decodes a reply's JSON into v, naming the request on failure.
func (k Client) decodeReply(raw []byte, v any, req abi.KubeRequest) error {
	if err := json.Unmarshal(orNull(raw), v); err != nil {
		return fmt.Errorf("kopf: %s: decode the reply into %T: %w", k.describe(k.complete(req, nil)), v, err)
	}
	return nil
}
