package persistence

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// Record is the progress of one handler for the current cause: Kopf's
// ProgressRecord. A zero time means "not set".
type Record struct {
	// Started is when the first attempt began.
	Started time.Time
	// Stopped is when the handler finished (succeeded or failed for good).
	Stopped time.Time
	// Delayed is when the handler is due again after a temporary failure.
	Delayed time.Time
	// Purpose is the reason of the cause the record belongs to; "" is Kopf's
	// catch-all for records written before purposes existed.
	Purpose abi.Reason
	// Retries counts the attempts made so far.
	Retries int
	// Success and Failure mark a finished handler.
	Success bool
	Failure bool
	// Message is the last error's message.
	Message string
	// Subrefs are the ids of sub-handlers, purged together with the record.
	Subrefs []string
}

// NewRecord starts a record for a handler that is due now.
func NewRecord(purpose abi.Reason, now time.Time) Record {
	return Record{Started: now.UTC(), Purpose: purpose}
}

// Finished reports whether the handler is done for this cause.
func (r Record) Finished() bool { return r.Success || r.Failure }

// Sleeping reports whether an unfinished handler waits for its delay.
func (r Record) Sleeping(now time.Time) bool {
	return !r.Finished() && !r.Delayed.IsZero() && r.Delayed.After(now)
}

// Awakened reports whether the handler is to be called now.
func (r Record) Awakened(now time.Time) bool { return !r.Finished() && !r.Sleeping(now) }

// DueIn is how long until an unfinished handler is due: zero when it is
// awake, the remaining delay when it sleeps. It means nothing once finished.
func (r Record) DueIn(now time.Time) time.Duration {
	if r.Delayed.IsZero() || !r.Delayed.After(now) {
		return 0
	}
	return r.Delayed.Sub(now)
}

// Runtime is the time since the first attempt (zero if that is unknown).
func (r Record) Runtime(now time.Time) time.Duration {
	if r.Started.IsZero() {
		return 0
	}
	return now.Sub(r.Started)
}

// Equal reports whether two records would be stored the same way.
func (r Record) Equal(o Record) bool {
	return r.Started.Equal(o.Started) && r.Stopped.Equal(o.Stopped) && r.Delayed.Equal(o.Delayed) &&
		r.Purpose == o.Purpose && r.Retries == o.Retries && r.Success == o.Success &&
		r.Failure == o.Failure && r.Message == o.Message && slices.Equal(r.sortedSubrefs(), o.sortedSubrefs())
}

func (r Record) sortedSubrefs() []string {
	out := slices.Clone(r.Subrefs)
	slices.Sort(out)
	return slices.Compact(out)
}

// recordJSON fixes the field order and the omissions of Kopf's records:
// unset values are left out, retries/success/failure are always there.
type recordJSON struct {
	Started *string  `json:"started,omitempty"`
	Stopped *string  `json:"stopped,omitempty"`
	Delayed *string  `json:"delayed,omitempty"`
	Purpose *string  `json:"purpose,omitempty"`
	Retries int      `json:"retries"`
	Success bool     `json:"success"`
	Failure bool     `json:"failure"`
	Message *string  `json:"message,omitempty"`
	Subrefs []string `json:"subrefs,omitempty"`
}

// Encode renders the record as Kopf stores it in an annotation: compact JSON
// with Kopf's key order, ASCII only, times as Python's isoformat with
// microseconds and "+00:00".
func (r Record) Encode() (string, error) {
	j := recordJSON{
		Started: formatTime(r.Started), Stopped: formatTime(r.Stopped), Delayed: formatTime(r.Delayed),
		Retries: r.Retries, Success: r.Success, Failure: r.Failure, Subrefs: r.sortedSubrefs(),
	}
	if r.Purpose != "" {
		p := string(r.Purpose)
		j.Purpose = &p
	}
	if r.Message != "" {
		j.Message = &r.Message
	}
	s, err := objects.EncodeASCII(j)
	if err != nil {
		return "", fmt.Errorf("encode progress record: %w", err)
	}
	return s, nil
}

// DecodeRecord parses a stored record (from an annotation's JSON string or
// the legacy status.kopf.progress object).
func DecodeRecord(data []byte) (Record, error) {
	var j struct {
		Started, Stopped, Delayed *string
		Purpose                   *string
		Retries                   *int
		Success, Failure          *bool
		Message                   *string
		Subrefs                   []string
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return Record{}, &CorruptRecordError{Err: err}
	}
	var r Record
	var err error
	for _, f := range []struct {
		dst *time.Time
		src *string
	}{{&r.Started, j.Started}, {&r.Stopped, j.Stopped}, {&r.Delayed, j.Delayed}} {
		if *f.dst, err = parseTime(f.src); err != nil {
			return Record{}, &CorruptRecordError{Err: err}
		}
	}
	r.Purpose = abi.Reason(deref(j.Purpose))
	r.Retries = deref(j.Retries)
	r.Success, r.Failure = deref(j.Success), deref(j.Failure)
	r.Message = deref(j.Message)
	r.Subrefs = j.Subrefs
	return r, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// pyTimeLayout is Python's datetime.isoformat(timespec="microseconds") of an
// aware UTC time, which Kopf writes.
const pyTimeLayout = "2006-01-02T15:04:05.000000-07:00"

func formatTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(pyTimeLayout)
	return &s
}

// parseTime reads the ISO-8601 times Kopf ever wrote: with or without a
// fraction, with an offset, "Z", or none (then UTC), with "." or "," before
// the fraction.
func parseTime(s *string) (time.Time, error) {
	if s == nil || *s == "" {
		return time.Time{}, nil
	}
	v := strings.Replace(strings.Replace(*s, ",", ".", 1), " ", "T", 1)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("unparseable time %q", *s)
}
