package settings

import (
	"runtime"
	"time"
)

// Wasm bounds every handler call.
type Wasm struct {
	// CallTimeout is the longest one guest call may run, including the
	// Kubernetes requests it makes; when it passes the guest is stopped,
	// its instance discarded, and the call fails with an arbitrary error.
	// Daemons run outside it.
	CallTimeout time.Duration `json:"callTimeout"`
	// MaxMemoryPages caps a guest's linear memory, in 64 KiB pages (1 to
	// 65536). A standard-Go guest needs a few MiB.
	MaxMemoryPages uint32 `json:"maxMemoryPages"`
	// MaxOutputBytes caps the size of a guest's response (or manifest); a
	// larger one fails the call. Above the largest object the API server
	// stores.
	MaxOutputBytes int `json:"maxOutputBytes"`
	// PoolSize is the number of instances kept per module; an instance is
	// never shared by two calls at once. The default is one per CPU the Go
	// runtime uses (GOMAXPROCS), at least 2 and at most 4. A call is
	// CPU-bound unless it waits on the host (Kubernetes requests, sleeps),
	// and each instance holds 3-4 MB (a standard-Go guest), so more
	// instances than CPUs cost memory and rarely add throughput; raise it
	// for handlers that spend their time in Kubernetes requests.
	PoolSize int `json:"poolSize"`
	// RecycleAfterCalls replaces an instance by a fresh one after this
	// many calls (0: never), so that what a guest leaks from call to call
	// stays bounded (Kopf #1172: an operator grew from 160 Mi to 6 Gi).
	// A fresh instance costs what a new one does (`BenchmarkLanguages`:
	// ~5 ms for a standard-Go guest, ~1 ms for TinyGo and Python, under
	// 0.2 ms for Rust and AssemblyScript).
	RecycleAfterCalls int `json:"recycleAfterCalls"`
	// RecycleAboveBytes replaces an instance after a call that left its
	// linear memory above this many bytes (0: never): a guest's memory
	// never shrinks, so one large object would otherwise keep its pages
	// for the instance's life. At most the memory limit.
	RecycleAboveBytes int64 `json:"recycleAboveBytes"`
	// CacheDir holds compiled modules across restarts; it must be private
	// to the host. Empty: compile in memory only (`kopf-wasm run` uses
	// $KOPF_WASM_CACHE/wasm, by default ~/.cache/kopf-wasm/wasm).
	CacheDir string `json:"cacheDir"`
	// CacheMaxBytes bounds CacheDir: when the runtime starts, the least
	// recently written compiled modules are removed until the folder holds
	// at most this many bytes (a compiled standard-Go module takes 10-15
	// MB, a Rust or AssemblyScript one well under 1 MB). `kopf-wasm cache
	// prune` applies the same bound on demand. 0: unbounded.
	CacheMaxBytes int64 `json:"cacheMaxBytes"`
	// GuestGOGC is the GOGC environment variable of every instance, which
	// the Go runtime of a standard-Go (or TinyGo) guest reads at start;
	// other guests ignore it. A guest's linear memory only grows, so a lower
	// GOGC keeps instances smaller: 50 keeps an instance of the kopfexample
	// module at 6.3 MiB instead of 8.3 MiB after 3,000 calls, at no
	// measurable CPU cost (25 costs about 10 %). -1 leaves GOGC unset (the
	// guest's default, 100).
	GuestGOGC int `json:"guestGOGC"`
	// LogRate bounds the log records one call may write, in records per
	// second after the first LogBurst: a guest that logs in a loop would
	// otherwise flood the host's log and its disk. Records past the bound
	// are dropped; the first drop of a call is logged once, and how many
	// were dropped when the call ends. A daemon, one long call, gets the
	// rate for all its life. 0 (with LogBurst 0): unbounded.
	LogRate float64 `json:"logRate"`
	// LogBurst is how many log records a call may write at once before
	// LogRate applies.
	LogBurst int `json:"logBurst"`
}

// defaultWasm bounds a call to 30 s and 64 MiB, with one instance per CPU
// (2 to 4).
func defaultWasm() Wasm {
	return Wasm{
		CallTimeout:    30 * time.Second,
		MaxMemoryPages: 1024,
		MaxOutputBytes: 4 << 20,
		PoolSize:       min(4, max(2, runtime.GOMAXPROCS(0))),
		GuestGOGC:      50,
		LogRate:        100,
		LogBurst:       1000,
		CacheMaxBytes:  1 << 30,
	}
}

// maxMemoryPages is the most pages a wasm32 memory can have (4 GiB).
const maxMemoryPages = 65536

// validate reports bounds no guest can run within.
func (m Wasm) validate(v *validator) {
	v.positive("wasm.callTimeout", m.CallTimeout)
	if m.MaxMemoryPages < 1 || m.MaxMemoryPages > maxMemoryPages {
		v.fail("wasm.maxMemoryPages", "must be 1 to %d (64 KiB pages), got %d", maxMemoryPages, m.MaxMemoryPages)
	}
	v.atLeast("wasm.maxOutputBytes", m.MaxOutputBytes, 1)
	v.atLeast("wasm.poolSize", m.PoolSize, 1)
	v.atLeast("wasm.recycleAfterCalls", m.RecycleAfterCalls, 0)
	if limit := int64(m.MaxMemoryPages) * 64 << 10; m.RecycleAboveBytes < 0 || m.RecycleAboveBytes > limit {
		v.fail("wasm.recycleAboveBytes", "must be 0 (never) to the memory limit (%d bytes), got %d", limit, m.RecycleAboveBytes)
	}
	if m.CacheMaxBytes < 0 {
		v.fail("wasm.cacheMaxBytes", "must be 0 (unbounded) or more, got %d", m.CacheMaxBytes)
	}
	if m.GuestGOGC < -1 || m.GuestGOGC == 0 {
		v.fail("wasm.guestGOGC", "must be -1 (unset) or at least 1, got %d", m.GuestGOGC)
	}
	if m.LogRate < 0 || m.LogBurst < 0 || (m.LogRate > 0) != (m.LogBurst > 0) {
		v.fail("wasm.logRate", "logRate and logBurst must both be positive, or both 0 (unbounded), got %g and %d", m.LogRate, m.LogBurst)
	}
}
