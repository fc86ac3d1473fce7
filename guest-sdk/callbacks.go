package kopf

// Callable filters (Kopf's callable label, annotation and value filters)
// run in the guest, the only place the functions exist. The manifest
// marks each such filter as a callback and the handler as having a
// callback filter (Filters.When); the host lets callback filters pass its
// own checks and, after every other filter matched, asks the guest
// (Request.Call = "when") before it calls the handler. The guest then runs
// the callable filters in their declaration order and the When function
// last; the first that says no makes the handler not match. So, as in
// Kopf, a handler filtered out by a callable filter is not called and no
// progress, result or finalizer is stored for it: it is as if it were
// not there for this object or change.
//
// What the functions see is Kopf's: a label or annotation filter gets the
// value, or nil when the key is absent; a value filter gets the field's
// value from the new and from the old object for changing handlers (it
// matches when either does) and from the body otherwise; old and new
// filters get the old and the new value. The context is the filter's:
// reason, body and, for changing handlers, the whole object's old, new
// and diff.

// fieldWhich says which of a field's values a value filter looks at.
type fieldWhich int

const (
	fieldValue fieldWhich = iota // new or old for changing causes, else the body
	fieldOld
	fieldNew
)

// addCallback adds a callable filter; the host then asks the guest.
func (h *handler) addCallback(cb func(*Context) bool) {
	h.callbacks = append(h.callbacks, cb)
	h.spec.Filters.When = true
}

// valueFunc returns v as a ValueFunc, or nil when it is not one.
func valueFunc(v any) ValueFunc {
	switch fn := v.(type) {
	case ValueFunc:
		return fn
	case func(any, *Context) bool:
		return fn
	}
	return nil
}

// metaCallback checks one label or annotation (where is "labels" or
// "annotations") with fn.
func metaCallback(where, key string, fn ValueFunc) func(*Context) bool {
	return func(c *Context) bool {
		var value any
		if m, ok := c.Meta()[where].(map[string]any); ok {
			if v, found := m[key]; found {
				value = v
			}
		}
		return fn(value, c)
	}
}

// fieldCallback checks the handler's field with fn.
func fieldCallback(which fieldWhich, fn ValueFunc) func(*Context) bool {
	return func(c *Context) bool {
		field := c.handler.spec.Filters.Field
		changing := c.handler.spec.Kind.IsChanging() && (len(c.req.Old) > 0 || len(c.req.New) > 0)
		at := func(doc any) any {
			if m, ok := doc.(map[string]any); ok {
				v, _ := Object(m).Get(field)
				return v
			}
			return nil
		}
		switch {
		case which == fieldOld:
			return fn(at(c.Old()), c)
		case which == fieldNew:
			return fn(at(c.New()), c)
		case changing:
			return fn(at(c.New()), c) || fn(at(c.Old()), c)
		}
		v, _ := c.Body().Get(field)
		return fn(v, c)
	}
}
