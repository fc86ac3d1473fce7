package execution

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
)

func delay(s float64) *float64 { return &s }

func TestLimitsFor(t *testing.T) {
	tests := []struct {
		name string
		spec abi.HandlerSpec
		want Limits
	}{
		{"changing defaults", abi.HandlerSpec{ID: "fn", Kind: abi.KindCreate},
			Limits{Handler: "fn", Errors: abi.ErrorsTemporary, Backoff: time.Minute, DefaultDelay: time.Minute}},
		{"event defaults to ignored", abi.HandlerSpec{ID: "ev", Kind: abi.KindEvent},
			Limits{Handler: "ev", Errors: abi.ErrorsIgnored, Backoff: time.Minute, DefaultDelay: time.Minute}},
		{"webhook defaults to permanent", abi.HandlerSpec{ID: "v", Kind: abi.KindValidate},
			Limits{Handler: "v", Errors: abi.ErrorsPermanent, Backoff: time.Minute, DefaultDelay: time.Minute}},
		{"options", abi.HandlerSpec{ID: "fn", Kind: abi.KindUpdate, Options: abi.Options{Errors: abi.ErrorsPermanent, Timeout: 1.5, Retries: 3, Backoff: 10}},
			Limits{Handler: "fn", Errors: abi.ErrorsPermanent, Timeout: 1500 * time.Millisecond, Retries: 3, Backoff: 10 * time.Second, DefaultDelay: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LimitsFor(tt.spec, time.Minute); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	t0 := ts("2026-01-01T00:00:00Z")
	now := t0.Add(10 * time.Second)
	fresh := persistence.Record{Purpose: abi.ReasonCreate}
	second := persistence.Record{Started: t0, Purpose: abi.ReasonCreate, Retries: 1, Delayed: t0.Add(5 * time.Second), Message: "earlier"}
	base := Limits{Handler: "fn", Errors: abi.ErrorsTemporary, Backoff: 60 * time.Second, DefaultDelay: 60 * time.Second}
	with := func(change func(*Limits)) Limits { l := base; change(&l); return l }
	tests := []struct {
		name     string
		limits   Limits
		prev     persistence.Record
		out      abi.Outcome
		callErr  error
		finished bool
		success  bool
		deliver  bool
		delay    time.Duration
		errType  any
		message  string
	}{
		{name: "success", limits: base, prev: fresh, out: abi.Outcome{Status: abi.OutcomeSuccess}, finished: true, success: true, deliver: true},
		{name: "success after retries clears the message", limits: base, prev: second, out: abi.Outcome{Status: abi.OutcomeSuccess}, finished: true, success: true, deliver: true},
		{name: "temporary with delay", limits: base, prev: fresh, out: abi.Outcome{Status: abi.OutcomeTemporary, Message: "not ready", Delay: delay(15)},
			delay: 15 * time.Second, errType: &TemporaryError{}, message: "not ready"},
		{name: "temporary without delay uses the default", limits: base, prev: fresh, out: abi.Outcome{Status: abi.OutcomeTemporary, Message: "x"},
			delay: 60 * time.Second, errType: &TemporaryError{}, message: "x"},
		{name: "temporary with zero delay retries at once", limits: base, prev: fresh, out: abi.Outcome{Status: abi.OutcomeTemporary, Delay: delay(0)},
			delay: 0, errType: &TemporaryError{}},
		{name: "permanent", limits: base, prev: fresh, out: abi.Outcome{Status: abi.OutcomePermanent, Message: "broken"},
			finished: true, errType: &PermanentError{}, message: "broken"},
		{name: "arbitrary, temporary mode, backoff", limits: with(func(l *Limits) { l.Backoff = 7 * time.Second }), prev: fresh,
			out: abi.Outcome{Status: abi.OutcomeError, Message: "boom"}, delay: 7 * time.Second, errType: &TemporaryError{}, message: "boom"},
		{name: "arbitrary, permanent mode", limits: with(func(l *Limits) { l.Errors = abi.ErrorsPermanent }), prev: fresh,
			out: abi.Outcome{Status: abi.OutcomeError, Message: "boom"}, finished: true, errType: &PermanentError{}, message: "boom"},
		{name: "arbitrary, ignored mode counts as success without result", limits: with(func(l *Limits) { l.Errors = abi.ErrorsIgnored }), prev: fresh,
			out: abi.Outcome{Status: abi.OutcomeError, Message: "boom"}, finished: true, success: true, errType: &IgnoredError{}},
		{name: "call error is arbitrary", limits: base, prev: fresh, callErr: errors.New("wasm trap"),
			delay: 60 * time.Second, errType: &TemporaryError{}, message: "wasm trap"},
		{name: "unknown status is arbitrary", limits: base, prev: fresh, out: abi.Outcome{Status: "weird"},
			delay: 60 * time.Second, errType: &TemporaryError{}, message: "unknown outcome status[weird]"},
		{name: "temporary would time out", limits: with(func(l *Limits) { l.Timeout = 20 * time.Second }), prev: second,
			out: abi.Outcome{Status: abi.OutcomeTemporary, Message: "slow", Delay: delay(10)}, finished: true,
			errType: &HandlerTimeoutError{}, message: "failed temporarily but will time out after 20s: slow"},
		{name: "temporary just within the timeout", limits: with(func(l *Limits) { l.Timeout = 21 * time.Second }), prev: second,
			out: abi.Outcome{Status: abi.OutcomeTemporary, Message: "slow", Delay: delay(10)}, delay: 10 * time.Second, errType: &TemporaryError{}, message: "slow"},
		{name: "temporary would exceed retries", limits: with(func(l *Limits) { l.Retries = 2 }), prev: second,
			out: abi.Outcome{Status: abi.OutcomeTemporary, Message: "again", Delay: delay(1)}, finished: true,
			errType: &HandlerRetriesError{}, message: "will exceed 2 retries: again"},
		{name: "arbitrary would exceed retries", limits: with(func(l *Limits) { l.Retries = 1 }), prev: fresh,
			out: abi.Outcome{Status: abi.OutcomeError, Message: "boom"}, finished: true, errType: &HandlerRetriesError{}, message: "will exceed 1 retries: boom"},
		{name: "arbitrary would time out by its backoff", limits: with(func(l *Limits) { l.Timeout = 30 * time.Second }), prev: second,
			out: abi.Outcome{Status: abi.OutcomeError, Message: "boom"}, finished: true, errType: &HandlerTimeoutError{}, message: "will time out after 30s: boom"},
		{name: "permanent mode ignores the look-ahead", limits: with(func(l *Limits) { l.Errors = abi.ErrorsPermanent; l.Retries = 1 }), prev: fresh,
			out: abi.Outcome{Status: abi.OutcomeError, Message: "boom"}, finished: true, errType: &PermanentError{}, message: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step := Classify(tt.limits, tt.prev, now, tt.out, tt.callErr)
			rec := step.Record
			if step.Finished != tt.finished || rec.Success != tt.success || rec.Failure != (tt.finished && !tt.success) || step.Deliver != tt.deliver {
				t.Errorf("finished=%v success=%v failure=%v deliver=%v", step.Finished, rec.Success, rec.Failure, step.Deliver)
			}
			if rec.Retries != tt.prev.Retries+1 {
				t.Errorf("retries = %d", rec.Retries)
			}
			if want := tt.prev.Started; !want.IsZero() && !rec.Started.Equal(want) || want.IsZero() && !rec.Started.Equal(now) {
				t.Errorf("started = %v", rec.Started)
			}
			if rec.Purpose != tt.prev.Purpose {
				t.Errorf("purpose = %q", rec.Purpose)
			}
			if tt.finished {
				if !rec.Stopped.Equal(now) || !rec.Delayed.IsZero() {
					t.Errorf("stopped=%v delayed=%v", rec.Stopped, rec.Delayed)
				}
			} else if step.Delay != tt.delay || !rec.Delayed.Equal(now.Add(tt.delay)) || !rec.Stopped.IsZero() {
				t.Errorf("delay=%v delayed=%v stopped=%v", step.Delay, rec.Delayed, rec.Stopped)
			}
			if !sameType(step.Err, tt.errType) {
				t.Errorf("err = %T %v, want %T", step.Err, step.Err, tt.errType)
			}
			if !strings.Contains(rec.Message, tt.message) || (tt.message == "" && rec.Message != "") {
				t.Errorf("message = %q, want %q", rec.Message, tt.message)
			}
		})
	}
}

func sameType(err error, want any) bool {
	switch want.(type) {
	case nil:
		return err == nil
	case *TemporaryError:
		_, ok := err.(*TemporaryError)
		return ok
	case *PermanentError:
		_, ok := err.(*PermanentError)
		return ok
	case *HandlerTimeoutError:
		_, ok := err.(*HandlerTimeoutError)
		return ok
	case *HandlerRetriesError:
		_, ok := err.(*HandlerRetriesError)
		return ok
	case *IgnoredError:
		_, ok := err.(*IgnoredError)
		return ok
	}
	return false
}

func TestCheckBeforeCalling(t *testing.T) {
	t0 := ts("2026-01-01T00:00:00Z")
	rec := persistence.Record{Started: t0, Retries: 3, Purpose: abi.ReasonUpdate}
	tests := []struct {
		name    string
		limits  Limits
		now     time.Time
		failed  bool
		errType any
		message string
	}{
		{"no limits", Limits{Handler: "fn"}, t0.Add(time.Hour), false, nil, ""},
		{"timed out", Limits{Handler: "fn", Timeout: time.Minute}, t0.Add(time.Minute), true, &HandlerTimeoutError{}, "has timed out after 1m0s"},
		{"within the timeout", Limits{Handler: "fn", Timeout: time.Minute}, t0.Add(59 * time.Second), false, nil, ""},
		{"retries used up", Limits{Handler: "fn", Retries: 3}, t0, true, &HandlerRetriesError{}, "has exceeded 3 retries"},
		{"retries left", Limits{Handler: "fn", Retries: 4}, t0, false, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step, failed := Check(tt.limits, rec, tt.now)
			if failed != tt.failed {
				t.Fatalf("failed = %v", failed)
			}
			if !failed {
				return
			}
			if !step.Finished || !step.Record.Failure || step.Deliver || !sameType(step.Err, tt.errType) ||
				!strings.Contains(step.Record.Message, tt.message) {
				t.Errorf("step = %+v, err %v", step, step.Err)
			}
			var perm interface{ Unwrap() error }
			if !errors.As(step.Err, &perm) {
				t.Errorf("limit errors unwrap")
			}
		})
	}
}

// ts parses an RFC 3339 time.
func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Reason says a failure's message once, without the handler and the
// consequence that the log line around it names.
func TestReason(t *testing.T) {
	tmp := &TemporaryError{Handler: "fn", Message: "kopf: patch pods ns/x: refused (422 Invalid from the cluster)", Delay: time.Minute}
	tests := []struct {
		err  error
		want string
	}{
		{tmp, "kopf: patch pods ns/x: refused (422 Invalid from the cluster)"},
		{&PermanentError{Handler: "fn", Message: "no"}, "no"},
		{&HandlerTimeoutError{Handler: "fn", Timeout: time.Minute, Ahead: tmp}, tmp.Message + "; the next attempt would pass its timeout of 1m0s"},
		{&HandlerTimeoutError{Handler: "fn", Runtime: time.Minute}, "timed out after 1m0s"},
		{&HandlerRetriesError{Handler: "fn", Retries: 3, Ahead: tmp}, tmp.Message + "; the next attempt would exceed its 3 retries"},
		{&HandlerRetriesError{Handler: "fn", Attempts: 4}, "exceeded 4 retries"},
		{&IgnoredError{Handler: "fn", Err: errors.New("boom")}, "boom"},
		{errors.New("wasm trap"), "wasm trap"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := Reason(tt.err); got != tt.want {
			t.Errorf("Reason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
