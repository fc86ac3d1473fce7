package kopf

import (
	"context"
	"log/slog"
	"time"
)

// One [Context] serves every kind of handler, so it offers kwargs that a
// given kind never gets (a webhook has no retry, a daemon no admission
// request). The kind-specific contexts below show only what their kinds
// get; [OnValidate], [OnMutate] and [Daemon] take either handler type.

// AdmissionHandler is a validate or mutate handler with an
// [AdmissionContext]. Returning an error denies the request (an
// [AdmissionError] sets the HTTP code); a mutate handler's mutation is its
// [AdmissionContext.Patch].
type AdmissionHandler func(ctx *AdmissionContext) error

// DaemonHandler is a daemon with a [DaemonContext]. Its result is stored
// under status.<handler id>, as other handlers' are.
type DaemonHandler func(ctx *DaemonContext) (any, error)

// AdmissionFunc is what [OnValidate] and [OnMutate] take.
type AdmissionFunc interface {
	Handler | func(*Context) (any, error) | AdmissionHandler | func(*AdmissionContext) error
}

// DaemonFunc is what [Daemon] takes.
type DaemonFunc interface {
	Handler | func(*Context) (any, error) | DaemonHandler | func(*DaemonContext) (any, error)
}

// admissionHandler adapts fn to a [Handler]; name is fn's default id.
func admissionHandler[F AdmissionFunc](fn F) (h Handler, name string) {
	switch f := any(fn).(type) {
	case Handler:
		return orNil(f), funcName(f)
	case func(*Context) (any, error):
		return orNil(f), funcName(f)
	case AdmissionHandler:
		return adaptAdmission(f), funcName(f)
	case func(*AdmissionContext) error:
		return adaptAdmission(f), funcName(f)
	}
	return nil, ""
}

func adaptAdmission(fn func(*AdmissionContext) error) Handler {
	if fn == nil {
		return nil
	}
	return func(c *Context) (any, error) { return nil, fn(&AdmissionContext{c: c}) }
}

// daemonHandler adapts fn to a [Handler]; name is fn's default id.
func daemonHandler[F DaemonFunc](fn F) (h Handler, name string) {
	switch f := any(fn).(type) {
	case Handler:
		return orNil(f), funcName(f)
	case func(*Context) (any, error):
		return orNil(f), funcName(f)
	case DaemonHandler:
		return adaptDaemon(f), funcName(f)
	case func(*DaemonContext) (any, error):
		return adaptDaemon(f), funcName(f)
	}
	return nil, ""
}

func adaptDaemon(fn func(*DaemonContext) (any, error)) Handler {
	if fn == nil {
		return nil
	}
	return func(c *Context) (any, error) { return fn(&DaemonContext{c: c}) }
}

// orNil keeps a nil function nil once it is a Handler.
func orNil(fn func(*Context) (any, error)) Handler {
	if fn == nil {
		return nil
	}
	return fn
}

// AdmissionContext is what a validate or mutate handler gets: the object
// under review, the request's operation and user, warnings for the client,
// and (for mutate handlers) the patch that is the mutation.
type AdmissionContext struct{ c *Context }

// Handler is the handler's id.
func (a *AdmissionContext) Handler() string { return a.c.Handler() }

// Resource is the resource of the object under review.
func (a *AdmissionContext) Resource() Resource { return a.c.Resource() }

// Body is the object under review (the new state; the old one on DELETE).
func (a *AdmissionContext) Body() Object { return a.c.Body() }

// Spec is the object's spec.
func (a *AdmissionContext) Spec() Object { return a.c.Spec() }

// Meta is the object's metadata.
func (a *AdmissionContext) Meta() Object { return a.c.Meta() }

// Labels are the object's labels.
func (a *AdmissionContext) Labels() map[string]string { return a.c.Labels() }

// Annotations are the object's annotations.
func (a *AdmissionContext) Annotations() map[string]string { return a.c.Annotations() }

// Name is the object's name (empty on CREATE with generateName).
func (a *AdmissionContext) Name() string { return a.c.Name() }

