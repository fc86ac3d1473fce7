// Package settings holds the host's operator settings, grouped as Kopf's
// OperatorSettings are (persistence, execution, posting, queueing, watching)
// plus the groups Kopf has no need for (wasm, kube).
//
// Embedders and the CLI start from [Default], change what they need, and pass
// the result to the host; [Settings.Validate] reports nonsense before anything
// starts. Every package of the host reads its own group; nothing here talks to
// Kubernetes or wasm. Defaults live in [Default] only.
package settings

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"
)

// Settings are the knobs of one host. The zero value is not meant to be used:
// start from [Default].
type Settings struct {
	Persistence Persistence
	Execution   Execution
	Posting     Posting
	Queueing    Queueing
	Watching    Watching
	Wasm        Wasm
	Kube        Kube
}

// Persistence says where the host keeps its state on the objects. The
// defaults are Kopf's, so that objects handled by Kopf are not seen as new.
type Persistence struct {
	// Prefix of every annotation the host writes: progress records
	// ("<prefix>/<handler-id>") and the diff-base. Default "kopf.zalando.org".
	// A prefix not starting with "kopf." also gets a "<prefix>/kopf-managed"
	// marker, so other Kopf-like operators ignore its annotations.
	Prefix string
	// Finalizer added to objects that have non-optional delete handlers (or,
	// later, timers and daemons). Default "kopf.zalando.org/KopfFinalizerMarker"
	// (not derived from Prefix, as in Kopf).
	Finalizer string
	// DiffBaseKey is the name, under Prefix, of the annotation holding the
	// last handled essence. Default "last-handled-configuration".
	DiffBaseKey string
	// V1Keys also writes Kopf's legacy V1 annotation keys when they differ from
	// the V2 ones (only for long handler ids), as Kopf does by default, so an
	// operator can move back to Kopf. Default true.
	V1Keys bool
	// DiffBaseInStatus keeps the diff-base in status.kopf.last-handled-
	// configuration (Kopf's StatusDiffBaseStorage) instead of the
	// annotation. On resources with the status subresource an update then
	// costs one request instead of two (the diff-base goes with the
	// results). The annotation is still read, so objects Kopf handled are
	// not seen as new, but Kopf's default storage does not read the status:
	// set it to false before moving objects back to Kopf. Default true: the
	// host's own API load comes first.
	DiffBaseInStatus bool
}

// Execution tunes handler calls and their retries.
type Execution struct {
	// DefaultBackoff is the retry delay after an arbitrary error when the
	// handler sets no backoff, and the delay of a temporary error that names
	// none (Kopf's TemporaryError default). Default 60s.
	DefaultBackoff time.Duration
	// Workers is the number of objects processed at once (the bounded worker
	// pool). Default 16.
	Workers int
	// MaxDaemons caps the daemons running at once per module; each holds a
	// wasm instance of its own. A daemon past the cap waits for a slot, and
	// a warning says so. Default 100.
	MaxDaemons int
}

// Posting tunes the Kubernetes Events the host posts about handlers.
type Posting struct {
	// Enabled turns posting of any Event on or off, including those a guest
	// posts explicitly. Default true.
	Enabled bool
	// Level is the minimum severity of the host's own handler-outcome Events:
	// LevelWarning posts failures only, LevelInfo also successes. Events a
	// guest posts explicitly are not filtered by it. Default LevelWarning
	// (Kopf 1.44 no longer posts success messages either; each Event is an
	// API write).
	Level Level
	// ReportingComponent is the Event's reportingComponent and
	// source.component. Default "kopf-wasm".
	ReportingComponent string
	// EventNamePrefix is the Event's metadata.generateName. Default
	// "kopf-event-".
	EventNamePrefix string
}

// Level is the severity of a posted Event.
type Level int

// Levels, in increasing severity.
const (
	LevelInfo Level = iota
	LevelWarning
)

// Queueing tunes the per-object queues.
type Queueing struct {
	// ErrorDelays throttle an object after a framework or API error (not a
	// handler error): the n-th consecutive error waits ErrorDelays[n], and the
	// last value repeats. Default Fibonacci 1s, 1s, 2s, 3s, …, 610s, as Kopf.
	ErrorDelays []time.Duration
}

// Watching tunes the watch streams.
type Watching struct {
	// ServerTimeout is sent as timeoutSeconds on watch requests, so the server
	// closes idle streams and the host reconnects. Default 0: the server's own
	// default.
	ServerTimeout time.Duration
	// ReconnectBackoff is the pause before re-establishing a watch that
	// ended. Default 100ms, as Kopf.
	ReconnectBackoff time.Duration
	// InactivityTimeout restarts a watch on which nothing arrived, not even a
	// bookmark, for this long. Default 70s, as Kopf (bookmarks come about every
	// 60s).
	InactivityTimeout time.Duration
}

