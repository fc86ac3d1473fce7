package abi

import "encoding/json"

// Manifest describes a module: what it is, which handlers it has and what it
// may do. The guest returns it from [ExportManifest].
type Manifest struct {
	// ABIVersion is the major ABI version the module was built for ([Version]).
	ABIVersion int `json:"abiVersion"`
	// Module names the module and its version (free text, e.g. a semver).
	Module ModuleInfo `json:"module"`
	// Handlers in registration order; the host runs due handlers in this order.
	Handlers []HandlerSpec `json:"handlers"`
	// Permissions the module needs. Kubernetes requests outside them are
	// refused by the host with a 403 before they reach the cluster.
	Permissions Permissions `json:"permissions,omitempty"`
}

// ModuleInfo identifies a module.
type ModuleInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// HandlerKind is the kind of a handler, named after Kopf's decorators.
type HandlerKind string

// Handler kinds. Every kind of Kopf is part of ABI v1, whether or not a given
// host serves it yet.
const (
	KindCreate   HandlerKind = "create"   // @kopf.on.create
	KindUpdate   HandlerKind = "update"   // @kopf.on.update
	KindDelete   HandlerKind = "delete"   // @kopf.on.delete
	KindResume   HandlerKind = "resume"   // @kopf.on.resume
	KindField    HandlerKind = "field"    // @kopf.on.field
	KindEvent    HandlerKind = "event"    // @kopf.on.event
	KindTimer    HandlerKind = "timer"    // @kopf.timer
	KindDaemon   HandlerKind = "daemon"   // @kopf.daemon
	KindIndex    HandlerKind = "index"    // @kopf.index
	KindValidate HandlerKind = "validate" // @kopf.on.validate
	KindMutate   HandlerKind = "mutate"   // @kopf.on.mutate
	KindStartup  HandlerKind = "startup"  // @kopf.on.startup
	KindCleanup  HandlerKind = "cleanup"  // @kopf.on.cleanup
	KindProbe    HandlerKind = "probe"    // @kopf.on.probe
	// KindConvert converts an object of a custom resource between the
	// versions its CRD serves (a conversion webhook; Kopf has none). An
	// addition to ABI v1: a host that predates it refuses the module with
	// "unknown kind "convert"".
	KindConvert HandlerKind = "convert"
)

// Kinds lists every handler kind of this ABI version.
func Kinds() []HandlerKind {
	return []HandlerKind{
		KindCreate, KindUpdate, KindDelete, KindResume, KindField, KindEvent,
		KindTimer, KindDaemon, KindIndex, KindValidate, KindMutate,
		KindStartup, KindCleanup, KindProbe, KindConvert,
	}
}

// IsActivity reports whether handlers of this kind are module-level
// activities (startup, cleanup, probe) rather than per-object handlers.
func (k HandlerKind) IsActivity() bool {
	return k == KindStartup || k == KindCleanup || k == KindProbe
}

// IsChanging reports whether the kind reacts to a change cause and keeps its
// progress on the object (create, update, delete, resume, field).
func (k HandlerKind) IsChanging() bool {
	switch k {
	case KindCreate, KindUpdate, KindDelete, KindResume, KindField:
		return true
	}
	return false
}

// IsWebhook reports whether the kind serves admission requests.
func (k HandlerKind) IsWebhook() bool { return k == KindValidate || k == KindMutate }

// HandlerSpec declares one handler.
type HandlerSpec struct {
	// ID is unique within the module, except that one function may be
	// declared as several changing handlers of different kinds under one
	// id (Kopf's @kopf.on.resume with @kopf.on.create): they share one
	// progress record and run at most once per cause (see
	// [Manifest.Validate]). Kopf's defaults apply: the function name,
	// "fn/spec.field" for field handlers.
	ID   string      `json:"id"`
	Kind HandlerKind `json:"kind"`
	// Resource selects the objects; empty for activities.
	Resource *ResourceSelector `json:"resource,omitempty"`
	// Filters narrow down which objects and changes the handler sees.
	Filters Filters `json:"filters,omitempty"`
	// Options tune errors, retries, timing and webhooks.
	Options Options `json:"options,omitempty"`
}

// ResourceSelector names a resource as Kopf's selectors do. Name may be the
// plural, the singular, the kind or a short name; Version may be empty for
// the preferred version; Group is empty for the core API ("v1" pods).
//
// Instead of a Name, a selector may name many resources (additions to ABI
// v1; older hosts refuse such a manifest as having no resource): Category
// selects every resource in that category (Kopf's category=, e.g. "all"),
// Everything every resource (Kopf's kopf.EVERYTHING), each narrowed to
// Group and Version when they are set. Only preferred versions are
// selected unless Version is set; resources that cannot be listed and
// watched, and core and events.k8s.io Events, are never selected, as in
// Kopf. The host follows the cluster: custom resources that appear or go
// later start or stop being served.
//
// Callback (an addition to ABI v1) says the guest selects the resources
// with a function, Kopf's callable selector fn(resource) -> bool: the host
// asks the guest ([CallSelect]) about every resource that can be listed
// and watched, of Group and Version when set, non-preferred versions
// included (never Events), at start and whenever discovery changes (a CRD
// came or went), and serves those it takes.
type ResourceSelector struct {
	Group      string `json:"group,omitempty"`
	Version    string `json:"version,omitempty"`
	Name       string `json:"name"`
	Category   string `json:"category,omitempty"`
	Everything bool   `json:"everything,omitempty"`
	Callback   bool   `json:"callback,omitempty"`
}