// Namespace is the object's namespace.
func (a *AdmissionContext) Namespace() string { return a.c.Namespace() }

// Old is the object before the change (nil on CREATE).
func (a *AdmissionContext) Old() Object { return asObject(a.c.Old()) }

// New is the object after the change (nil on DELETE).
func (a *AdmissionContext) New() Object { return asObject(a.c.New()) }

// Diff lists the differences between Old and New.
func (a *AdmissionContext) Diff() []DiffItem { return a.c.Diff() }

// DecodeSpec decodes the object's spec into v, as [Context.DecodeSpec].
func (a *AdmissionContext) DecodeSpec(v any) error { return a.c.DecodeSpec(v) }

// DecodeBody decodes the object into v, as [Context.DecodeBody].
func (a *AdmissionContext) DecodeBody(v any) error { return a.c.DecodeBody(v) }

// Operation is CREATE, UPDATE, DELETE or CONNECT.
func (a *AdmissionContext) Operation() string { return a.admission().Operation }

// Subresource is the subresource under review ("" for the object).
func (a *AdmissionContext) Subresource() string { return a.admission().Subresource }

// DryRun says the request will not be persisted: act only on the review.
func (a *AdmissionContext) DryRun() bool { return a.admission().DryRun }

// UserInfo is the requesting user (username, uid, groups, extra).
func (a *AdmissionContext) UserInfo() Object { return a.admission().UserInfo }

// Headers are the webhook request's HTTP headers.
func (a *AdmissionContext) Headers() map[string][]string { return a.admission().Headers }

// Warn adds a warning for the client (kubectl prints it).
func (a *AdmissionContext) Warn(message string) {
	ad := a.admission()
	ad.Warnings = append(ad.Warnings, message)
}

func (a *AdmissionContext) admission() *Admission {
	if ad := a.c.Admission(); ad != nil {
		return ad
	}
	a.c.admission = &Admission{} // called outside a review (a test's request)
	return a.c.admission
}

// Patch is the mutation of a mutate handler; validate handlers must not
// use it.
func (a *AdmissionContext) Patch() *Patch { return a.c.Patch() }

// Param is the handler's [Param] option.
func (a *AdmissionContext) Param() any { return a.c.Param() }

// DecodeParam decodes the handler's [Param] option into v.
func (a *AdmissionContext) DecodeParam(v any) error { return a.c.DecodeParam(v) }

// Index returns the values of an index, by key, at the time of the call.
func (a *AdmissionContext) Index(id string) map[string][]any { return a.c.Index(id) }

// IndexLookup asks the host for the current values of an index under key.
func (a *AdmissionContext) IndexLookup(index string, key any) ([]any, error) {
	return a.c.IndexLookup(index, key)
}

// Memo is the object's memo (on CREATE one for this review only: the
// object has no identity yet).
func (a *AdmissionContext) Memo() Memo { return a.c.Memo() }

// Logger is the handler's logger.
func (a *AdmissionContext) Logger() *slog.Logger { return a.c.Logger() }

// PostEventAbout posts an Event about objects (the one under review may
// not exist yet), as [Context.PostEventAbout].
func (a *AdmissionContext) PostEventAbout(objs []Object, eventType, reason, message string) error {
	return a.c.PostEventAbout(objs, eventType, reason, message)
}

// Client returns a Kubernetes client for a resource, as [Context.Client].
func (a *AdmissionContext) Client(group, version, resource string) Client {
	return a.c.Client(group, version, resource)
}

// Context is the call's deadline as a context.Context, as [Context.Context].
func (a *AdmissionContext) Context() context.Context { return a.c.Context() }

// DaemonContext is what a daemon gets: the object as it was when the
// daemon started (or last saw it), the stop flag, and the host's services.
type DaemonContext struct{ c *Context }

// Handler is the daemon's id.
func (d *DaemonContext) Handler() string { return d.c.Handler() }

// Resource is the resource of the object.
func (d *DaemonContext) Resource() Resource { return d.c.Resource() }

