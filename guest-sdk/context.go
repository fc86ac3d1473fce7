package kopf

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/guest-sdk/internal/hostcall"
	"github.com/kopf-wasm/kopf-wasm/guest-sdk/internal/jsonfast"
)

// Context is what a handler gets: Kopf's kwargs, decoded lazily from the
// host's request, a [Patch] to fill, and the host's services. The views
// (Body, Spec, ...) are read-only by convention: change the object through
// the Patch. A Context is valid only during its handler's call.
type Context struct {
	req     *abi.Request
	handler *handler
	host    hostcall.Host
	module  string

	body      lazy[Object]
	parts     map[string]Object // spec, metadata, status decoded alone (bodyPart)
	old, new  lazy[any]
	param     lazy[any]
	memo      Memo
	memoWas   []byte
	patch     Patch
	admission *Admission
	event     *Event
	logger    *slog.Logger
	stop      string

	// Sub-handlers (subhandlers.go): those registered and not run yet,
	// whether Execute ran, the call's shared state, and the context of
	// the handler the host called (nil in that one).
	subs     []*subhandler
	executed bool
	subtree  *subhandling
	root     *Context
	goctx    context.Context // see Context.Context
	cancel   context.CancelFunc
}

// Memo is the per-object memo: it lives in the host's memory between the
// calls of all handlers of one object and is not persisted.
type Memo map[string]any

// Reason is the cause of a changing handler's call.
type Reason = abi.Reason

// Reasons, as Kopf's kopf.Reason.
const (
	ReasonCreate = abi.ReasonCreate
	ReasonUpdate = abi.ReasonUpdate
	ReasonDelete = abi.ReasonDelete
	ReasonResume = abi.ReasonResume
)

// DiffItem is one difference between old and new.
type DiffItem struct {
	Op    string   `json:"op"`    // "add", "change" or "remove"
	Field []string `json:"field"` // the path, relative to the field for field handlers
	Old   any      `json:"old"`   // nil when absent
	New   any      `json:"new"`   // nil when absent
}

// Event is the raw watch event of an event handler. Type is "" for objects
// of the initial listing, else ADDED, MODIFIED or DELETED.
type Event struct {
	Type   string
	Object Object
}

// Admission holds the admission request of a validate or mutate handler.
// Append to Warnings to return warnings to the client.
type Admission struct {
	UID         string
	Operation   string // CREATE, UPDATE, DELETE or CONNECT
	Subresource string
	DryRun      bool
	UserInfo    Object
	Headers     map[string][]string
	Warnings    []string
}

// lazy decodes a JSON value on first use.
type lazy[T any] struct {
	done bool
	v    T
}

func (l *lazy[T]) get(raw json.RawMessage) T {
	if !l.done {
		l.done = true
		if len(raw) > 0 {
			decodeInto(raw, &l.v)
		}
	}
	return l.v
}

// decodeInto is json.Unmarshal(raw, v), its error ignored, for a v that
// holds its zero value. The usual targets (any, Object, Memo, an index)
// are decoded without reflection when raw is plain valid JSON; anything
// else, invalid input included, goes to json.Unmarshal, which then decides
// what v holds.
func decodeInto[T any](raw []byte, v *T) {
	switch p := any(v).(type) {
	case *any:
		if x, ok := jsonfast.Decode(raw); ok {
			*p = x
			return
		}
	case *Object:
		if m, ok := jsonfast.DecodeObject(raw); ok {
			*p = m
			return
		}
	case *Memo:
		if m, ok := jsonfast.DecodeObject(raw); ok {
			*p = m
			return
		}
	case *map[string][]any:
		if ok := decodeIndex(raw, p); ok {
			return
		}
	}
	_ = json.Unmarshal(raw, v)
}

// decodeIndex decodes an index (an object of arrays or nulls) as
// json.Unmarshal does, or reports false.
func decodeIndex(raw []byte, into *map[string][]any) bool {
	m, ok := jsonfast.DecodeObject(raw)
	if !ok {
		return false
	}
	if m == nil {
		*into = nil
		return true
	}
	out := make(map[string][]any, len(m))
	for k, v := range m {
		a, ok := v.([]any)
		if !ok && v != nil {
			return false
		}
		out[k] = a
	}
	*into = out
	return true
}

// Handler is the id of the handler being called.
func (c *Context) Handler() string { return c.req.Handler }

// Reason is the cause of a changing handler's call.
func (c *Context) Reason() Reason { return c.req.Reason }

// Resource is the resource of the object.
func (c *Context) Resource() Resource {
	if c.req.Resource == nil {
		return Resource{}
	}
	return Resource(*c.req.Resource)
}

// Body is the whole object.
func (c *Context) Body() Object {
	if c.body.done {
		return c.body.v
	}
	body := c.body.get(c.req.Body)
	for name, part := range c.parts { // the same maps as Spec() etc. returned
		if _, ok := body[name].(map[string]any); ok && part != nil {
			body[name] = map[string]any(part)
		}
	}
	return body
}

