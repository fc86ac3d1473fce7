package kopf

import (
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Option tunes one handler: its id, filters and Kopf's handler options. An
// option that does not apply to the handler's kind (say [Interval] on a
// create handler) is a registration mistake, reported by the manifest.
type Option struct {
	name  string
	kinds []abi.HandlerKind // nil: every kind
	apply func(*handler) error
}

func (o Option) appliesTo(k abi.HandlerKind) bool {
	return o.kinds == nil || slices.Contains(o.kinds, k)
}

// Groups of kinds, after Kopf's decorator signatures.
var (
	resourceKinds = []abi.HandlerKind{abi.KindCreate, abi.KindUpdate, abi.KindDelete, abi.KindResume,
		abi.KindField, abi.KindEvent, abi.KindTimer, abi.KindDaemon, abi.KindIndex, abi.KindValidate, abi.KindMutate}
	errorKinds = []abi.HandlerKind{abi.KindCreate, abi.KindUpdate, abi.KindDelete, abi.KindResume,
		abi.KindField, abi.KindTimer, abi.KindDaemon, abi.KindIndex, abi.KindStartup, abi.KindCleanup, abi.KindProbe}
	oldNewKinds  = []abi.HandlerKind{abi.KindUpdate, abi.KindField}
	webhookKinds = []abi.HandlerKind{abi.KindValidate, abi.KindMutate}
)

func option(name string, kinds []abi.HandlerKind, apply func(*handler) error) Option {
	return Option{name: name, kinds: kinds, apply: apply}
}

func set(name string, kinds []abi.HandlerKind, apply func(*handler)) Option {
	return option(name, kinds, func(h *handler) error { apply(h); return nil })
}

// ID sets the handler's id; by default it is the function's name. With a
// [Field], "/<field>" is appended, as in Kopf.
func ID(id string) Option {
	return set("ID", nil, func(h *handler) { h.spec.ID = id })
}

// Param is passed back to the handler in [Context.Param].
func Param(v any) Option {
	return option("Param", nil, func(h *handler) error {
		raw, err := json.Marshal(v)
		h.spec.Options.Param = raw
		return err
	})
}

// ErrorsMode is what an arbitrary error of a handler means.
type ErrorsMode = abi.ErrorsMode

// Errors modes, as Kopf's kopf.ErrorsMode.
const (
	ErrorsIgnored   = abi.ErrorsIgnored
	ErrorsTemporary = abi.ErrorsTemporary
	ErrorsPermanent = abi.ErrorsPermanent
)

// Errors sets what an arbitrary error means (temporary by default).
func Errors(mode ErrorsMode) Option {
	return set("Errors", errorKinds, func(h *handler) { h.spec.Options.Errors = mode })
}

// Retries limits the attempts of the handler.
func Retries(n int) Option {
	return set("Retries", errorKinds, func(h *handler) { h.spec.Options.Retries = n })
}

// Timeout limits the time since the first attempt.
func Timeout(d time.Duration) Option {
	return set("Timeout", errorKinds, func(h *handler) { h.spec.Options.Timeout = d.Seconds() })
}

// Backoff is the delay before retrying after an arbitrary error.
func Backoff(d time.Duration) Option {
	return set("Backoff", errorKinds, func(h *handler) { h.spec.Options.Backoff = d.Seconds() })
}

// Optional makes a delete handler run without a finalizer.
func Optional() Option {
	return set("Optional", []abi.HandlerKind{abi.KindDelete}, func(h *handler) { h.spec.Options.Optional = true })
}

// Deleted makes a resume handler run on objects marked for deletion too.
func Deleted() Option {
	return set("Deleted", []abi.HandlerKind{abi.KindResume}, func(h *handler) { h.spec.Options.Deleted = true })
}

// Interval is the period of a timer; without it (and without [Idle]) the
// timer runs once.
func Interval(d time.Duration) Option {
	return set("Interval", []abi.HandlerKind{abi.KindTimer}, func(h *handler) { h.spec.Options.Interval = d.Seconds() })
}

// Idle runs a timer only after the object has not changed for d.
func Idle(d time.Duration) Option {
	return set("Idle", []abi.HandlerKind{abi.KindTimer}, func(h *handler) { h.spec.Options.Idle = d.Seconds() })
}

// Sharp keeps a timer on its interval's grid regardless of run time.
func Sharp() Option {
	return set("Sharp", []abi.HandlerKind{abi.KindTimer}, func(h *handler) { h.spec.Options.Sharp = true })
}

// InitialDelay delays the first run of a timer or daemon.
func InitialDelay(d time.Duration) Option {
	return set("InitialDelay", []abi.HandlerKind{abi.KindTimer, abi.KindDaemon},
		func(h *handler) { h.spec.Options.InitialDelay = d.Seconds() })
}

// InitialDelayFunc computes the initial delay of a timer or daemon from
// the object (Kopf's callable initial_delay): the host calls fn once,
// before the first run for each object. fn must only look; a panic or a
// negative delay makes the host log it and start at once.
func InitialDelayFunc(fn func(ctx *Context) time.Duration) Option {
	return option("InitialDelayFunc", []abi.HandlerKind{abi.KindTimer, abi.KindDaemon}, func(h *handler) error {
		if fn == nil {
			return errors.New("nil function")
		}
		h.initialDelay = fn
		h.spec.Options.InitialDelayCallback = true
		return nil
	})
}

// CancellationBackoff is how long a stopped daemon may finish gracefully.
func CancellationBackoff(d time.Duration) Option {
	return set("CancellationBackoff", []abi.HandlerKind{abi.KindDaemon},
		func(h *handler) { h.spec.Options.CancellationBackoff = d.Seconds() })
}

// CancellationTimeout is how long to wait for a cancelled daemon before
// abandoning it.
func CancellationTimeout(d time.Duration) Option {
	return set("CancellationTimeout", []abi.HandlerKind{abi.KindDaemon},
		func(h *handler) { h.spec.Options.CancellationTimeout = d.Seconds() })
}

// CancellationPolling is how often a daemon that will not exit, and has no
// CancellationTimeout to close it, is checked after its
// CancellationBackoff: each check logs that it still runs (the object
// keeps its finalizer). Default: the host's
// execution.cancellationPolling, one minute.
func CancellationPolling(d time.Duration) Option {
	return set("CancellationPolling", []abi.HandlerKind{abi.KindDaemon},
		func(h *handler) { h.spec.Options.CancellationPolling = d.Seconds() })
}

// Operations limits a webhook to CREATE, UPDATE, DELETE or CONNECT.
func Operations(ops ...string) Option {
	return option("Operations", webhookKinds, func(h *handler) error {
		if len(ops) == 0 {
			return errors.New("no operations (omit the option for all)")
		}
		h.spec.Options.Operations = ops
		return nil
	})
}

// Subresource limits a webhook to a subresource ("*" for all).
func Subresource(s string) Option {
	return set("Subresource", webhookKinds, func(h *handler) { h.spec.Options.Subresource = s })
}

// Persistent keeps the webhook configured when the operator exits.
func Persistent() Option {
	return set("Persistent", webhookKinds, func(h *handler) { h.spec.Options.Persistent = true })
}

// SideEffects declares that the webhook has side effects (on dry runs too).
func SideEffects() Option {
	return set("SideEffects", webhookKinds, func(h *handler) { h.spec.Options.SideEffects = true })
}

// IgnoreFailures makes the API server admit when the webhook fails.
func IgnoreFailures() Option {
	return set("IgnoreFailures", webhookKinds, func(h *handler) { h.spec.Options.IgnoreFailures = true })
}

// Versions declares the versions of the CRD (bare names: "v1alpha1", "v1")
// that a convert handler converts between. The host answers a
// ConversionReview from or to any other version with a failure naming
// them, without calling the handler, and warns at load when the CRD serves
// a version not listed. Without it the handler gets every version.
func Versions(versions ...string) Option {
	return option("Versions", []abi.HandlerKind{abi.KindConvert}, func(h *handler) error {
		if len(versions) == 0 {
			return errors.New("no versions (omit the option for all)")
		}
		h.spec.Options.Versions = versions
		return nil
	})
}
