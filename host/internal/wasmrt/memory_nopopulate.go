//go:build unix && !linux

package wasmrt

// populate leaves the pages of b to be faulted in on first touch: only
// Linux can populate a range in one call.
func populate([]byte) error { return nil }
