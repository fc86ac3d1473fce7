package kube

import (
	"log/slog"
	"os"
	"time"
)

// Options tune a [Client]. The zero value is usable: [New] fills every
// unset field from [Options.withDefaults].
type Options struct {
	// QPS and Burst are the client-side rate limit on requests to the API
	// server (a token bucket shared by every request of the Client), on
	// when QPS is above zero. Default (0 or negative): no limit, as in
	// host/settings, Kopf and controller-runtime; the server's priority and
	// fairness still apply. Burst defaults to twice the QPS.
	QPS   float32
	Burst int

	// UserAgent is sent with every request. Default "kopf-wasm".
	UserAgent string

	// FieldManager names the host in managedFields for its own writes and
	// for guest writes that do not name one. Default "kopf-wasm".
	FieldManager string

	// RequestTimeout bounds one request (not a watch). Default 30s.
	RequestTimeout time.Duration

	// Backoffs are the waits between attempts of a request that failed
	// transiently ([ErrUnavailable]); their count is the number of retries.
	// Nil means Kopf's: 1, 1, 2, 3, 5, 8, 13, 21 seconds; an empty non-nil
	// slice turns retries off.
	Backoffs []time.Duration

	// DiscoveryRefresh is the shortest time between two discovery refreshes
	// triggered by a resource name that is not in the cache, so that a
	// module asking again and again for a kind the cluster does not serve
	// does not cost a discovery round each time. Default 2s.
	DiscoveryRefresh time.Duration

	// EventComponent and EventInstance fill reportingComponent and
	// reportingInstance (and source) of posted Events. Defaults "kopf-wasm"
	// and the host name.
	EventComponent string
	EventInstance  string

	// EventNamespace is where Events about cluster-scoped objects go, as
	// Kopf does. Default "default".
	EventNamespace string

	// KeepManagedFields keeps metadata.managedFields in the watch cache and
	// in the objects passed to handlers. By default they are dropped: they
	// are often the largest part of an object and handlers rarely need them.
	KeepManagedFields bool

	// Logger receives warnings (watch errors, failed Events, retries).
	// Default slog.Default().
	Logger *slog.Logger
}

// kopfBackoffs are Kopf's settings.networking.error_backoffs.
var kopfBackoffs = []time.Duration{
	1 * time.Second, 1 * time.Second, 2 * time.Second, 3 * time.Second,
	5 * time.Second, 8 * time.Second, 13 * time.Second, 21 * time.Second,
}

// withDefaults returns o with every unset field set to its default.
func (o Options) withDefaults() Options {
	if o.QPS <= 0 {
		o.QPS = -1
	}
	if o.QPS > 0 && o.Burst <= 0 {
		o.Burst = max(1, int(2*o.QPS))
	}
	if o.UserAgent == "" {
		o.UserAgent = "kopf-wasm"
	}
	if o.FieldManager == "" {
		o.FieldManager = "kopf-wasm"
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	if o.Backoffs == nil {
		o.Backoffs = kopfBackoffs
	}
	if o.DiscoveryRefresh <= 0 {
		o.DiscoveryRefresh = 2 * time.Second
	}
	if o.EventComponent == "" {
		o.EventComponent = "kopf-wasm"
	}
	if o.EventInstance == "" {
		o.EventInstance, _ = os.Hostname()
	}
	if o.EventNamespace == "" {
		o.EventNamespace = "default"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}
