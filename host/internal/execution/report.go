package execution

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Report logs a call's step in Kopf's words, with the object, handler and
// module as attributes, and for changing handlers posts an Event as the
// posting settings say: failures as Warnings, successes as Normal Events
// at level info. stopping is the reason a timer or daemon is being
// stopped ("" otherwise): its failure then is expected and logged as such.
func (e *Executor) Report(ctx context.Context, subj *Subject, h *registry.Handler, step Step, stopping string) {
	if step.Err == nil && h.Kind() == abi.KindIndex && !e.log.Enabled(ctx, slog.LevelDebug) {
		return // an index handler's success, on every watch event: logged at debug only
	}
	attrs := e.attrs(subj, h)
	id := h.ID()
	var ignored *IgnoredError
	succeeded := step.Err == nil || errors.As(step.Err, &ignored)
	switch kind := h.Kind(); {
	case kind.IsActivity():
		attrs = append(attrs, "activity", string(kind))
		switch {
		case succeeded:
			e.log.Info(fmt.Sprintf("Activity handler '%s' succeeded.", id), attrs...)
		case step.Finished:
			e.log.Error(fmt.Sprintf("Activity handler '%s' failed permanently: %s", id, Reason(step.Err)), attrs...)
		default:
			e.log.Error(fmt.Sprintf("Activity handler '%s' failed and will try again in %s: %s", id, step.Delay, Reason(step.Err)), attrs...)
		}
	case kind == abi.KindIndex:
		// Index handlers run on every watch event of every object: no
		// Events, successes at debug.
		switch {
		case succeeded && step.Err == nil:
			e.log.Debug(fmt.Sprintf("Handler '%s' succeeded.", id), attrs...)
		case succeeded:
			e.log.Error(fmt.Sprintf("Handler '%s' failed, which is ignored (the object's values stay): %s", id, Reason(step.Err)), attrs...)
		case step.Finished:
			e.log.Error(fmt.Sprintf("Handler '%s' failed permanently (the object is left out of the index): %s", id, Reason(step.Err)), attrs...)
		default:
			e.log.Error(fmt.Sprintf("Handler '%s' failed and will try again on the object's next change after %s (left out of the index until then): %s", id, step.Delay, Reason(step.Err)), attrs...)
		}
	case kind == abi.KindEvent:
		e.reportEvent(id, step.Err, attrs)
	case kind == abi.KindTimer || kind == abi.KindDaemon:
		switch {
		case succeeded:
			e.log.Debug(fmt.Sprintf("Handler '%s' succeeded.", id), attrs...)
		case stopping != "":
			e.log.Info(fmt.Sprintf("Handler '%s' stopped (%s): %s", id, stopping, Reason(step.Err)), attrs...)
		default:
			e.log.Error(fmt.Sprintf("Handler '%s' failed: %s", id, Reason(step.Err)), attrs...)
		}
	default:
		e.reportChange(ctx, subj, h.Kind(), id, step, attrs)
	}
}

// reportEvent reports an event handler's call in Kopf's words: a success
// at info on every call, a failure at error; never as an Event, and never
// retried, whatever the failure.
func (e *Executor) reportEvent(id string, err error, attrs []any) {
	var ignored *IgnoredError
	var temporary *TemporaryError
	var permanent *PermanentError
	switch {
	case err == nil:
		e.log.Info(fmt.Sprintf("Handler '%s' succeeded.", id), attrs...)
	case errors.As(err, &ignored):
		e.log.Error(fmt.Sprintf("Handler '%s' failed with an exception and will ignore it: %s", id, Reason(err)), attrs...)
	case errors.As(err, &temporary):
		e.log.Error(fmt.Sprintf("Handler '%s' failed temporarily: %s", id, Reason(err)), attrs...)
	case errors.As(err, &permanent):
		e.log.Error(fmt.Sprintf("Handler '%s' failed permanently: %s", id, Reason(err)), attrs...)
	default:
		e.log.Error(fmt.Sprintf("Handler '%s' failed: %s", id, Reason(err)), attrs...)
	}
}

// reportChange reports a changing handler's step, with an Event.
func (e *Executor) reportChange(ctx context.Context, subj *Subject, kind abi.HandlerKind, id string, step Step, attrs []any) {
	p := e.opts.Settings.Posting
	if _, ok := step.Err.(*ChildrenRetryError); ok {
		e.log.Debug(fmt.Sprintf("Handler '%s' has unfinished sub-handlers. Will retry soon.", id), attrs...)
		return
	}
	if step.Err == nil {
		msg := fmt.Sprintf("Handler '%s' succeeded.", id)
		e.log.Info(msg, attrs...)
		if p.Enabled && p.Level <= settings.LevelInfo {
			e.postEvent(ctx, subj, abi.EventRequest{Type: "Normal", Reason: "Success", Message: msg})
		}
		return
	}
	msg := fmt.Sprintf("Handler '%s' failed permanently: %s", id, Reason(step.Err))
	if !step.Finished {
		msg = fmt.Sprintf("Handler '%s' failed and will try again in %s: %s", id, step.Delay, Reason(step.Err))
	}
	msg += deletionNote(subj, kind, e.opts.Settings.Persistence.Finalizer, step.Finished)
	e.log.Error(msg, attrs...)
	if p.Enabled {
		e.postEvent(ctx, subj, abi.EventRequest{Type: "Warning", Reason: "Error", Message: msg})
	}
}

// postEvent posts an Event about the subject; the cluster client logs its
// own failures.
func (e *Executor) postEvent(ctx context.Context, subj *Subject, ev abi.EventRequest) {
	if e.opts.Cluster == nil || subj == nil {
		return
	}
	_ = e.opts.Cluster.PostEvent(ctx, subj.Ref(), ev)
}
