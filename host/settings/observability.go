package settings

import "time"

var defaultObservability = Observability{ReadHeaderTimeout: 5 * time.Second, StopTimeout: 2 * time.Second, AuthCacheTTL: time.Minute,
	AuthCacheSize: 256}

// validate reports observability settings no server can use.
func (o Observability) validate(v *validator) {
	v.positive("observability.readHeaderTimeout", o.ReadHeaderTimeout)
	v.notNegative("observability.stopTimeout", o.StopTimeout)
	v.notNegative("observability.authCacheTTL", o.AuthCacheTTL)
	v.atLeast("observability.authCacheSize", o.AuthCacheSize, 1)
}
