package settings

import (
	"net"
	"strings"
	"time"
)

// Admission tunes the HTTPS server that answers the API server's
// AdmissionReviews for the modules' validating and mutating handlers, and
// the webhook configurations the host keeps for them (Kopf's
// settings.admission). The server starts once a loaded module declares a
// webhook handler.
type Admission struct {
	// Listen is the server's address, host:port; an empty host listens on
	// every interface, port 0 on a free port (logged).
	Listen string `json:"listen"`
	// Host is the name or IP address under which the API server reaches
	// the server: the host of the managed configurations' URLs, and a name
	// of the generated certificate. Empty: the listen address's host, or
	// "localhost" when that is empty or unspecified.
	Host string `json:"host"`
	// ExtraSANs are more names and IP addresses for the generated
	// certificate.
	ExtraSANs []string `json:"extraSANs"`
	// CertDir holds tls.crt and tls.key (a Secret or cert-manager's
	// output); they are served instead of a generated certificate and read
	// again when they change. Empty: a CA and a serving certificate are
	// generated at start, in memory.
	CertDir string `json:"certDir"`
	// CADump is a file the generated CA certificate (PEM) is written to,
	// for clients that must trust it. Empty: not written.
	CADump string `json:"caDump"`
	// CertCheckInterval is how often CertDir's files, or CertSecret, are
	// checked for a change. Kopf checks every 60 s.
	CertCheckInterval time.Duration `json:"certCheckInterval"`
	// CertSecret, "namespace/name", is a Secret (kubernetes.io/tls:
	// tls.crt, tls.key, ca.crt) that holds the generated CA and serving
	// certificate, shared by every replica: the first one creates it, all
	// serve it and write its CA as the caBundle, so that replicas behind
	// one Service do not overwrite each other's. One replica replaces it
	// when it nears its end (CertRenewBefore) or lacks a name this host
	// needs; the others pick that up within CertCheckInterval. Empty:
	// each host generates its own, in memory. Excludes CertDir.
	CertSecret string `json:"certSecret"`
	// CertValidity is how long a generated certificate (and its CA) is
	// valid. Default 8760h (a year).
	CertValidity time.Duration `json:"certValidity"`
	// CertRenewBefore is how long before its end the certificate of
	// CertSecret is replaced by a new one. Less than CertValidity.
	// Default 720h (30 days).
	CertRenewBefore time.Duration `json:"certRenewBefore"`
	// Managed is the name of the ValidatingWebhookConfiguration and
	// MutatingWebhookConfiguration the host creates and keeps up to date,
	// one webhook per handler (Kopf's settings.admission.managed, e.g.
	// "auto.kopf.dev"). Empty: none; configure the webhooks yourself.
	Managed string `json:"managed"`
	// Service, "namespace/name", makes the managed webhooks reach the
	// server through that Service (a host inside the cluster) instead of
	// by URL; the generated certificate then also names
	// name.namespace.svc and name.namespace.svc.cluster.local. Empty: by
	// URL, https://<host>:<port>.
	Service string `json:"service"`
	// ServicePort is the Service's port that forwards to the server.
	ServicePort int `json:"servicePort"`
	// TimeoutSeconds is the managed webhooks' timeoutSeconds (1 to 30),
	// and the time a review may take when the API server names none.
	TimeoutSeconds int `json:"timeoutSeconds"`
	// TimeoutMargin is kept free of handler calls before the review's
	// timeout passes, so that a handler that loops or runs late is
	// answered by its failure policy before the API server gives up. At
	// most half the timeout is taken.
	TimeoutMargin time.Duration `json:"timeoutMargin"`
	// MaxRequestBytes caps an AdmissionReview's size; a larger one gets a
	// 413. Above twice the largest object the API server accepts (an
	// update carries the object and the old object).
	MaxRequestBytes int `json:"maxRequestBytes"`
	// ReadHeaderTimeout bounds reading a webhook request's headers.
	// Default 10s.
	ReadHeaderTimeout time.Duration `json:"readHeaderTimeout"`
	// ReadTimeout bounds reading a whole webhook request. Default 1m.
	ReadTimeout time.Duration `json:"readTimeout"`
	// IdleTimeout closes a kept-alive webhook connection with nothing to
	// do. Default 2m.
	IdleTimeout time.Duration `json:"idleTimeout"`
	// StopTimeout is how long the server waits for reviews in flight when
	// the host stops. Default 5s.
	StopTimeout time.Duration `json:"stopTimeout"`
}