// Spec is the object's spec.
func (c *Context) Spec() Object { return c.bodyPart("spec") }

// Meta is the object's metadata.
func (c *Context) Meta() Object { return c.bodyPart("metadata") }

// Status is the object's status.
func (c *Context) Status() Object { return c.bodyPart("status") }

// bodyPart returns the object at the body's top-level field name. Until the
// whole body is needed it decodes that field alone: in wasm, decoding a
// large body for its spec costs a good part of a handler call.
func (c *Context) bodyPart(name string) Object {
	if c.body.done {
		return c.body.v.Map(name)
	}
	if part, ok := c.parts[name]; ok {
		return part
	}
	var raw []byte
	if len(c.req.Body) > 0 {
		_ = eachMember(c.req.Body, func(key string, val []byte) error {
			if key == name { // exact, as a map's keys are; the last one wins
				raw = val
			}
			return nil
		})
	}
	var part Object
	if len(raw) > 0 {
		decodeInto(raw, &part)
	}
	if c.parts == nil {
		c.parts = map[string]Object{}
	}
	c.parts[name] = part
	return part
}

// Labels are the object's labels.
func (c *Context) Labels() map[string]string { return stringMap(c.Meta()["labels"]) }

// Annotations are the object's annotations.
func (c *Context) Annotations() map[string]string { return stringMap(c.Meta()["annotations"]) }

// Name is the object's name.
func (c *Context) Name() string { return c.req.Name }

// Namespace is the object's namespace ("" for cluster-scoped objects).
func (c *Context) Namespace() string { return c.req.Namespace }

// UID is the object's uid.
func (c *Context) UID() string { return c.req.UID }

// Old is the old state: the diff-base essence for whole-object handlers,
// the field's value for field handlers, the old body for webhooks.
func (c *Context) Old() any { return c.old.get(c.req.Old) }

// New is the new state, as [Context.Old].
func (c *Context) New() any { return c.new.get(c.req.New) }

// Diff lists the differences between old and new.
func (c *Context) Diff() []DiffItem {
	out := make([]DiffItem, 0, len(c.req.Diff))
	for _, d := range c.req.Diff {
		item := DiffItem{Op: string(d.Op), Field: d.Field}
		decodeInto(orNull(d.Old), &item.Old)
		decodeInto(orNull(d.New), &item.New)
		out = append(out, item)
	}
	return out
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// Retry is 0 on the first attempt, then 1, 2, ...
func (c *Context) Retry() int { return c.req.Retry }

// Started is when the first attempt began.
func (c *Context) Started() time.Time { return c.req.Started }

// Runtime is the time since the first attempt began.
func (c *Context) Runtime() time.Duration {
	return time.Duration(c.req.Runtime * float64(time.Second))
}

// Param is the handler's [Param] option, decoded as JSON (nil when unset).
func (c *Context) Param() any { return c.param.get(c.req.Param) }

// DecodeParam decodes the handler's [Param] option into v.
func (c *Context) DecodeParam(v any) error { return json.Unmarshal(orNull(c.req.Param), v) }

// Memo is the object's memo; changes are kept for the object's next calls.
func (c *Context) Memo() Memo {
	if c.root != nil {
		return c.root.Memo()
	}
	if c.memo == nil {
		if len(c.req.Memo) > 0 {
			decodeInto(c.req.Memo, &c.memo)
		}
		if c.memo == nil { // absent, null or not an object
			c.memo = Memo{}
		}
		c.memoWas, _ = marshal(map[string]any(c.memo))
	}
	return c.memo
}

// Patch is the change to the object that the host applies after the call
// (after every attempt, failed ones included, as Kopf does).
func (c *Context) Patch() *Patch {
	if c.root != nil {
		return c.root.Patch()
	}
	return &c.patch
}

// Event is the watch event of an event handler, nil for other kinds.
func (c *Context) Event() *Event {
	if c.event == nil && c.req.Event != nil {
		c.event = &Event{Type: c.req.Event.Type}
		decodeInto(c.req.Event.Object, &c.event.Object)
	}
	return c.event
}

// Conversion is what a convert handler converts to; nil for other kinds.
func (c *Context) Conversion() *abi.ConversionRequest { return c.req.Conversion }

// Admission is the admission request of a webhook, nil for other kinds.
func (c *Context) Admission() *Admission {
	if c.admission == nil && c.req.Admission != nil {
		a := c.req.Admission
		c.admission = &Admission{UID: a.UID, Operation: a.Operation, Subresource: a.Subresource,
			DryRun: a.DryRun, Headers: a.Headers}
		decodeInto(orNull(a.UserInfo), &c.admission.UserInfo)
	}
	return c.admission
}

// Activity is the kind of an activity handler (startup, cleanup, probe).
func (c *Context) Activity() string { return string(c.req.Activity) }
