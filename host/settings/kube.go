package settings

import "time"

// Kube tunes the host's Kubernetes client.
type Kube struct {
	// QPS and Burst rate-limit requests to the API server (client-go's
	// token bucket) when QPS is above zero. QPS 0 or less: no client-side
	// limit, as in Kopf and controller-runtime; the API server's priority
	// and fairness protects it. A limit of 200 would cap a busy host at 200
	// writes per second (the kopfexamples benchmark's create phase needs
	// 4,000 in seconds).
	QPS float32 `json:"qps"`
	// Burst is the token bucket's size when QPS is above zero.
	Burst int `json:"burst"`
	// RequestTimeout bounds each attempt of a request that is not a watch
	// (reads, writes, Events, discovery; a handler's requests are also
	// bounded by wasm.callTimeout).
	RequestTimeout time.Duration `json:"requestTimeout"`
	// ConnProbeTimeout bounds the probe (GET /livez, which checks neither
	// etcd nor waits in priority and fairness: a live connection answers it
	// in milliseconds) sent when a request ran out of RequestTimeout
	// without an answer, or a watch stream was silent for
	// watching.inactivityTimeout: the client's connections are closed (and
	// every request on them cut) only when the probe gets no answer (on
	// the request's connection), not when the server was just slow or the
	// watched resource only quiet.
	ConnProbeTimeout time.Duration `json:"connProbeTimeout"`
	// ErrorBackoffs are the pauses between the attempts of a request that
	// failed transiently (connection errors, timeouts, 5xx, 429); their
	// number is the number of retries, so an empty list turns retries off.
	// Kopf's.
	ErrorBackoffs []time.Duration `json:"errorBackoffs"`
	// DiscoveryRefresh is the shortest time between two refreshes of the
	// API discovery triggered by a resource the cache does not know, so that
	// a module asking again and again for a kind the cluster does not serve
	// does not cost a discovery round each time.
	DiscoveryRefresh time.Duration `json:"discoveryRefresh"`
	// KeepManagedFields keeps metadata.managedFields in the watch cache and
	// in the objects passed to handlers. Off by default: they are often the
	// largest part of an object and handlers rarely need them.
	KeepManagedFields bool `json:"keepManagedFields"`
	// UserAgent is sent with every request.
	UserAgent string `json:"userAgent"`
	// FieldManager names the host in managedFields for its own writes and
	// for guest writes that name no manager.
	FieldManager string `json:"fieldManager"`
}

// defaultKube is an unlimited client with Kopf's retry backoffs.
func defaultKube() Kube {
	return Kube{
		QPS: -1, Burst: 400, RequestTimeout: 30 * time.Second, ConnProbeTimeout: 2 * time.Second,
		ErrorBackoffs:    seconds(1, 1, 2, 3, 5, 8, 13, 21),
		DiscoveryRefresh: 2 * time.Second,
		UserAgent:        "kopf-wasm",
		FieldManager:     "kopf-wasm",
	}
}

// validate reports a rate limit or names the client cannot work with.
func (k Kube) validate(v *validator) {
	if k.QPS > 0 && k.Burst < 1 {
		v.fail("kube.burst", "must be at least 1 when kube.qps is above 0, got %d", k.Burst)
	} else {
		v.atLeast("kube.burst", k.Burst, 0)
	}
	v.positive("kube.requestTimeout", k.RequestTimeout)
	v.positive("kube.connProbeTimeout", k.ConnProbeTimeout)
	v.notNegativeList("kube.errorBackoffs", k.ErrorBackoffs)
	v.notNegative("kube.discoveryRefresh", k.DiscoveryRefresh)
	if k.UserAgent == "" {
		v.fail("kube.userAgent", "must not be empty")
	}
	if k.FieldManager == "" || len(k.FieldManager) > 128 {
		v.fail("kube.fieldManager", "must be 1 to 128 characters, got %q", k.FieldManager)
	}
}
