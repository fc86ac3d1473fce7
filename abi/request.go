package abi

import (
	"encoding/json"
	"time"
)

// Reason is the cause of a changing handler's call, as Kopf's kopf.Reason.
type Reason string

// Reasons passed to changing handlers.
const (
	ReasonCreate Reason = "create"
	ReasonUpdate Reason = "update"
	ReasonDelete Reason = "delete"
	ReasonResume Reason = "resume"
)

// Call says what the host asks of [ExportHandle].
type Call string

// Calls.
const (
	// CallHandle runs the handler (the default when empty).
	CallHandle Call = "handle"
	// CallWhen evaluates the handler's callback filter; the guest answers
	// with [Response.Matched] and must not act.
	CallWhen Call = "when"
	// CallInitialDelay evaluates a timer's or daemon's callable initial
	// delay ([Options.InitialDelayCallback]) for the object, once before
	// its first run; the guest answers with the delay in seconds as
	// [Response.Result] (a JSON number, 0 or more) and must not act.
	CallInitialDelay Call = "initialDelay"
	// CallSelect asks the guest which resources the handler's callable
	// selector ([ResourceSelector.Callback]) takes: [Request.Body] is the
	// JSON array of [ResourceInfo] to choose from, and the guest answers
	// with a JSON array of booleans as [Response.Result], one per resource
	// in order, and must not act.
	CallSelect Call = "select"
)

// Request is the input of [ExportHandle]: Kopf's handler kwargs. The guest
// SDK derives spec, meta, status, labels and annotations views from Body.
type Request struct {
	Call Call `json:"call,omitempty"`
	// Handler is the [HandlerSpec.ID] to run, and Kind its kind: an id
	// that several changing handlers share is told apart by its kind.
	Handler string      `json:"handler"`
	Kind    HandlerKind `json:"kind"`
	// Reason is set for changing handlers.
	Reason Reason `json:"reason,omitempty"`
	// Resource is the resolved resource of the object.
	Resource *ResourceRef `json:"resource,omitempty"`
	// Body is the whole object as the host last saw it.
	Body      json.RawMessage `json:"body,omitempty"`
	Name      string          `json:"name,omitempty"`
	Namespace string          `json:"namespace,omitempty"`
	UID       string          `json:"uid,omitempty"`
	// Old, New and Diff describe the change: diff-base essences for whole
	// object handlers, the field's values for field handlers (the diff's
	// paths are then relative to the field), the bodies for webhooks.
	Old  json.RawMessage `json:"old,omitempty"`
	New  json.RawMessage `json:"new,omitempty"`
	Diff []DiffItem      `json:"diff,omitempty"`
	// Retry is 0 on the first attempt; Started is when the first attempt
	// began; Runtime is the seconds since then.
	Retry   int       `json:"retry"`
	Started time.Time `json:"started,omitempty"`
	Runtime float64   `json:"runtime,omitempty"`
	// Deadline is when the host stops this call: its start plus
	// wasm.callTimeout, or sooner when what the call serves ends sooner
	// (an admission review's timeout). Zero: no limit but the host's stop
	// (daemons). Guests give it to their libraries (the Go SDK's
	// ctx.Context()).
	Deadline time.Time `json:"deadline,omitzero"`
	// Param is the handler's [Options.Param].
	Param json.RawMessage `json:"param,omitempty"`
	// Memo is the in-memory memo (a JSON object) as the last call left it:
	// the module's operator memo for activities, the module's memo of the
	// object for every other kind (the operator memo until a handler about
	// the object changes it). It does not survive a host restart.
	Memo json.RawMessage `json:"memo,omitempty"`
	// Indices holds each index of the module by id: a JSON object from key to
	// a list of values (the key of non-object results is "null"). An index
	// too large to carry in every request is null here: read it with
	// [HostIndexLookup], by key or whole ([IndexLookupRequest.All]).
	Indices map[string]json.RawMessage `json:"indices,omitempty"`
	// Event is set for event handlers.
	Event *WatchEvent `json:"event,omitempty"`
	// Admission is set for validate and mutate handlers.
	Admission *AdmissionRequest `json:"admission,omitempty"`
	// Conversion is set for convert handlers: Body is the object to
	// convert, and the handler returns the converted object as its result.
	Conversion *ConversionRequest `json:"conversion,omitempty"`
	// Activity is set for startup, cleanup and probe handlers.
	Activity HandlerKind `json:"activity,omitempty"`
	// Subhandlers is the progress of the sub-handlers that a changing
	// handler registered in earlier calls for the current cause, of every
	// depth (see [SubhandlerState]).
	Subhandlers []SubhandlerState `json:"subhandlers,omitempty"`
	// LogLevel is the lowest level of [HostLog] records the host writes
	// (empty: every level): a guest may drop records below it instead of
	// building and sending them. Records it sends anyway are filtered by
	// the host as before.
	LogLevel LogLevel `json:"logLevel,omitempty"`
}

// ResourceRef is a resolved resource.
type ResourceRef struct {
	Group      string `json:"group,omitempty"`
	Version    string `json:"version"`
	Plural     string `json:"plural"`
	Kind       string `json:"kind,omitempty"`
	Namespaced bool   `json:"namespaced,omitempty"`
}

// ResourceInfo describes a resource the cluster serves, as Kopf's
// kopf.Resource does, for callable selectors.
type ResourceInfo struct {
	Group        string   `json:"group,omitempty"`
	Version      string   `json:"version"`
	Plural       string   `json:"plural"`
	Kind         string   `json:"kind,omitempty"`
	Singular     string   `json:"singular,omitempty"`
	ShortNames   []string `json:"shortNames,omitempty"`
	Categories   []string `json:"categories,omitempty"`
	Subresources []string `json:"subresources,omitempty"`
	Namespaced   bool     `json:"namespaced,omitempty"`
	Preferred    bool     `json:"preferred,omitempty"`
	Verbs        []string `json:"verbs,omitempty"`
}

// DiffOp is the operation of a [DiffItem].
type DiffOp string

// Diff operations, as Kopf's.
const (
	DiffAdd    DiffOp = "add"
	DiffChange DiffOp = "change"
	DiffRemove DiffOp = "remove"
)

// DiffItem is one difference between old and new: the field path as a list
// of keys, and the old and new values (absent when missing).
type DiffItem struct {
	Op    DiffOp          `json:"op"`
	Field []string        `json:"field"`
	Old   json.RawMessage `json:"old,omitempty"`
	New   json.RawMessage `json:"new,omitempty"`
}

// WatchEvent is the raw watch event passed to event handlers. Type is empty
// for objects seen in the initial listing, else ADDED, MODIFIED or DELETED.
type WatchEvent struct {
	Type   string          `json:"type,omitempty"`
	Object json.RawMessage `json:"object"`
}

// ConversionRequest says what a convert handler converts to.
type ConversionRequest struct {
	// UID is the ConversionReview's uid.
	UID string `json:"uid"`
	// DesiredAPIVersion is "group/version" of the result.
	DesiredAPIVersion string `json:"desiredAPIVersion"`
}

// AdmissionRequest carries the admission-specific kwargs.
type AdmissionRequest struct {
	UID         string              `json:"uid"`
	Operation   string              `json:"operation"`
	Subresource string              `json:"subresource,omitempty"`
	DryRun      bool                `json:"dryRun,omitempty"`
	UserInfo    json.RawMessage     `json:"userInfo,omitempty"`
	Headers     map[string][]string `json:"headers,omitempty"`
}