// Body is the whole object.
func (d *DaemonContext) Body() Object { return d.c.Body() }

// Spec is the object's spec.
func (d *DaemonContext) Spec() Object { return d.c.Spec() }

// Meta is the object's metadata.
func (d *DaemonContext) Meta() Object { return d.c.Meta() }

// Status is the object's status.
func (d *DaemonContext) Status() Object { return d.c.Status() }

// Labels are the object's labels.
func (d *DaemonContext) Labels() map[string]string { return d.c.Labels() }

// Annotations are the object's annotations.
func (d *DaemonContext) Annotations() map[string]string { return d.c.Annotations() }

// Name is the object's name.
func (d *DaemonContext) Name() string { return d.c.Name() }

// Namespace is the object's namespace.
func (d *DaemonContext) Namespace() string { return d.c.Namespace() }

// UID is the object's uid.
func (d *DaemonContext) UID() string { return d.c.UID() }

// DecodeSpec decodes the object's spec into v, as [Context.DecodeSpec].
func (d *DaemonContext) DecodeSpec(v any) error { return d.c.DecodeSpec(v) }

// DecodeStatus decodes the object's status into v.
func (d *DaemonContext) DecodeStatus(v any) error { return d.c.DecodeStatus(v) }

// DecodeBody decodes the object into v.
func (d *DaemonContext) DecodeBody(v any) error { return d.c.DecodeBody(v) }

// Retry is 0 on the first run, then 1, 2, ... after failures.
func (d *DaemonContext) Retry() int { return d.c.Retry() }

// Started is when the first run began.
func (d *DaemonContext) Started() time.Time { return d.c.Started() }

// Runtime is the time since the first run began.
func (d *DaemonContext) Runtime() time.Duration { return d.c.Runtime() }

// Param is the handler's [Param] option.
func (d *DaemonContext) Param() any { return d.c.Param() }

// DecodeParam decodes the handler's [Param] option into v.
func (d *DaemonContext) DecodeParam(v any) error { return d.c.DecodeParam(v) }

// Memo is the object's memo.
func (d *DaemonContext) Memo() Memo { return d.c.Memo() }

// Patch is the change the host applies to the object when the daemon
// returns.
func (d *DaemonContext) Patch() *Patch { return d.c.Patch() }

// Index returns the values of an index, by key, at the time of the call.
func (d *DaemonContext) Index(id string) map[string][]any { return d.c.Index(id) }

// IndexLookup asks the host for the current values of an index under key.
func (d *DaemonContext) IndexLookup(index string, key any) ([]any, error) {
	return d.c.IndexLookup(index, key)
}

// Logger is the daemon's logger.
func (d *DaemonContext) Logger() *slog.Logger { return d.c.Logger() }

// PostEvent posts a Kubernetes Event about the object.
func (d *DaemonContext) PostEvent(eventType, reason, message string) error {
	return d.c.PostEvent(eventType, reason, message)
}

// PostEventAbout posts an Event about other objects, as
// [Context.PostEventAbout].
func (d *DaemonContext) PostEventAbout(objs []Object, eventType, reason, message string) error {
	return d.c.PostEventAbout(objs, eventType, reason, message)
}

// Client returns a Kubernetes client for a resource, as [Context.Client].
func (d *DaemonContext) Client(group, version, resource string) Client {
	return d.c.Client(group, version, resource)
}

// Stopped reports whether the daemon is asked to stop.
func (d *DaemonContext) Stopped() bool { return d.c.Stopped() }

// SleepUntilStopped blocks for dur or until the daemon is asked to stop,
// and reports whether it is (Kopf's stopped.wait(dur)).
func (d *DaemonContext) SleepUntilStopped(dur time.Duration) bool {
	return d.c.SleepUntilStopped(dur)
}

// StopReason says why the daemon is asked to stop.
func (d *DaemonContext) StopReason() string { return d.c.StopReason() }

// Context is the daemon's deadline as a context.Context, as
// [Context.Context].
func (d *DaemonContext) Context() context.Context { return d.c.Context() }
