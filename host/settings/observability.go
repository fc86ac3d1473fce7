package settings

import "time"

// Observability tunes the metrics and health-probe servers (run
// --metrics-bind-address, --health-probe-bind-address).
type Observability struct {
	// ReadHeaderTimeout bounds reading a request's headers on either
	// server. Default 5s.
	ReadHeaderTimeout time.Duration `json:"readHeaderTimeout"`
	// StopTimeout is how long the servers wait for requests in flight when
	// the host stops. Default 2s.
	StopTimeout time.Duration `json:"stopTimeout"`
	// AuthCacheTTL is how long a metrics request's authentication and
	// authorization decision (TokenReview, SubjectAccessReview; run
	// --metrics-auth) is reused for the same token; Prometheus scrapes
	// every 15 to 60 s. Default 1m.
	AuthCacheTTL time.Duration `json:"authCacheTTL"`
	// AuthCacheSize is how many of those decisions are kept at most; past
	// it the least recently used goes (tokens come from anyone who can
	// reach the endpoint). Default 256.
	AuthCacheSize int `json:"authCacheSize"`
}

// defaultObservability is 5 s for a request's headers, 2 s for the stop,
// and 256 authentication decisions kept for a minute.
func defaultObservability() Observability {
	return Observability{ReadHeaderTimeout: 5 * time.Second, StopTimeout: 2 * time.Second, AuthCacheTTL: time.Minute,
		AuthCacheSize: 256}
}

// validate reports observability settings no server can use.
func (o Observability) validate(v *validator) {
	v.positive("observability.readHeaderTimeout", o.ReadHeaderTimeout)
	v.notNegative("observability.stopTimeout", o.StopTimeout)
	v.notNegative("observability.authCacheTTL", o.AuthCacheTTL)
	v.atLeast("observability.authCacheSize", o.AuthCacheSize, 1)
}
