package settings

// Recording tunes the record of handler calls the host can write for
// `kopf-wasm replay` (docs/rollouts.md): each call's request, the module's
// outcome, result and patch, and the answers to its host calls, one JSON
// line each, with Secrets' data redacted.
type Recording struct {
	// Path is the file the calls are appended to. Empty: nothing is recorded.
	Path string `json:"path"`
	// MaxBytes bounds the file: a call whose line would pass it is not
	// written, nor is any after it (the host logs that once).
	MaxBytes int64 `json:"maxBytes"`
}

// defaultRecording records nothing; when a path is set, up to 64 MiB.
func defaultRecording() Recording {
	return Recording{MaxBytes: 64 << 20}
}

// validate reports a bound that records nothing.
func (r Recording) validate(v *validator) {
	if r.Path != "" && r.MaxBytes <= 0 {
		v.fail("recording.maxBytes", "must be above 0 when recording.path is set, got %d", r.MaxBytes)
	}
}
