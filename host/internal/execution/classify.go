package execution

import (
	"errors"
	"math"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
)

// Limits are a handler's error options resolved against the host's
// settings: what [Check] and [Classify] need.
type Limits struct {
	// Handler is the handler's id, for messages.
	Handler string
	// Errors is what an arbitrary error means.
	Errors abi.ErrorsMode
	// Timeout, when positive, fails the handler once this long has passed
	// since its first attempt. Zero means no limit.
	Timeout time.Duration
	// Retries, when positive, fails the handler once it made this many
	// attempts. Zero means no limit.
	Retries int
	// Backoff is the retry delay after an arbitrary error.
	Backoff time.Duration
	// DefaultDelay is the retry delay of a temporary error naming none.
	DefaultDelay time.Duration
}

// LimitsFor resolves a handler's options: unset options take the host's
// default backoff (settings.Execution.DefaultBackoff), and the errors mode
// defaults by kind as in Kopf (ignored for event and index handlers,
// permanent for webhooks and conversions, temporary otherwise).
func LimitsFor(spec abi.HandlerSpec, defaultBackoff time.Duration) Limits {
	l := Limits{
		Handler:      spec.ID,
		Errors:       spec.Options.Errors,
		Timeout:      seconds(spec.Options.Timeout),
		Retries:      max(0, spec.Options.Retries),
		Backoff:      defaultBackoff,
		DefaultDelay: defaultBackoff,
	}
	if spec.Options.Backoff > 0 {
		l.Backoff = seconds(spec.Options.Backoff)
	}
	if l.Errors == "" {
		l.Errors = defaultErrorsMode(spec.Kind)
	}
	return l
}

func defaultErrorsMode(kind abi.HandlerKind) abi.ErrorsMode {
	switch {
	case kind == abi.KindEvent || kind == abi.KindIndex:
		return abi.ErrorsIgnored
	case kind.IsWebhook() || kind == abi.KindConvert:
		return abi.ErrorsPermanent
	}
	return abi.ErrorsTemporary
}

// seconds converts the ABI's float seconds; negative and non-finite values
// count as zero.
func seconds(s float64) time.Duration {
	if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}

// Step is what one attempt of a handler leads to.
type Step struct {
	// Record is the handler's new progress record, to put into the State.
	Record persistence.Record
	// Finished is true when the handler is done for this cause, succeeded or
	// failed; otherwise it is due again after Delay.
	Finished bool
	Delay    time.Duration
	// Deliver is true when the call succeeded and its result is to be stored
	// under status.<id>.
	Deliver bool
	// Err classifies a failure for logs and Events: *TemporaryError,
	// *PermanentError, *HandlerTimeoutError, *HandlerRetriesError, or
	// *IgnoredError for an error the handler's mode ignores. nil on success.
	Err error
}

// Check applies the strict limits before a handler is called: once its
// runtime reached the timeout or its attempts the retries limit, it fails
// now without being called. failed is false when the handler may be called.
func Check(l Limits, rec persistence.Record, now time.Time) (step Step, failed bool) {
	runtime := rec.Runtime(now)
	switch {
	case l.Timeout > 0 && runtime >= l.Timeout:
		err := &HandlerTimeoutError{Handler: l.Handler, Timeout: l.Timeout, Runtime: runtime}
		return finish(rec, now, err), true
	case l.Retries > 0 && rec.Retries >= l.Retries:
		err := &HandlerRetriesError{Handler: l.Handler, Retries: l.Retries, Attempts: rec.Retries}
		return finish(rec, now, err), true
	}
	return Step{}, false
}

// Classify is the one place that turns an attempt's end into progress: the
// handler's outcome, or callErr when the call itself failed (a trap, a
// timeout, bad output), which counts as an arbitrary error. prev is the
// record before the attempt. Temporary failures that would pass the timeout
// or the retries limit by the next attempt fail now (Kopf's look-ahead).
func Classify(l Limits, prev persistence.Record, now time.Time, out abi.Outcome, callErr error) Step {
	if callErr != nil {
		return arbitrary(l, prev, now, callErr)
	}
	switch out.Status {
	case abi.OutcomeSuccess:
		step := finish(prev, now, nil)
		step.Deliver = true
		return step
	case abi.OutcomeTemporary:
		delay := l.DefaultDelay
		if out.Delay != nil {
			delay = seconds(*out.Delay)
		}
		return retry(l, prev, now, delay, &TemporaryError{Handler: l.Handler, Message: out.Message, Delay: delay})
	case abi.OutcomePermanent:
		return finish(prev, now, &PermanentError{Handler: l.Handler, Message: out.Message})
	case abi.OutcomeError:
		return arbitrary(l, prev, now, errors.New(out.Message))
	}
	return arbitrary(l, prev, now, &UnknownOutcomeError{Handler: l.Handler, Status: out.Status})
}

// arbitrary applies the handler's errors mode to an arbitrary error.
func arbitrary(l Limits, prev persistence.Record, now time.Time, cause error) Step {
	switch l.Errors {
	case abi.ErrorsIgnored:
		step := finish(prev, now, nil)
		step.Err = &IgnoredError{Handler: l.Handler, Err: cause}
		return step
	case abi.ErrorsPermanent:
		return finish(prev, now, &PermanentError{Handler: l.Handler, Message: cause.Error(), Err: cause})
	}
	return retry(l, prev, now, l.Backoff, &TemporaryError{Handler: l.Handler, Message: cause.Error(), Delay: l.Backoff, Err: cause})
}

// retry schedules the next attempt after delay, unless that attempt would
// pass the timeout or the retries limit: then the handler fails now.
func retry(l Limits, prev persistence.Record, now time.Time, delay time.Duration, err *TemporaryError) Step {
	if l.Timeout > 0 && prev.Runtime(now)+delay >= l.Timeout {
		return finish(prev, now, &HandlerTimeoutError{Handler: l.Handler, Timeout: l.Timeout, Runtime: prev.Runtime(now), Ahead: err})
	}
	if l.Retries > 0 && prev.Retries+1 >= l.Retries {
		return finish(prev, now, &HandlerRetriesError{Handler: l.Handler, Retries: l.Retries, Attempts: prev.Retries + 1, Ahead: err})
	}
	rec := attempted(prev, now)
	rec.Delayed = now.Add(delay).UTC()
	rec.Message = err.Message
	return Step{Record: rec, Delay: delay, Err: err}
}

// finish ends the handler: a success when err is nil, a failure otherwise.
func finish(prev persistence.Record, now time.Time, err error) Step {
	rec := attempted(prev, now)
	if rec.Stopped.IsZero() {
		rec.Stopped = now.UTC()
	}
	rec.Success, rec.Failure = err == nil, err != nil
	if err != nil {
		rec.Message = recordMessage(err)
	}
	return Step{Record: rec, Finished: true, Err: err}
}

// attempted counts one more attempt and clears the previous attempt's
// delay and message.
func attempted(prev persistence.Record, now time.Time) persistence.Record {
	rec := prev
	if rec.Started.IsZero() {
		rec.Started = now.UTC()
	}
	rec.Retries++
	rec.Delayed = time.Time{}
	rec.Message = ""
	rec.Success, rec.Failure = false, false
	return rec
}
