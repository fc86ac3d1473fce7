package admission

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/certs"
)

// SecretType is the type of the Secret a shared certificate is kept in.
const SecretType = "kubernetes.io/tls"

// certAction is what a host does with the Secret of the shared certificate.
type certAction int

const (
	// actionKeep: the stored certificate serves as it is.
	actionKeep certAction = iota
	// actionCreate: there is no Secret; generate one and create it.
	actionCreate
	// actionReplace: the stored certificate nears its end or lacks a
	// name; generate a new one and update the Secret.
	actionReplace
	// actionMalformed: the Secret holds no usable certificate; leave it
	// and say so.
	actionMalformed
	// actionFill: the Secret is a placeholder (none of tls.crt, tls.key,
	// ca.crt, as deploy or Helm creates it so that the host needs no
	// namespace-wide create); generate one and update the Secret.
	actionFill
)

func (a certAction) String() string {
	return [...]string{"keep", "create", "replace", "malformed", "fill"}[a]
}

// decision is what to do with the stored certificate, and why.
type decision struct {
	action certAction
	// reason says why the certificate is replaced or unusable.
	reason string
	// names are those a new certificate covers (create, replace, fill): the
	// ones needed first, then the stored certificate's, so that replicas
	// that need different names converge instead of replacing each
	// other's.
	names []string
	// stored is the stored certificate (keep, replace).
	stored *stored
}

// stored is a certificate as a Secret holds it, parsed.
type stored struct {
	material certs.Material
	cert     tls.Certificate
	leaf     *x509.Certificate
	cas      []*x509.Certificate
}

// decide says what to do with a Secret's data (nil: no Secret) for a host
// that needs names, at now, renewing renewBefore the certificate's end.
func decide(data map[string][]byte, names []string, now time.Time, renewBefore time.Duration) decision {
	if data == nil {
		return decision{action: actionCreate, reason: "there is none", names: names}
	}
	if placeholder(data) {
		return decision{action: actionFill, reason: "it holds no certificate yet", names: names}
	}
	st, err := parseStored(data)
	if err != nil {
		return decision{action: actionMalformed, reason: err.Error()}
	}
	var missing []string
	for _, n := range names {
		if st.leaf.VerifyHostname(n) != nil {
			missing = append(missing, n)
		}
	}
	switch end := st.leaf.NotAfter; {
	case len(missing) > 0:
		return decision{action: actionReplace, stored: st, names: union(names, leafNames(st.leaf)),
			reason: "it does not name " + strings.Join(missing, ", ")}
	case !now.Before(end):
		return decision{action: actionReplace, stored: st, names: union(names, leafNames(st.leaf)),
			reason: "it expired at " + end.UTC().Format(time.RFC3339)}
	case !now.Add(renewBefore).Before(end):
		return decision{action: actionReplace, stored: st, names: union(names, leafNames(st.leaf)),
			reason: "it expires at " + end.UTC().Format(time.RFC3339)}
	}
	return decision{action: actionKeep, stored: st}
}

// placeholder reports whether data has none of tls.crt, tls.key and
// ca.crt (or only blank ones: a kubernetes.io/tls Secret must have the
// first two keys).
func placeholder(data map[string][]byte) bool {
	for _, k := range []string{certs.CertFile, certs.KeyFile, certs.CAFile} {
		if len(bytes.TrimSpace(data[k])) > 0 {
			return false
		}
	}
	return true
}

// parseStored reads tls.crt, tls.key and ca.crt; the certificate must
// match its key and be signed by a CA of ca.crt.
func parseStored(data map[string][]byte) (*stored, error) {
	for _, k := range []string{certs.CertFile, certs.KeyFile, certs.CAFile} {
		if len(bytes.TrimSpace(data[k])) == 0 {
			return nil, fmt.Errorf("it has no %s", k)
		}
	}
	m := certs.Material{Cert: data[certs.CertFile], Key: data[certs.KeyFile], CA: data[certs.CAFile]}
	cert, err := tls.X509KeyPair(m.Cert, m.Key)
	if err != nil {
		return nil, fmt.Errorf("%s and %s: %w", certs.CertFile, certs.KeyFile, err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certs.CertFile, err)
	}
	cas, err := parseCerts(m.CA)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certs.CAFile, err)
	}
	if !slices.ContainsFunc(cas, func(ca *x509.Certificate) bool { return leaf.CheckSignatureFrom(ca) == nil }) {
		return nil, fmt.Errorf("%s is not signed by a CA of %s", certs.CertFile, certs.CAFile)
	}
	return &stored{material: m, cert: cert, leaf: leaf, cas: cas}, nil
}

// parseCerts reads the PEM certificates of b (at least one).
func parseCerts(b []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM certificate")
	}
	return out, nil
}

// leafNames are a certificate's DNS names and IP addresses.
func leafNames(c *x509.Certificate) []string {
	out := slices.Clone(c.DNSNames)
	for _, ip := range c.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}

// union is a, then the names of b that a lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, n := range b {
		if !slices.ContainsFunc(out, func(m string) bool { return sameName(m, n) }) {
			out = append(out, n)
		}
	}
	return out
}

func sameName(a, b string) bool {
	if ipa, ipb := net.ParseIP(a), net.ParseIP(b); ipa != nil && ipb != nil {
		return ipa.Equal(ipb)
	}
	return strings.EqualFold(a, b)
}

// maxPreviousCAs bounds the CAs a replacement keeps trusting. It is fixed,
// not a setting: a replica follows the Secret every certCheckInterval
// (minutes), while a replacement comes at most once per certValidity -
// certRenewBefore (months), or when a replica needs a new name; the CA of
// the certificate a replica still serves is therefore the previous one,
// rarely the one before. More would only grow every caBundle, fewer
// would cut off a replica that has not followed yet.
const maxPreviousCAs = 2

// renewal generates the certificate d asks for. A replacement's bundle
// also holds the CAs of the stored bundle that are still valid at now (at
// most maxPreviousCAs): a replica that has not picked up the new
// certificate yet keeps serving one the API server trusts.
func renewal(d decision, now time.Time, validity time.Duration) (certs.Material, error) {
	m, err := certs.Generate(d.names, now, validity)
	if err != nil || d.stored == nil {
		return m, err
	}
	kept := 0
	for _, ca := range d.stored.cas {
		if kept < maxPreviousCAs && now.Before(ca.NotAfter) {
			m.CA = append(m.CA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})...)
			kept++
		}
	}
	return m, nil
}

// secretData is m as a kubernetes.io/tls Secret's data.
func secretData(m certs.Material) map[string][]byte {
	return map[string][]byte{certs.CertFile: m.Cert, certs.KeyFile: m.Key, certs.CAFile: m.CA}
}