// defaultAdmission listens on :9443, with a generated certificate valid for
// a year and the API server's longest review timeout.
func defaultAdmission() Admission {
	return Admission{
		Listen:            ":9443",
		CertCheckInterval: 10 * time.Second,
		CertValidity:      365 * 24 * time.Hour,
		CertRenewBefore:   30 * 24 * time.Hour,
		ServicePort:       443,
		TimeoutSeconds:    30,
		TimeoutMargin:     500 * time.Millisecond,
		MaxRequestBytes:   16 << 20,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		StopTimeout:       5 * time.Second,
	}
}

// validate reports an address, certificate or webhook configuration the
// server or the API server cannot use.
func (a Admission) validate(v *validator) {
	if _, _, err := net.SplitHostPort(a.Listen); err != nil {
		v.fail("admission.listen", "must be host:port (\":9443\", \"127.0.0.1:0\"), got %q", a.Listen)
	}
	v.positive("admission.certCheckInterval", a.CertCheckInterval)
	a.validateCertSecret(v)
	v.positive("admission.readHeaderTimeout", a.ReadHeaderTimeout)
	v.positive("admission.readTimeout", a.ReadTimeout)
	v.positive("admission.idleTimeout", a.IdleTimeout)
	v.positive("admission.stopTimeout", a.StopTimeout)
	if a.Managed != "" && (len(a.Managed) > 253 || !dnsSubdomain.MatchString(a.Managed)) {
		v.fail("admission.managed", "must be a DNS subdomain (lower case, digits, '-' and '.'), got %q", a.Managed)
	}
	if a.Service != "" {
		ns, name, ok := strings.Cut(a.Service, "/")
		if !ok || !dnsSubdomain.MatchString(ns) || !dnsSubdomain.MatchString(name) || strings.Contains(ns+name, ".") {
			v.fail("admission.service", "must be namespace/name, got %q", a.Service)
		}
	}
	if a.ServicePort < 1 || a.ServicePort > 65535 {
		v.fail("admission.servicePort", "must be 1 to 65535, got %d", a.ServicePort)
	}
	if a.TimeoutSeconds < 1 || a.TimeoutSeconds > 30 {
		v.fail("admission.timeoutSeconds", "must be 1 to 30 (the API server's range), got %d", a.TimeoutSeconds)
	}
	v.notNegative("admission.timeoutMargin", a.TimeoutMargin)
	v.atLeast("admission.maxRequestBytes", a.MaxRequestBytes, 1024)
}

// validateCertSecret checks certSecret ("namespace/name") and the
// validity it is renewed within.
func (a Admission) validateCertSecret(v *validator) {
	v.positive("admission.certValidity", a.CertValidity)
	v.positive("admission.certRenewBefore", a.CertRenewBefore)
	if a.CertRenewBefore >= a.CertValidity && a.CertValidity > 0 {
		v.fail("admission.certRenewBefore", "must be less than admission.certValidity (%s), or every certificate would be replaced at once; got %s",
			a.CertValidity, a.CertRenewBefore)
	}
	if a.CertSecret == "" {
		return
	}
	ns, name, ok := strings.Cut(a.CertSecret, "/")
	if !ok || !dnsSubdomain.MatchString(ns) || strings.Contains(ns, ".") || len(ns) > 63 ||
		!dnsSubdomain.MatchString(name) || len(name) > 253 {
		v.fail("admission.certSecret", "must be namespace/name of a Secret, got %q", a.CertSecret)
	}
	if a.CertDir != "" {
		v.fail("admission.certSecret", "excludes admission.certDir (%q): serve a mounted certificate or a generated one kept in a Secret, not both", a.CertDir)
	}
}
