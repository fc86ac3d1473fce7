package kopf

import (
	"errors"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Handler is a handler function. Its result is stored under
// status.<handler id> (an object is merged, anything else replaces; nil
// writes nothing); for index handlers it is the indexed value, for probes
// the probe's value. Its error decides the outcome (see [TemporaryError]).
type Handler func(ctx *Context) (any, error)

// Module names the module and its version. Without it the name is the last
// element of the main package's import path.
func Module(name, version string) {
	registered.module = abi.ModuleInfo{Name: name, Version: version}
}

// Permit declares that the module's handlers make Kubernetes requests with
// verbs ("get", "list", "watch", "create", "update", "patch", "delete" or
// "*") on a resource (a plural, optionally with a subresource such as
// "pods/status", or "*") of an API group ("" for the core group). The host
// refuses undeclared requests with a 403. Server-side apply is a "patch".
func Permit(group, resource string, verbs ...string) {
	registered.permissions.Kubernetes = append(registered.permissions.Kubernetes,
		abi.KubePermission{Group: group, Resource: resource, Verbs: verbs})
}

// AllowHosts declares outbound HTTP hosts (globs) the module may reach.
func AllowHosts(hosts ...string) {
	registered.permissions.Hosts = append(registered.permissions.Hosts, hosts...)
}

// Everything, as the plural of a resource handler, selects every resource
// of the group and version given (or of the whole cluster when both are
// ""), Kopf's kopf.EVERYTHING: only preferred versions unless the version
// is named, never Events, and the host follows the cluster (resources of
// CRDs created later are served, those of CRDs removed stop being).
const Everything = "kopf.EVERYTHING"

// Category makes a resource handler serve every resource in a category
// (Kopf's category=, e.g. "all"), of the group and version given when they
// are not "": pass "" as the plural. As for [Everything], only preferred
// versions are served unless the version is named, never Events, and the
// host follows CRDs that appear and go. Webhook handlers must name their
// resource.
func Category(name string) Option {
	return option("Category", resourceKinds, func(h *handler) error {
		if h.spec.Resource == nil || h.spec.Resource.Name != "" || h.spec.Resource.Everything {
			return errors.New(`pass "" as the plural with a category`)
		}
		h.spec.Resource.Category = name
		return nil
	})
}

// ResourceInfo describes a resource the cluster serves, as Kopf's
// kopf.Resource does: what a callable selector ([SelectResources]) sees.
type ResourceInfo = abi.ResourceInfo

// SelectResources makes a resource handler serve the resources fn takes,
// Kopf's callable selector fn(resource) -> bool: pass "" as the plural,
// and a group or version to narrow the candidates. The host asks the
// module at start and whenever the cluster's resources change (a CRD came
// or went) about every resource that can be listed and watched, every
// version (Preferred says which is the group's preferred one), never
// Events. fn must only look. Webhook handlers must name their resource.
func SelectResources(fn func(ResourceInfo) bool) Option {
	return option("SelectResources", resourceKinds, func(h *handler) error {
		switch {
		case fn == nil:
			return errors.New("nil function")
		case h.spec.Resource == nil || h.spec.Resource.Name != "" || h.spec.Resource.Everything:
			return errors.New(`pass "" as the plural with a callable selector`)
		}
		h.spec.Resource.Callback = true
		h.selects = fn
		return nil
	})
}

func selector(group, version, plural string) *abi.ResourceSelector {
	if plural == Everything {
		return &abi.ResourceSelector{Group: group, Version: version, Everything: true}
	}
	return &abi.ResourceSelector{Group: group, Version: version, Name: plural}
}

// OnCreate registers a handler for objects' creation (@kopf.on.create). The
// resource is a group ("" for core), a version ("" for the preferred one)
// and a plural (or a kind, singular or short name).
func OnCreate(group, version, plural string, fn Handler, opts ...Option) {
	registered.add(abi.KindCreate, selector(group, version, plural), fn, opts)
}

// OnUpdate registers a handler for essential changes (@kopf.on.update).
func OnUpdate(group, version, plural string, fn Handler, opts ...Option) {
	registered.add(abi.KindUpdate, selector(group, version, plural), fn, opts)
}

// OnDelete registers a handler for deletion (@kopf.on.delete); the host
// keeps a finalizer on the objects unless the handler is [Optional].
func OnDelete(group, version, plural string, fn Handler, opts ...Option) {
	registered.add(abi.KindDelete, selector(group, version, plural), fn, opts)
}

// OnResume registers a handler for objects found when the operator starts
// (@kopf.on.resume).
func OnResume(group, version, plural string, fn Handler, opts ...Option) {
	registered.add(abi.KindResume, selector(group, version, plural), fn, opts)
}

// OnField registers a handler for changes of one field (@kopf.on.field);
// the [Field] option is mandatory and the id is "fn/<field>".
func OnField(group, version, plural string, fn Handler, opts ...Option) {
	registered.add(abi.KindField, selector(group, version, plural), fn, opts)
}

// OnEvent registers a handler for every watch event (@kopf.on.event); its
// errors are always ignored.
func OnEvent(group, version, plural string, fn Handler, opts ...Option) {
	registered.add(abi.KindEvent, selector(group, version, plural), fn, opts)
}

// Timer registers a handler that runs periodically for each object
// (@kopf.timer); see [Interval], [Idle], [Sharp], [InitialDelay].
func Timer(group, version, plural string, fn Handler, opts ...Option) {
	registered.add(abi.KindTimer, selector(group, version, plural), fn, opts)
}

// Daemon registers a long-running handler per object (@kopf.daemon); it
// should return when [Context.Stopped] says so. fn is a [Handler] or a
// [DaemonHandler], func(ctx *kopf.DaemonContext) (any, error).
func Daemon[F DaemonFunc](group, version, plural string, fn F, opts ...Option) {
	h, name := daemonHandler(fn)
	registered.addNamed(abi.KindDaemon, selector(group, version, plural), h, name, opts)
}

// Index registers an indexing handler (@kopf.index): its result is indexed
// under the handler's id. A map result adds each key's value; any other
// result is stored under the key null; nil keeps nothing.
func Index(group, version, plural string, fn Handler, opts ...Option) {
	registered.add(abi.KindIndex, selector(group, version, plural), fn, opts)
}

// OnValidate registers a validating admission handler (@kopf.on.validate):
// returning an error denies the request. fn is a [Handler] or an
// [AdmissionHandler], func(ctx *kopf.AdmissionContext) error.
func OnValidate[F AdmissionFunc](group, version, plural string, fn F, opts ...Option) {
	h, name := admissionHandler(fn)
	registered.addNamed(abi.KindValidate, selector(group, version, plural), h, name, opts)
}

// OnMutate registers a mutating admission handler (@kopf.on.mutate): its
// [Patch] is the mutation. fn is a [Handler] or an [AdmissionHandler].
func OnMutate[F AdmissionFunc](group, version, plural string, fn F, opts ...Option) {
	h, name := admissionHandler(fn)
	registered.addNamed(abi.KindMutate, selector(group, version, plural), h, name, opts)
}

// OnConvert registers a conversion webhook for a custom resource (beyond
// Kopf): fn gets an object in one of the versions the CRD serves
// (ctx.Body()) and returns it converted to ctx.Conversion().DesiredAPIVersion,
// as a map or an Object; the host sets apiVersion and keeps the object's
// name, namespace and uid. An error fails the conversion with its message.
// version is any version the CRD serves (to find it); the host serves
// ConversionReviews for the handler and, with managed webhooks, points the
// CRD's spec.conversion at it. [Versions] declares the versions it
// converts between: kopf.OnConvert("kopf.dev", "v1", "widgets", fn,
// kopf.Versions("v1alpha1", "v1")).
func OnConvert(group, version, plural string, fn Handler, opts ...Option) {
	registered.add(abi.KindConvert, selector(group, version, plural), fn, opts)
}

// OnStartup registers a handler that runs before the operator starts
// watching (@kopf.on.startup).
func OnStartup(fn Handler, opts ...Option) { registered.add(abi.KindStartup, nil, fn, opts) }

// OnCleanup registers a handler that runs when the operator exits
// (@kopf.on.cleanup).
func OnCleanup(fn Handler, opts ...Option) { registered.add(abi.KindCleanup, nil, fn, opts) }

// OnProbe registers a liveness probe (@kopf.on.probe); its result is
// reported under its id.
func OnProbe(fn Handler, opts ...Option) { registered.add(abi.KindProbe, nil, fn, opts) }
