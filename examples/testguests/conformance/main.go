// Command conformance is the module of the Kopf conformance suite
// (host/conformance): its handlers on kopf.dev/v1 kopfexamples behave as
// each object asks and report every call in a log record, so that the
// suite can assert exactly which handlers ran, why and at which retry,
// without the handlers changing the objects' essence.
//
// Every call logs the message "call" with the fields reason (the cause;
// "timer" and "daemon" for those), retry, step (the object's spec.step, so
// a test sees which version of the object a call saw) and finalized
// (whether the object carried the host's finalizer); field handlers add old
// and new (JSON) at their field. A daemon also logs "stopped" with the
// reason it was asked to stop.
//
// spec.behave.<handler> (the handler's id up to any "/": create_fn,
// update_fn, field_fn, labels_fn, delete_fn, ...) says what a call does:
//
//	fail:  "temporary", "permanent" or "arbitrary" (an error that is not
//	       a kopf error); empty succeeds
//	until: fail only while retry < until; 0 fails at every retry
//	delay: the TemporaryError's delay, in seconds
//	block: sleep this many seconds first (an object deleted meanwhile)
//
// Successful changing handlers return {"reason": ..., "retry": ...},
// stored under status.<id>; timers and daemons return nothing.
//
// Handlers that only some scenarios want are switched on by an annotation
// on the object (present, any value):
//
//	conf/delete-required   delete_fn (a finalizer is needed)
//	conf/delete-optional   delete_optional_fn (optional: no finalizer)
//	conf/resume            resume_fn
//	conf/resume-deleted    resume_deleted_fn (deleted=True)
//	conf/labels-fn         labels_fn, a field handler on metadata.labels
//	conf/limited           limited_fn, a create handler with retries=2
//	conf/timeout           timeout_fn, a create handler with timeout=2s
//	conf/ignored           ignored_fn, errors=IGNORED
//	conf/strict            strict_fn, errors=PERMANENT
//	conf/timer             timer_fn, a timer with a 1h interval (it runs
//	                       once at once, then sleeps until stopped)
//	conf/daemon            daemon_fn, a daemon that sleeps until stopped
//	conf/subhandlers       sub_fn, a create handler that registers a
//	                       sub-handler per name in spec.subs (ids
//	                       sub_fn/<name>, behaviour key sub_fn-<name>)
//	conf/multi             multi_fn, one function registered as a create,
//	                       an update and a resume handler under one id
//	                       (Kopf's decorators stacked on one function)
//	conf/value             value_fn/spec.flag, an update handler with
//	                       value="on" (the old or the new value)
//	conf/old               old_fn/spec.flag, a field handler with old="on"
//	conf/event             event_fn, an event handler (reason "event"):
//	                       an arbitrary error when spec.behave.event_fn
//	                       has a fail, and no result
//	conf/callable-value    callable_value_fn/spec.flag, a field handler
//	                       whose value filter is a function (the value
//	                       starts with "big") and whose when filter is
//	                       kopf.Not(named "skip")
//
//	conf/stubborn          stubborn_fn, a daemon that keeps running for
//	                       spec.linger seconds after it is asked to stop
//	                       (cancellation_polling=1s, no timeout)
//	conf/delayed-timer     delayed_timer_fn, a timer (interval 1 h) whose
//	                       initial delay is a function: spec.delay seconds
//	conf/selected          selected_fn, a create handler whose resources a
//	                       function chooses (Kopf's callable selector: kind
//	                       KopfExample among kopf.dev's resources)
//	conf/memo              memo_fn, a create and update handler (one id)
//	                       that appends the object's name to the list
//	                       memo["seen"] (the startup handler puts an empty
//	                       list in the operator memo) and returns it
//
// and, on objects annotated conf/callable-annotation,
// callable_annotation_fn, an update handler whose annotation filter on
// conf/callable is a function (the value is "go").
//
// and by labels: matched_create_fn and matched_update_fn run only on
// objects labelled match=yes (the label-filter scenarios).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const group, version, plural = "kopf.dev", "v1", "kopfexamples"

// finalizer is the host's default finalizer.
const finalizer = "kopf.zalando.org/KopfFinalizerMarker"

func on(annotation string) kopf.Option {
	return kopf.Annotations(map[string]any{annotation: kopf.Present})
}

