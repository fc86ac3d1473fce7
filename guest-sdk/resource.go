package kopf

import "github.com/kopf-wasm/kopf-wasm/abi"

// Resource names a Kubernetes resource: Group ("" for core), Version (""
// for the preferred one) and Plural (or a kind, singular or short name).
// It registers handlers without repeating the triple:
//
//	var examples = kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples"}
//
//	func init() {
//		examples.OnCreate(createFn)
//		examples.OnUpdate(updateFn)
//		examples.Daemon(monitor, kopf.ID("monitor"))
//	}
//
// [Context.Resource] returns the resolved resource of the object being
// handled, with its Kind and scope; registration ignores those two.
type Resource abi.ResourceRef

func (r Resource) selector() *abi.ResourceSelector { return selector(r.Group, r.Version, r.Plural) }

// OnCreate registers a create handler, as the package's [OnCreate].
func (r Resource) OnCreate(fn Handler, opts ...Option) {
	registered.add(abi.KindCreate, r.selector(), fn, opts)
}

// OnUpdate registers an update handler, as the package's [OnUpdate].
func (r Resource) OnUpdate(fn Handler, opts ...Option) {
	registered.add(abi.KindUpdate, r.selector(), fn, opts)
}

// OnDelete registers a delete handler, as the package's [OnDelete].
func (r Resource) OnDelete(fn Handler, opts ...Option) {
	registered.add(abi.KindDelete, r.selector(), fn, opts)
}

// OnResume registers a resume handler, as the package's [OnResume].
func (r Resource) OnResume(fn Handler, opts ...Option) {
	registered.add(abi.KindResume, r.selector(), fn, opts)
}

// OnField registers a field handler, as the package's [OnField].
func (r Resource) OnField(fn Handler, opts ...Option) {
	registered.add(abi.KindField, r.selector(), fn, opts)
}

// OnEvent registers an event handler, as the package's [OnEvent].
func (r Resource) OnEvent(fn Handler, opts ...Option) {
	registered.add(abi.KindEvent, r.selector(), fn, opts)
}

// Timer registers a timer, as the package's [Timer].
func (r Resource) Timer(fn Handler, opts ...Option) {
	registered.add(abi.KindTimer, r.selector(), fn, opts)
}

// Daemon registers a daemon with a [DaemonContext], as the package's
// [Daemon].
func (r Resource) Daemon(fn DaemonHandler, opts ...Option) {
	h, name := daemonHandler(fn)
	registered.addNamed(abi.KindDaemon, r.selector(), h, name, opts)
}

// Index registers an indexing handler, as the package's [Index].
func (r Resource) Index(fn Handler, opts ...Option) {
	registered.add(abi.KindIndex, r.selector(), fn, opts)
}

// OnValidate registers a validating admission handler with an
// [AdmissionContext], as the package's [OnValidate].
func (r Resource) OnValidate(fn AdmissionHandler, opts ...Option) {
	h, name := admissionHandler(fn)
	registered.addNamed(abi.KindValidate, r.selector(), h, name, opts)
}

// OnMutate registers a mutating admission handler with an
// [AdmissionContext], as the package's [OnMutate].
func (r Resource) OnMutate(fn AdmissionHandler, opts ...Option) {
	h, name := admissionHandler(fn)
	registered.addNamed(abi.KindMutate, r.selector(), h, name, opts)
}

// OnConvert registers a conversion handler, as the package's [OnConvert].
func (r Resource) OnConvert(fn Handler, opts ...Option) {
	registered.add(abi.KindConvert, r.selector(), fn, opts)
}

// Permit declares Kubernetes requests on this resource, as the package's
// [Permit] (the version plays no part in permissions).
func (r Resource) Permit(verbs ...string) { Permit(r.Group, r.Plural, verbs...) }

// Client returns a client for this resource, as [Context.Client].
func (r Resource) Client(ctx *Context) Client { return ctx.Client(r.Group, r.Version, r.Plural) }