// Many reports whether the selector may name several resources (a
// category, everything, or a callback's choice) rather than one.
func (s ResourceSelector) Many() bool { return s.Category != "" || s.Everything || s.Callback }

// Filters are ANDed, with Kopf's semantics.
type Filters struct {
	// Labels and Annotations: each key must match its [MetaFilter].
	Labels      map[string]MetaFilter `json:"labels,omitempty"`
	Annotations map[string]MetaFilter `json:"annotations,omitempty"`
	// Field is a dotted path ("spec.replicas"); mandatory for field handlers.
	Field string `json:"field,omitempty"`
	// Value must match the field's value (old or new for changing handlers);
	// Old and New are checked separately on the old and new values.
	Value *ValueFilter `json:"value,omitempty"`
	Old   *ValueFilter `json:"old,omitempty"`
	New   *ValueFilter `json:"new,omitempty"`
	// When means the guest has a callback filter: before calling the
	// handler the host asks the guest with [Request.Call] = [CallWhen].
	When bool `json:"when,omitempty"`
}

// MetaFilter matches one label or annotation: exactly one of its fields is
// set. {"value":"x"} matches the value "x"; {"present":true} any value
// (an empty string counts); {"absent":true} a missing key;
// {"callback":true} says the guest matches the value with a function
// (Kopf's callable filters): the host leaves the key to the guest, whose
// callback filter (the handler's [Filters.When], which must be set) decides.
// Callback is an addition to ABI v1; older hosts refuse it.
type MetaFilter struct {
	Value    *string `json:"value,omitempty"`
	Present  bool    `json:"present,omitempty"`
	Absent   bool    `json:"absent,omitempty"`
	Callback bool    `json:"callback,omitempty"`
}

// ValueFilter matches a field's value: a literal JSON value, present,
// absent, or a guest's callback (exactly one is set; see [MetaFilter]).
type ValueFilter struct {
	Value    json.RawMessage `json:"value,omitempty"`
	Present  bool            `json:"present,omitempty"`
	Absent   bool            `json:"absent,omitempty"`
	Callback bool            `json:"callback,omitempty"`
}

// ErrorsMode is what an arbitrary error means, as Kopf's errors= option.
type ErrorsMode string

// Errors modes.
const (
	ErrorsIgnored   ErrorsMode = "ignored"
	ErrorsTemporary ErrorsMode = "temporary"
	ErrorsPermanent ErrorsMode = "permanent"
)

// Options are Kopf's handler options. Durations are in seconds; zero or
// absent means "not set", and the host's settings supply the default.
type Options struct {
	Errors  ErrorsMode `json:"errors,omitempty"`
	Timeout float64    `json:"timeout,omitempty"`
	Retries int        `json:"retries,omitempty"`
	Backoff float64    `json:"backoff,omitempty"`
	// Param is passed back verbatim in [Request.Param].
	Param json.RawMessage `json:"param,omitempty"`

	// Optional (delete handlers): no finalizer is added for this handler.
	Optional bool `json:"optional,omitempty"`
	// Deleted (resume handlers): also run on objects marked for deletion.
	Deleted bool `json:"deleted,omitempty"`

	// Timers and daemons.
	Interval     float64 `json:"interval,omitempty"`
	InitialDelay float64 `json:"initialDelay,omitempty"`
	// InitialDelayCallback says the guest computes the initial delay from
	// the object (Kopf's callable initial_delay): before the first run of
	// the timer or daemon for an object the host asks the guest with
	// [Request.Call] = [CallInitialDelay]. An addition to ABI v1; an older
	// host ignores it and starts the timer or daemon at once.
	InitialDelayCallback bool    `json:"initialDelayCallback,omitempty"`
	Idle                 float64 `json:"idle,omitempty"`
	Sharp                bool    `json:"sharp,omitempty"`
	CancellationBackoff  float64 `json:"cancellationBackoff,omitempty"`
	CancellationTimeout  float64 `json:"cancellationTimeout,omitempty"`
	// CancellationPolling: how often a daemon asked to stop that has no
	// CancellationTimeout is checked (and reported) until it exits.
	CancellationPolling float64 `json:"cancellationPolling,omitempty"`

	// Admission webhooks (validate, mutate).
	Operations     []string `json:"operations,omitempty"` // CREATE, UPDATE, DELETE, CONNECT; empty = all
	Subresource    string   `json:"subresource,omitempty"`
	Persistent     bool     `json:"persistent,omitempty"`
	SideEffects    bool     `json:"sideEffects,omitempty"`
	IgnoreFailures bool     `json:"ignoreFailures,omitempty"`

	// Versions (convert handlers) are the versions of the CRD's group the
	// handler converts between ("v1alpha1", "v1"); empty means any. The
	// host fails a ConversionReview from or to another version with a
	// message naming them, and warns when the CRD serves one not listed.
	// A compatible addition: older hosts ignore it.
	Versions []string `json:"versions,omitempty"`
}

// Permissions are what a module may do beyond handling its own resources.
type Permissions struct {
	// Kubernetes lists the API requests a module's handlers may make.
	Kubernetes []KubePermission `json:"kubernetes,omitempty"`
	// Hosts lists the hosts (globs, as path.Match) that the module may reach
	// with Extism's http_request; any other host fails the call.
	Hosts []string `json:"hosts,omitempty"`
}

// KubePermission allows verbs on one resource, as an RBAC rule does.
// Resource is the plural, optionally with a subresource ("pods/status");
// "*" matches any. Verbs are RBAC verbs: get, list, watch, create, update,
// patch, delete, or "*".
type KubePermission struct {
	Group    string   `json:"group"`
	Resource string   `json:"resource"`
	Verbs    []string `json:"verbs"`
}
