package wasmrt

import (
	"log/slog"
	"time"
)

// Options configure a [Runtime]. The zero value is usable: every field left
// zero takes the default documented on it.
type Options struct {
	// CacheDir keeps compiled native code on disk, so that loading a module
	// that was loaded before (by this or an earlier process) skips the
	// compilation. Empty: compile in memory only. The directory must be
	// private to the host (wazero does not sign what it caches).
	CacheDir string

	// Timeout bounds one call of a guest export, including the host
	// functions it calls; when it passes the guest is stopped (its loop
	// checks trap), the call fails with [KindTimeout] and the instance is
	// discarded. Default 60s.
	Timeout time.Duration

	// MemoryLimitPages caps the linear memory of an instance, in 64 KiB wasm
	// pages. Default 2048 (128 MiB). A Go guest needs a few MiB at start.
	MemoryLimitPages uint32

	// MaxOutputBytes caps the size of a guest's output (a response or a
	// manifest); a larger one fails with [KindOutputTooLarge]. Default 4 MiB,
	// above the largest object the API server stores.
	MaxOutputBytes int

	// PoolSize is the most instances of one module alive at once, i.e. the
	// most concurrent calls into it; more callers wait. Default 4.
	PoolSize int

	// GuestGOGC is the GOGC environment variable of every instance, which
	// the Go runtime of a standard-Go (or TinyGo) guest reads at start;
	// other guests ignore it. A guest's linear memory only grows, in the
	// steps its heap took, so a lower GOGC keeps instances smaller: 50
	// keeps an instance of the kopfexample module at 6.3 MiB instead of
	// 8.3 MiB after 3,000 calls, at no measurable CPU cost (25 costs about
	// 10 %). Default 50; -1 leaves GOGC unset (the guest's default, 100).
	GuestGOGC int

	// Logger receives the guests' log records (with the module, handler and
	// object added) and the runtime's own messages. Default slog.Default().
	Logger *slog.Logger

	// noInterrupt compiles without the loop checks that let a timeout stop
	// a running guest. For benchmarks that measure what the checks cost;
	// never set it elsewhere: a looping guest would hold a thread forever.
	noInterrupt bool
}

// Defaults of [Options].
const (
	DefaultTimeout          = 60 * time.Second
	DefaultMemoryLimitPages = 2048
	DefaultMaxOutputBytes   = 4 << 20
	DefaultPoolSize         = 4
	DefaultGuestGOGC        = 50
)

// withDefaults returns o with every unset field set to its default.
func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MemoryLimitPages == 0 {
		o.MemoryLimitPages = DefaultMemoryLimitPages
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.PoolSize <= 0 {
		o.PoolSize = DefaultPoolSize
	}
	if o.GuestGOGC == 0 {
		o.GuestGOGC = DefaultGuestGOGC
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}
