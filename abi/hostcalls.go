package abi

import (
	"encoding/json"
	"log/slog"
)

// LogLevel is the level of a [LogRecord].
type LogLevel string

// Log levels.
const (
	LogDebug LogLevel = "debug"
	LogInfo  LogLevel = "info"
	LogWarn  LogLevel = "warning"
	LogError LogLevel = "error"
)

// Slog is the log/slog level of a level named here. For any other (the
// empty one among them) ok is false, and each side decides what it means.
func (l LogLevel) Slog() (level slog.Level, ok bool) {
	switch l {
	case LogDebug:
		return slog.LevelDebug, true
	case LogInfo:
		return slog.LevelInfo, true
	case LogWarn:
		return slog.LevelWarn, true
	case LogError:
		return slog.LevelError, true
	}
	return 0, false
}

// LogRecord is the request of [HostLog]. The host adds the module, handler
// and object references; Fields are extra key/values.
type LogRecord struct {
	Level   LogLevel       `json:"level"`
	Message string         `json:"message"`
	Fields  map[string]any `json:"fields,omitempty"`
}

// EventRequest is the request of [HostPostEvent]: an Event about the object
// being handled, or about About when set (Kopf's kopf.event(objs, ...)
// about any object, also from activities). Type is "Normal", "Warning" or
// "Error" (Kopf's kopf.exception).
type EventRequest struct {
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// About is an addition to ABI v1: older hosts ignore it and post the
	// Event about the handled object (or refuse it in activities).
	About *ObjectReference `json:"about,omitempty"`
}

// ObjectReference names an object, as Kubernetes' involvedObject and
// Kopf's build_object_reference: apiVersion, kind and name are required;
// namespace is empty for cluster-scoped objects.
type ObjectReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
	UID        string `json:"uid,omitempty"`
}

// Event types.
const (
	EventNormal  = "Normal"
	EventWarning = "Warning"
	// EventError is the type of Kopf's kopf.exception Events.
	EventError = "Error"
)

// HostError is a failure reported by a host function. Code is an HTTP status
// code (403 for a permission the module did not declare, 404 for a resource
// the cluster does not serve, ...). Origin tells who refused: "host" (the
// module's manifest, the host's limits) or "cluster" (the API server).
type HostError struct {
	Code    int    `json:"code"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
	Origin  string `json:"origin,omitempty"`
}

// Error origins.
const (
	OriginHost    = "host"
	OriginCluster = "cluster"
)

// Error implements the error interface.
func (e *HostError) Error() string { return e.Message }

// HostReply is the reply of host functions that return nothing but an error.
type HostReply struct {
	Error *HostError `json:"error,omitempty"`
}

// KubeVerb is the action of a [KubeRequest].
type KubeVerb string

// Kubernetes verbs a guest may request.
const (
	VerbGet    KubeVerb = "get"
	VerbList   KubeVerb = "list"
	VerbCreate KubeVerb = "create"
	VerbUpdate KubeVerb = "update"
	VerbPatch  KubeVerb = "patch"
	VerbApply  KubeVerb = "apply" // server-side apply: a patch, checked as "patch"
	VerbDelete KubeVerb = "delete"
)

// PatchType names the content type of a patch request.
type PatchType string

// Patch types.
const (
	PatchMerge     PatchType = "merge"     // application/merge-patch+json
	PatchJSON      PatchType = "json"      // application/json-patch+json
	PatchStrategic PatchType = "strategic" // application/strategic-merge-patch+json
)

// KubeRequest is the request of [HostKubeRequest].
type KubeRequest struct {
	Verb        KubeVerb `json:"verb"`
	Group       string   `json:"group,omitempty"`
	Version     string   `json:"version"`
	Resource    string   `json:"resource"` // plural
	Subresource string   `json:"subresource,omitempty"`
	Namespace   string   `json:"namespace,omitempty"`
	Name        string   `json:"name,omitempty"`
	// LabelSelector and FieldSelector filter list requests.
	LabelSelector string `json:"labelSelector,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty"`
	// Body is the object (create, update, apply) or the patch (patch).
	Body      json.RawMessage `json:"body,omitempty"`
	PatchType PatchType       `json:"patchType,omitempty"`
	// FieldManager and Force are for server-side apply (and writes in general).
	FieldManager string `json:"fieldManager,omitempty"`
	Force        bool   `json:"force,omitempty"`
}

// KubeResponse is the reply of [HostKubeRequest]: the object or list on
// success, or an error.
type KubeResponse struct {
	Body  json.RawMessage `json:"body,omitempty"`
	Error *HostError      `json:"error,omitempty"`
}

// IndexLookupRequest is the request of [HostIndexLookup]: the values stored
// under Key in the index with id Index. Key is any JSON value: a string
// names the key as the index handler's result named it, null is the key of
// results that are not objects, and any other value is matched by its
// compact JSON text (what encoding a map with number keys gives).
type IndexLookupRequest struct {
	Index string          `json:"index"`
	Key   json.RawMessage `json:"key"`
	// All asks for the whole index instead ([IndexLookupResponse.Index]):
	// what a guest does when [Request.Indices] carries the index as null
	// because it is too large to carry in every request. An addition to
	// ABI v1; older hosts ignore it and answer the key's values.
	All bool `json:"all,omitempty"`
}

// IndexLookupResponse is the reply of [HostIndexLookup]: the values under
// the key, in no particular order (duplicates are kept), or with
// [IndexLookupRequest.All] the whole index, encoded as [Request.Indices]
// carries one.
type IndexLookupResponse struct {
	Values []json.RawMessage `json:"values"`
	Index  json.RawMessage   `json:"index,omitempty"`
	Error  *HostError        `json:"error,omitempty"`
}

// SleepRequest is the request of [HostSleepUntilStopped].
type SleepRequest struct {
	Seconds float64 `json:"seconds"`
}

// SleepResponse is the reply of [HostSleepUntilStopped] and [HostIsStopped].
// Reason says why the daemon is asked to stop (Kopf's DaemonStoppingReason:
// "deleted", "filters-mismatch", "exiting", "reloading", ...).
type SleepResponse struct {
	Stopped bool   `json:"stopped"`
	Reason  string `json:"reason,omitempty"`
}
