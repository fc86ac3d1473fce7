package option

import "github.com/spf13/pflag"

// Observe holds the flags of the metrics and health endpoints, named as
// controller-runtime's (kubebuilder's scaffold) are.
type Observe struct {
	// MetricsBindAddress serves Prometheus metrics at /metrics; "0" or ""
	// serves none.
	MetricsBindAddress string
	// MetricsSecure serves them over HTTPS; MetricsCertDir holds tls.crt
	// and tls.key (else a self-signed certificate).
	MetricsSecure  bool
	MetricsCertDir string
	// MetricsAuth checks every scrape's bearer token with the API server.
	MetricsAuth bool
	// HealthProbeBindAddress serves /healthz and /readyz; "0" or "" none.
	HealthProbeBindAddress string
}

// ApplyFlags declares --metrics-bind-address, --metrics-secure,
// --metrics-cert-dir, --metrics-auth and --health-probe-bind-address.
func (o *Observe) ApplyFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", "0",
		`serve Prometheus metrics at /metrics on this address, e.g. ":8080" ("0": none; names in docs/metrics.md)`)
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", false,
		"serve the metrics over HTTPS (certificate from --metrics-cert-dir, else self-signed)")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "folder with tls.crt and tls.key for --metrics-secure")
	fs.BoolVar(&o.MetricsAuth, "metrics-auth", false,
		"let a scrape through only with a bearer token of a user allowed to get /metrics (TokenReview, SubjectAccessReview; needs --metrics-secure)")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", "0",
		`serve /healthz and /readyz on this address, e.g. ":8081" ("0": none; ready once every watch has listed and none is stalled, and every module has loaded)`)
}
