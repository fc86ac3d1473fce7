package settings

import (
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"
)

// Error is one setting that cannot work: Key is its name as in a config
// file ("execution.workers").
type Error struct {
	Key, Problem string
}

func (e *Error) Error() string { return e.Key + ": " + e.Problem }

// Errors are the settings that cannot work, in field order; the message is
// one line.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap lets errors.As find each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// maxPrefixLength keeps "<prefix>/<63-char name>" within the 253 characters
// Kubernetes allows for an annotation key.
const maxPrefixLength = 253 - 63 - 1

// maxMemoryPages is the most pages a wasm32 memory can have (4 GiB).
const maxMemoryPages = 65536

var (
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// namePrefix is what metadata.generateName may be: the start of a DNS
	// subdomain.
	namePrefix = regexp.MustCompile(`^[a-z0-9][-a-z0-9.]*$`)
)

// Validate reports every setting that cannot work, as [Errors] naming each
// key and its allowed range; nil if all can.
func (s Settings) Validate() error {
	var v validator
	p := s.Persistence
	switch {
	case p.Prefix == "":
		v.fail("persistence.prefix", "must not be empty")
	case len(p.Prefix) > maxPrefixLength || !dnsSubdomain.MatchString(p.Prefix):
		v.fail("persistence.prefix", "must be a DNS subdomain (lower case, digits, '-' and '.') of at most %d characters, got %q",
			maxPrefixLength, p.Prefix)
	}
	if i := strings.Index(p.Finalizer, "/"); i <= 0 || i == len(p.Finalizer)-1 || strings.Count(p.Finalizer, "/") > 1 {
		v.fail("persistence.finalizer", "must be a qualified name (domain/name), got %q", p.Finalizer)
	}
	if p.DiffBaseKey == "" || strings.Contains(p.DiffBaseKey, "/") || len(p.DiffBaseKey) > 63 {
		v.fail("persistence.diffBaseKey", "must be an annotation name of 1 to 63 characters without '/', got %q", p.DiffBaseKey)
	}
	v.positive("persistence.consistencyTimeout", p.ConsistencyTimeout)
	v.atLeast("persistence.diffBaseAnnotationBytes", p.DiffBaseAnnotationBytes, 1024)
	v.atLeast("persistence.diffBaseObjectBytes", p.DiffBaseObjectBytes, 64<<10)

	e := s.Execution
	v.notNegative("execution.defaultBackoff", e.DefaultBackoff)
	v.atLeast("execution.workers", e.Workers, 1)
	v.atLeast("execution.maxDaemons", e.MaxDaemons, 1)
	v.positive("execution.cancellationPolling", e.CancellationPolling)
	v.notNegative("execution.probeCache", e.ProbeCache)
	v.atLeast("execution.indexInline", e.IndexInline, 0)

	po := s.Posting
	if _, ok := levelNames[po.Level]; !ok {
		v.fail("posting.level", "must be info or warning, got %d", int(po.Level))
	}
	if po.ReportingComponent == "" || len(po.ReportingComponent) > 128 {
		v.fail("posting.reportingComponent", "must be 1 to 128 characters, got %q", po.ReportingComponent)
	}
	if len(po.ReportingInstance) > 128 {
		v.fail("posting.reportingInstance", "must be at most 128 characters")
	}
	if !namePrefix.MatchString(po.EventNamePrefix) || len(po.EventNamePrefix) > 200 {
		v.fail("posting.eventNamePrefix", "must be the start of a DNS subdomain (lower case, digits, '-' and '.'), 1 to 200 characters, got %q",
			po.EventNamePrefix)
	}

	if len(s.Queueing.ErrorDelays) == 0 {
		v.fail("queueing.errorDelays", "must list at least one delay")
	}
	v.notNegativeList("queueing.errorDelays", s.Queueing.ErrorDelays)

	w := s.Watching
	if w.ServerTimeout < 0 || w.ServerTimeout%time.Second != 0 {
		v.fail("watching.serverTimeout", "must be whole seconds, 0 or more, got %s", w.ServerTimeout)
	}
	v.notNegative("watching.reconnectBackoff", w.ReconnectBackoff)
	if w.InactivityTimeout != 0 && w.InactivityTimeout < time.Second {
		v.fail("watching.inactivityTimeout", "must be 0 (never) or at least 1s, got %s", w.InactivityTimeout)
	}
	v.notNegativeList("watching.scanDelays", w.ScanDelays)
	if w.ScanCRDs && len(w.ScanDelays) == 0 {
		v.fail("watching.scanDelays", "must list at least one delay when watching.scanCRDs is on")
	}
	if w.MaxEventBytes != 0 && w.MaxEventBytes < 1024 {
		v.fail("watching.maxEventBytes", "must be 0 (no cap) or at least 1024, got %d", w.MaxEventBytes)
	}
	if w.MaxEventDepth < 0 || w.MaxEventDepth > 10000 {
		v.fail("watching.maxEventDepth", "must be 0 to 10000, got %d", w.MaxEventDepth)
	}

	m := s.Wasm
	v.positive("wasm.callTimeout", m.CallTimeout)
	if m.MaxMemoryPages < 1 || m.MaxMemoryPages > maxMemoryPages {
		v.fail("wasm.maxMemoryPages", "must be 1 to %d (64 KiB pages), got %d", maxMemoryPages, m.MaxMemoryPages)
	}
	v.atLeast("wasm.maxOutputBytes", m.MaxOutputBytes, 1)
	v.atLeast("wasm.poolSize", m.PoolSize, 1)
	if m.CacheMaxBytes < 0 {
		v.fail("wasm.cacheMaxBytes", "must be 0 (unbounded) or more, got %d", m.CacheMaxBytes)
	}
	if m.GuestGOGC < -1 || m.GuestGOGC == 0 {
		v.fail("wasm.guestGOGC", "must be -1 (unset) or at least 1, got %d", m.GuestGOGC)
	}
	if m.LogRate < 0 || m.LogBurst < 0 || (m.LogRate > 0) != (m.LogBurst > 0) {
		v.fail("wasm.logRate", "logRate and logBurst must both be positive, or both 0 (unbounded), got %g and %d", m.LogRate, m.LogBurst)
	}

	k := s.Kube
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

	v.notNegative("modules.reloadInterval", s.Modules.ReloadInterval)
	v.notNegative("modules.tagPollInterval", s.Modules.TagPollInterval)

	pr := s.Process
	v.positive("process.shutdownTimeout", pr.ShutdownTimeout)
	v.positive("process.cleanupTimeout", pr.CleanupTimeout)
	if pr.CleanupTimeout > pr.ShutdownTimeout && pr.ShutdownTimeout > 0 {
		v.fail("process.cleanupTimeout", "must not exceed process.shutdownTimeout (%s), which bounds the whole stop; got %s",
			pr.ShutdownTimeout, pr.CleanupTimeout)
	}

	a := s.Admission
	if _, _, err := net.SplitHostPort(a.Listen); err != nil {
		v.fail("admission.listen", "must be host:port (\":9443\", \"127.0.0.1:0\"), got %q", a.Listen)
	}
	v.positive("admission.certCheckInterval", a.CertCheckInterval)
	a.validateCertSecret(&v)
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
	s.Sharding.validate(&v)
	s.Observability.validate(&v)
	s.Peering.validate(&v)
	s.LeaderElection.validate(&v)
	return v.err()
}

type validator struct{ errs Errors }

func (v *validator) fail(key, format string, args ...any) {
	v.errs = append(v.errs, &Error{Key: key, Problem: fmt.Sprintf(format, args...)})
}

func (v *validator) positive(key string, d time.Duration) {
	if d <= 0 {
		v.fail(key, "must be above 0, got %s", d)
	}
}

func (v *validator) notNegative(key string, d time.Duration) {
	if d < 0 {
		v.fail(key, "must be 0 or more, got %s", d)
	}
}

func (v *validator) notNegativeList(key string, ds []time.Duration) {
	for i, d := range ds {
		if d < 0 {
			v.fail(fmt.Sprintf("%s[%d]", key, i), "must be 0 or more, got %s", d)
		}
	}
}

func (v *validator) atLeast(key string, n, least int) {
	if n < least {
		v.fail(key, "must be at least %d, got %d", least, n)
	}
}

func (v *validator) err() error {
	if len(v.errs) == 0 {
		return nil
	}
	return v.errs
}
