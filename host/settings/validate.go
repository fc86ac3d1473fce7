package settings

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Error is one setting that cannot work: Key is its name as in a config
// file ("execution.workers").
type Error struct {
	Key, Problem string
}

func (e *Error) Error() string { return e.Key + ": " + e.Problem }

// Errors are the settings that cannot work, in field order; the message is
// one line.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap lets errors.As find each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// dnsSubdomain is what an object name or a domain may be.
var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// Validate reports every setting that cannot work, as [Errors] naming each
// key and its allowed range; nil if all can. Each group checks its own
// fields (its validate method, beside its type).
func (s Settings) Validate() error {
	var v validator
	s.Persistence.validate(&v)
	s.Execution.validate(&v)
	s.Posting.validate(&v)
	s.Queueing.validate(&v)
	s.Watching.validate(&v)
	s.Wasm.validate(&v)
	s.Kube.validate(&v)
	s.Modules.validate(&v)
	s.Process.validate(&v)
	s.Admission.validate(&v)
	s.Sharding.validate(&v)
	s.Observability.validate(&v)
	s.Peering.validate(&v)
	s.LeaderElection.validate(&v)
	s.Recording.validate(&v)
	s.Isolation.validate(&v)
	s.Rollouts.validate(&v)
	return v.err()
}

// validator gathers the errors of one Validate, in the order found.
type validator struct{ errs Errors }

func (v *validator) fail(key, format string, args ...any) {
	v.errs = append(v.errs, &Error{Key: key, Problem: fmt.Sprintf(format, args...)})
}

func (v *validator) positive(key string, d time.Duration) {
	if d <= 0 {
		v.fail(key, "must be above 0, got %s", d)
	}
}

func (v *validator) notNegative(key string, d time.Duration) {
	if d < 0 {
		v.fail(key, "must be 0 or more, got %s", d)
	}
}

func (v *validator) notNegativeList(key string, ds []time.Duration) {
	for i, d := range ds {
		if d < 0 {
			v.fail(fmt.Sprintf("%s[%d]", key, i), "must be 0 or more, got %s", d)
		}
	}
}

func (v *validator) atLeast(key string, n, least int) {
	if n < least {
		v.fail(key, "must be at least %d, got %d", least, n)
	}
}

func (v *validator) err() error {
	if len(v.errs) == 0 {
		return nil
	}
	return v.errs
}