// Wasm bounds every handler call.
type Wasm struct {
	// CallTimeout is the longest one guest call may run; the instance is
	// closed when it passes and the call fails with an arbitrary error.
	// Default 30s.
	CallTimeout time.Duration
	// MaxMemoryPages caps a guest's linear memory, in 64 KiB pages. Default
	// 1024 (64 MiB).
	MaxMemoryPages uint32
	// MaxOutputBytes caps the size of a guest's response. Default 4 MiB.
	MaxOutputBytes int
	// PoolSize is the number of instances kept per module; an instance is
	// never shared by two calls at once. Default: one per CPU the Go
	// runtime uses (GOMAXPROCS), at least 2 and at most 4. A call is
	// CPU-bound unless it waits on the host (Kubernetes requests, sleeps),
	// and each instance holds 3-4 MB (a standard-Go guest), so more
	// instances than CPUs cost memory and rarely add throughput; raise it
	// for handlers that spend their time in Kubernetes requests.
	PoolSize int
	// CacheDir holds compiled modules across restarts. Default "": compile
	// in memory only.
	CacheDir string
}

// Kube tunes the host's Kubernetes client.
type Kube struct {
	// QPS and Burst rate-limit requests to the API server (client-go's token
	// bucket) when QPS is above zero. Default QPS -1: no client-side limit,
	// as in Kopf and controller-runtime; the API server's priority and
	// fairness protects it. A limit of 200 would cap a busy host at 200
	// writes per second (the kopfexamples benchmark's create phase needs
	// 4,000 in seconds).
	QPS   float32
	Burst int
	// RequestTimeout bounds every non-watch request. Default 300s, as Kopf.
	RequestTimeout time.Duration
	// ErrorBackoffs are the pauses between retries of a failed request
	// (connection errors, timeouts, 5xx, 429 and 403). Default 1s, 1s, 2s, 3s,
	// 5s, 8s, 13s, 21s, as Kopf; empty means no retries.
	ErrorBackoffs []time.Duration
}

// Default returns the settings with every default in place.
func Default() Settings {
	return Settings{
		Persistence: Persistence{
			Prefix:           "kopf.zalando.org",
			Finalizer:        "kopf.zalando.org/KopfFinalizerMarker",
			DiffBaseKey:      "last-handled-configuration",
			V1Keys:           true,
			DiffBaseInStatus: true,
		},
		Execution: Execution{DefaultBackoff: 60 * time.Second, Workers: 16, MaxDaemons: 100},
		Posting: Posting{
			Enabled:            true,
			Level:              LevelWarning,
			ReportingComponent: "kopf-wasm",
			EventNamePrefix:    "kopf-event-",
		},
		Queueing: Queueing{ErrorDelays: seconds(1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610)},
		Watching: Watching{ReconnectBackoff: 100 * time.Millisecond, InactivityTimeout: 70 * time.Second},
		Wasm: Wasm{
			CallTimeout:    30 * time.Second,
			MaxMemoryPages: 1024,
			MaxOutputBytes: 4 << 20,
			PoolSize:       min(4, max(2, runtime.GOMAXPROCS(0))),
		},
		Kube: Kube{QPS: -1, Burst: 400, RequestTimeout: 300 * time.Second, ErrorBackoffs: seconds(1, 1, 2, 3, 5, 8, 13, 21)},
	}
}

func seconds(values ...int) []time.Duration {
	out := make([]time.Duration, len(values))
	for i, v := range values {
		out[i] = time.Duration(v) * time.Second
	}
	return out
}

// maxPrefixLength keeps "<prefix>/<63-char name>" within the 253 characters
// Kubernetes allows for an annotation key.
const maxPrefixLength = 253 - 63 - 1

// Validate reports every setting that cannot work, joined.
func (s Settings) Validate() error {
	var errs []error
	p := s.Persistence
	switch {
	case p.Prefix == "":
		errs = append(errs, errors.New("persistence.prefix is empty"))
	case len(p.Prefix) > maxPrefixLength || strings.Contains(p.Prefix, "/"):
		errs = append(errs, fmt.Errorf("persistence.prefix[%s] is not a DNS subdomain of at most %d characters", p.Prefix, maxPrefixLength))
	}
	if i := strings.Index(p.Finalizer, "/"); i <= 0 || i == len(p.Finalizer)-1 {
		errs = append(errs, fmt.Errorf("persistence.finalizer[%s] is not a qualified name (domain/name)", p.Finalizer))
	}
	if p.DiffBaseKey == "" {
		errs = append(errs, errors.New("persistence.diffBaseKey is empty"))
	}
	if s.Execution.DefaultBackoff < 0 {
		errs = append(errs, errors.New("execution.defaultBackoff is negative"))
	}
	if s.Execution.Workers < 1 {
		errs = append(errs, errors.New("execution.workers is below 1"))
	}
	if len(s.Queueing.ErrorDelays) == 0 {
		errs = append(errs, errors.New("queueing.errorDelays is empty"))
	}
	if s.Wasm.CallTimeout <= 0 || s.Wasm.MaxMemoryPages == 0 || s.Wasm.MaxOutputBytes <= 0 || s.Wasm.PoolSize < 1 {
		errs = append(errs, errors.New("wasm limits must all be positive"))
	}
	return errors.Join(errs...)
}