func init() {
	kopf.Module("conformance", "0.1.0")
	kopf.OnCreate(group, version, plural, changing, kopf.ID("create_fn"))
	kopf.OnUpdate(group, version, plural, changing, kopf.ID("update_fn"))
	kopf.OnField(group, version, plural, changing, kopf.ID("field_fn"), kopf.Field("spec.field"))
	kopf.OnField(group, version, plural, changing, kopf.ID("field_gone_fn"), kopf.Field("spec.field"),
		kopf.New(kopf.Absent))
	kopf.OnField(group, version, plural, changing, kopf.ID("labels_fn"), kopf.Field("metadata.labels"),
		on("conf/labels-fn"))
	kopf.OnCreate(group, version, plural, changing, kopf.ID("matched_create_fn"),
		kopf.Labels(map[string]any{"match": "yes"}))
	kopf.OnUpdate(group, version, plural, changing, kopf.ID("matched_update_fn"),
		kopf.Labels(map[string]any{"match": "yes"}))
	kopf.OnCreate(group, version, plural, changing, kopf.ID("limited_fn"), on("conf/limited"), kopf.Retries(2))
	kopf.OnCreate(group, version, plural, changing, kopf.ID("timeout_fn"), on("conf/timeout"),
		kopf.Timeout(2*time.Second))
	kopf.OnCreate(group, version, plural, changing, kopf.ID("ignored_fn"), on("conf/ignored"),
		kopf.Errors(kopf.ErrorsIgnored))
	kopf.OnCreate(group, version, plural, changing, kopf.ID("strict_fn"), on("conf/strict"),
		kopf.Errors(kopf.ErrorsPermanent))
	kopf.OnResume(group, version, plural, changing, kopf.ID("resume_fn"), on("conf/resume"))
	kopf.OnResume(group, version, plural, changing, kopf.ID("resume_deleted_fn"), on("conf/resume-deleted"),
		kopf.Deleted())
	kopf.OnDelete(group, version, plural, changing, kopf.ID("delete_fn"), on("conf/delete-required"))
	kopf.OnDelete(group, version, plural, changing, kopf.ID("delete_optional_fn"), on("conf/delete-optional"),
		kopf.Optional())
	kopf.Timer(group, version, plural, timer, kopf.ID("timer_fn"), on("conf/timer"), kopf.Interval(time.Hour))
	kopf.Daemon(group, version, plural, daemon, kopf.ID("daemon_fn"), on("conf/daemon"))
	kopf.OnEvent(group, version, plural, event, kopf.ID("event_fn"), on("conf/event"))
	kopf.OnCreate(group, version, plural, subParent, kopf.ID("sub_fn"), on("conf/subhandlers"))
	kopf.OnCreate(group, version, plural, changing, kopf.ID("multi_fn"), on("conf/multi"))
	kopf.OnUpdate(group, version, plural, changing, kopf.ID("multi_fn"), on("conf/multi"))
	kopf.OnResume(group, version, plural, changing, kopf.ID("multi_fn"), on("conf/multi"))
	kopf.OnUpdate(group, version, plural, changing, kopf.ID("value_fn"), on("conf/value"),
		kopf.Field("spec.flag"), kopf.Value("on"))
	kopf.OnField(group, version, plural, changing, kopf.ID("old_fn"), on("conf/old"),
		kopf.Field("spec.flag"), kopf.Old("on"))
	kopf.OnUpdate(group, version, plural, changing, kopf.ID("callable_annotation_fn"),
		kopf.Annotations(map[string]any{"conf/callable-annotation": kopf.Present,
			"conf/callable": func(v any, _ *kopf.Context) bool { return v == "go" }}))
	kopf.OnField(group, version, plural, changing, kopf.ID("callable_value_fn"), on("conf/callable-value"),
		kopf.Field("spec.flag"), kopf.Value(func(v any, _ *kopf.Context) bool {
			s, _ := v.(string)
			return strings.HasPrefix(s, "big")
		}),
		kopf.When(kopf.Not(func(ctx *kopf.Context) bool { return ctx.Name() == "skip" })))
	kopf.Daemon(group, version, plural, stubborn, kopf.ID("stubborn_fn"), on("conf/stubborn"),
		kopf.CancellationPolling(time.Second))
	kopf.Timer(group, version, plural, timer, kopf.ID("delayed_timer_fn"), on("conf/delayed-timer"),
		kopf.Interval(time.Hour), kopf.InitialDelayFunc(func(ctx *kopf.Context) time.Duration {
			return time.Duration(number(ctx.Spec(), "delay") * float64(time.Second))
		}))
	kopf.OnCreate(group, "", "", changing, kopf.ID("selected_fn"), on("conf/selected"),
		kopf.SelectResources(func(r kopf.ResourceInfo) bool { return r.Kind == "KopfExample" }))
	kopf.OnStartup(startup)
	kopf.OnCreate(group, version, plural, remember, kopf.ID("memo_fn"), on("conf/memo"))
	kopf.OnUpdate(group, version, plural, remember, kopf.ID("memo_fn"), on("conf/memo"))
}

