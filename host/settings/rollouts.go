package settings

import "time"

// Rollouts tunes canary and shadow versions of modules (docs/rollouts.md):
// how much a shadow version may cost the serving one, and how often a
// Module resource's status shows each version's figures.
type Rollouts struct {
	// ShadowConcurrency bounds the shadow calls in flight at once, on
	// their own goroutines after the serving call has answered; a call
	// that finds the bound reached is not shadowed (counted as skipped),
	// so a slow shadow never holds back the serving version.
	ShadowConcurrency int `json:"shadowConcurrency"`
	// StatusInterval is how often the status of a Module resource with a
	// canary or a shadow is written with each version's objects, calls,
	// errors and differences. 0: only when the Module changes.
	StatusInterval time.Duration `json:"statusInterval"`
}

// defaultRollouts shadows up to 4 calls at once and writes the status
// every 10 s.
func defaultRollouts() Rollouts {
	return Rollouts{ShadowConcurrency: 4, StatusInterval: 10 * time.Second}
}

// validate reports a bound that shadows nothing and negative intervals.
func (r Rollouts) validate(v *validator) {
	if r.ShadowConcurrency < 1 {
		v.fail("rollouts.shadowConcurrency", "must be at least 1, got %d", r.ShadowConcurrency)
	}
	v.notNegative("rollouts.statusInterval", r.StatusInterval)
}
