package wasmrt

import (
	"log/slog"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Options configure a [Runtime]. The zero value is usable: every field left
// zero takes its value from settings.Default().Wasm, the one place the
// defaults are written ([OptionsFor] maps the settings to the options).
type Options struct {
	// CacheDir keeps compiled native code on disk, so that loading a module
	// that was loaded before (by this or an earlier process) skips the
	// compilation. Empty: compile in memory only. The directory must be
	// private to the host (wazero does not sign what it caches).
	// settings.Wasm.CacheDir.
	CacheDir string

	// Timeout bounds one call of a guest export, including the host
	// functions it calls; when it passes the guest is stopped (its loop
	// checks trap), the call fails with [KindTimeout] and the instance is
	// discarded. settings.Wasm.CallTimeout.
	Timeout time.Duration

	// MemoryLimitPages caps the linear memory of an instance, in 64 KiB wasm
	// pages. A Go guest needs a few MiB at start. settings.Wasm.MaxMemoryPages.
	MemoryLimitPages uint32

	// MaxOutputBytes caps the size of a guest's output (a response or a
	// manifest); a larger one fails with [KindOutputTooLarge].
	// settings.Wasm.MaxOutputBytes.
	MaxOutputBytes int

	// PoolSize is the most instances of one module alive at once, i.e. the
	// most concurrent calls into it; more callers wait.
	// settings.Wasm.PoolSize.
	PoolSize int
	// RecycleCalls and RecycleBytes replace a pooled instance by a fresh
	// one after that many calls, or after a call that left its linear
	// memory above that many bytes (0: never); see
	// settings.Wasm.RecycleAfterCalls and RecycleAboveBytes.
	RecycleCalls int
	RecycleBytes int64

	// GuestGOGC is the GOGC environment variable of every instance, which
	// the Go runtime of a standard-Go (or TinyGo) guest reads at start;
	// -1 leaves it unset. settings.Wasm.GuestGOGC says why the default is low.
	GuestGOGC int
	// LogRate and LogBurst bound the log records of one call (see
	// settings.Wasm.LogRate); 0: the default; a negative LogRate: unbounded.
	LogRate  float64
	LogBurst int

	// Logger receives the guests' log records (with the module, handler and
	// object added) and the runtime's own messages. Default slog.Default().
	Logger *slog.Logger

	// noInterrupt compiles without the loop checks that let a timeout stop
	// a running guest. For benchmarks that measure what the checks cost;
	// never set it elsewhere: a looping guest would hold a thread forever.
	noInterrupt bool
}

// OptionsFor returns the options that carry out the wasm settings (without
// a Logger).
func OptionsFor(s settings.Wasm) Options {
	o := Options{
		CacheDir: s.CacheDir, Timeout: s.CallTimeout, MemoryLimitPages: s.MaxMemoryPages,
		MaxOutputBytes: s.MaxOutputBytes, PoolSize: s.PoolSize, GuestGOGC: s.GuestGOGC,
		LogRate: s.LogRate, LogBurst: s.LogBurst,
		RecycleCalls: s.RecycleAfterCalls, RecycleBytes: s.RecycleAboveBytes,
	}
	if s.LogRate == 0 {
		o.LogRate = -1 // the settings' 0 is unbounded
	}
	return o
}

// withDefaults returns o with every unset field set from settings.Default().
func (o Options) withDefaults() Options {
	d := OptionsFor(settings.Default().Wasm)
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	if o.MemoryLimitPages == 0 {
		o.MemoryLimitPages = d.MemoryLimitPages
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = d.MaxOutputBytes
	}
	if o.PoolSize <= 0 {
		o.PoolSize = d.PoolSize
	}
	if o.GuestGOGC == 0 {
		o.GuestGOGC = d.GuestGOGC
	}
	if o.LogRate == 0 {
		o.LogRate, o.LogBurst = d.LogRate, d.LogBurst
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}