// startup puts an empty list in the operator memo, which every object's
// memo starts with.
func startup(ctx *kopf.Context) (any, error) {
	ctx.Memo()["seen"] = []any{}
	return nil, nil
}

// remember appends the object's name to memo["seen"] and returns the list.
func remember(ctx *kopf.Context) (any, error) {
	record(ctx, string(ctx.Reason()))
	seen, _ := ctx.Memo()["seen"].([]any)
	seen = append(seen, ctx.Name())
	ctx.Memo()["seen"] = seen
	return map[string]any{"seen": seen}, nil
}

// subParent registers a sub-handler per name in spec.subs, each behaving
// as spec.behave["sub_fn-<name>"] says, and behaves as sub_fn itself.
func subParent(ctx *kopf.Context) (any, error) {
	names, _ := ctx.Spec().Get("subs")
	list, _ := names.([]any)
	for _, n := range list {
		ctx.Subhandler(fmt.Sprint(n), changing)
	}
	return changing(ctx)
}

// isSub tells a sub-handler's id from a field handler's.
func isSub(id string) bool { return strings.HasPrefix(id, "sub_fn/") }

// key is the handler's key in spec.behave: its id without a field suffix.
func key(ctx *kopf.Context) string {
	if isSub(ctx.Handler()) {
		return strings.ReplaceAll(ctx.Handler(), "/", "-")
	}
	id, _, _ := strings.Cut(ctx.Handler(), "/")
	return id
}

// record logs the call for the suite to read back.
func record(ctx *kopf.Context, reason string) {
	list, _ := ctx.Meta()["finalizers"].([]any)
	step, _ := ctx.Spec().Get("step")
	attrs := []any{"reason", reason, "retry", ctx.Retry(), "step", step,
		"finalized", slices.Contains(list, any(finalizer))}
	if strings.Contains(ctx.Handler(), "/") && !isSub(ctx.Handler()) { // a field handler: old and new at its field
		attrs = append(attrs, "old", encode(ctx.Old()), "new", encode(ctx.New()))
	}
	ctx.Logger().Info("call", attrs...)
}

func encode(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// changing is every changing handler: it records the call and behaves as
// spec.behave.<key> says.
func changing(ctx *kopf.Context) (any, error) {
	record(ctx, string(ctx.Reason()))
	b := ctx.Spec().Map("behave").Map(key(ctx))
	if s := number(b, "block"); s > 0 {
		ctx.SleepUntilStopped(time.Duration(s * float64(time.Second)))
	}
	until := number(b, "until")
	if fail := b.String("fail"); fail != "" && (until == 0 || float64(ctx.Retry()) < until) {
		msg := fmt.Sprintf("%s fails at retry %d", ctx.Handler(), ctx.Retry())
		switch fail {
		case "temporary":
			return nil, kopf.TemporaryError{Message: msg, Delay: time.Duration(number(b, "delay") * float64(time.Second))}
		case "permanent":
			return nil, kopf.PermanentError{Message: msg}
		default:
			return nil, errors.New(msg)
		}
	}
	return map[string]any{"reason": string(ctx.Reason()), "retry": ctx.Retry()}, nil
}

// event records the watch event and fails as spec.behave.event_fn says;
// it returns nothing, so it writes nothing.
func event(ctx *kopf.Context) (any, error) {
	record(ctx, "event")
	if fail := ctx.Spec().Map("behave").Map("event_fn").String("fail"); fail != "" {
		return nil, errors.New("event_fn fails")
	}
	return nil, nil
}

// timer records its run; with a one-hour interval it runs once and then
// sleeps until the object goes.
func timer(ctx *kopf.Context) (any, error) {
	record(ctx, "timer")
	return nil, nil
}

// daemon records its start and sleeps until it is asked to stop.
func daemon(ctx *kopf.Context) (any, error) {
	record(ctx, "daemon")
	for !ctx.SleepUntilStopped(time.Hour) {
	}
	ctx.Logger().Info("stopped", "why", ctx.StopReason())
	return nil, nil
}

// stubborn records its start and, once asked to stop, keeps running for
// spec.linger seconds before it returns, as a daemon that does not check
// its stopped flag.
func stubborn(ctx *kopf.Context) (any, error) {
	record(ctx, "daemon")
	for !ctx.SleepUntilStopped(time.Hour) {
	}
	time.Sleep(time.Duration(number(ctx.Spec(), "linger") * float64(time.Second)))
	ctx.Logger().Info("stopped", "why", ctx.StopReason())
	return nil, nil
}

func number(o kopf.Object, key string) float64 {
	v, _ := o.Get(key)
	f, _ := v.(float64)
	return f
}

func main() {}
