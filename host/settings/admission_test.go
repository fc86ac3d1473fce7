package settings

import (
	"strings"
	"testing"
	"time"
)

func TestValidateCertSecret(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Admission)
		want   string // "" for valid
	}{
		{"a secret", func(a *Admission) { a.CertSecret = "ops/kopf-wasm-webhook-cert" }, ""},
		{"no namespace", func(a *Admission) { a.CertSecret = "kopf-wasm-webhook-cert" }, "admission.certSecret: must be namespace/name"},
		{"a dotted namespace", func(a *Admission) { a.CertSecret = "o.ps/cert" }, "admission.certSecret: must be namespace/name"},
		{"upper case", func(a *Admission) { a.CertSecret = "ops/Cert" }, "admission.certSecret: must be namespace/name"},
		{"with certDir", func(a *Admission) { a.CertSecret, a.CertDir = "ops/cert", "/certs" }, "admission.certSecret: excludes admission.certDir"},
		{"no validity", func(a *Admission) { a.CertValidity = 0 }, "admission.certValidity: must be above 0"},
		{"renewed at once", func(a *Admission) { a.CertRenewBefore = a.CertValidity }, "admission.certRenewBefore: must be less than admission.certValidity"},
		{"renewed never", func(a *Admission) { a.CertRenewBefore = 0 }, "admission.certRenewBefore: must be above 0"},
		{"a short validity", func(a *Admission) { a.CertValidity, a.CertRenewBefore = time.Hour, time.Minute }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Default()
			tt.change(&s.Admission)
			err := s.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n")):
				t.Errorf("Validate() = %v, want one line starting with %q", err, tt.want)
			}
		})
	}
}
