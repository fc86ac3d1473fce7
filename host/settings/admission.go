package settings

import "strings"

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
