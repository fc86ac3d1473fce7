// Package certs holds the TLS certificates of the host's servers: made
// self-signed at start ([SelfSigned], [Generate]), read from a folder of
// tls.crt and tls.key and read again when they change ([FromDir],
// [Certs.Follow]), or set from material kept elsewhere ([FromMaterial],
// [Certs.SetCert], [Certs.SetBundle]: the admission engine's shared
// Secret). The admission webhooks (host/internal/engines/admission) and
// the metrics server (host/internal/operator) use it. A leaf: it imports
// the standard library only.
package certs

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Certs is the server's certificate: generated at start, read from a
// folder and read again when its files change, or kept in a Secret shared
// by the replicas (the admission engine's sharedcert.go). It is safe for concurrent use.
type Certs struct {
	cert atomic.Pointer[tls.Certificate]

	mu     sync.Mutex
	bundle []byte // PEM: what clients trust (the caBundle)
	dir    string
	stamp  string // the files' sizes and times when last read
}

// Names of the files in a certificate folder, as a kubernetes.io/tls
// Secret and cert-manager write them.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// Material is a certificate as PEM, as a kubernetes.io/tls Secret holds
// it: the serving certificate with its chain (tls.crt), its key
// (tls.key), and the CAs clients trust (ca.crt, the caBundle).
type Material struct {
	Cert, Key, CA []byte
}

// SelfSigned generates a CA and a serving certificate that it signs, for
// the given DNS names and IP addresses (at least one), valid for a year
// from now. The CA is the bundle.
func SelfSigned(names []string, now time.Time) (*Certs, error) {
	m, err := Generate(names, now, 365*24*time.Hour)
	if err != nil {
		return nil, err
	}
	return FromMaterial(m)
}

// Generate makes a CA and a serving certificate that it signs, for the
// given DNS names and IP addresses (at least one), valid from an hour
// before now for validity; both are P-256 ECDSA keys.
func Generate(names []string, now time.Time, validity time.Duration) (Material, error) {
	if len(names) == 0 {
		return Material{}, errors.New("admission: a certificate needs at least one name")
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Material{}, err
	}
	notBefore, notAfter := now.Add(-time.Hour), now.Add(validity)
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "kopf-wasm admission CA", Organization: []string{"kopf-wasm"}},
		NotBefore: notBefore, NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return Material{}, fmt.Errorf("admission: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return Material{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Material{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: commonName(names), Organization: []string{"kopf-wasm"}},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return Material{}, fmt.Errorf("admission: serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Material{}, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return Material{
		Cert: append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), caPEM...),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		CA:   caPEM,
	}, nil
}

// FromMaterial serves m.
func FromMaterial(m Material) (*Certs, error) {
	cert, err := tls.X509KeyPair(m.Cert, m.Key)
	if err != nil {
		return nil, fmt.Errorf("admission: %w", err)
	}
	c := &Certs{bundle: bytes.Clone(m.CA)}
	c.cert.Store(&cert)
	return c, nil
}

// commonName is the first name that is not an IP address (Kopf's choice),
// else the first name.
func commonName(names []string) string {
	for _, n := range names {
		if net.ParseIP(n) == nil {
			return n
		}
	}
	return names[0]
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// FromDir reads tls.crt and tls.key from dir. The bundle is ca.crt when the
// folder has one (cert-manager writes it), else tls.crt itself (a
// self-signed certificate, or a chain ending in its CA).
func FromDir(dir string) (*Certs, error) {
	c := &Certs{dir: dir}
	if _, err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// Reload reads the folder's files again if they changed since they were
// last read, and reports whether they did. A certificate that does not
// load keeps the previous one serving. Generated certificates never
// change.
func (c *Certs) Reload() (bool, error) {
	if c.dir == "" {
		return false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	stamp := filesStamp(c.dir, CertFile, KeyFile, CAFile)
	if stamp == c.stamp {
		return false, nil
	}
	certPEM, err := os.ReadFile(filepath.Join(c.dir, CertFile))
	if err != nil {
		return false, fmt.Errorf("admission: certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(c.dir, KeyFile))
	if err != nil {
		return false, fmt.Errorf("admission: certificate key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, fmt.Errorf("admission: %s and %s in %s: %w", CertFile, KeyFile, c.dir, err)
	}
	bundle := certPEM
	if ca, err := os.ReadFile(filepath.Join(c.dir, CAFile)); err == nil && len(bytes.TrimSpace(ca)) > 0 {
		bundle = ca
	}
	c.cert.Store(&cert)
	c.bundle, c.stamp = bundle, stamp
	return true, nil
}

// filesStamp sums up the files' sizes and modification times.
func filesStamp(dir string, names ...string) string {
	var b bytes.Buffer
	for _, n := range names {
		if fi, err := os.Stat(filepath.Join(dir, n)); err == nil {
			fmt.Fprintf(&b, "%s:%d:%d;", n, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// Follow reloads the folder's certificate every interval until ctx ends;
// changed is called after each change (the bundle may be new). Reload
// failures are logged and the previous certificate keeps serving.
func (c *Certs) Follow(ctx context.Context, every time.Duration, log *slog.Logger, changed func()) {
	if c.dir == "" {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		switch ok, err := c.Reload(); {
		case err != nil:
			log.Error("the webhook certificate did not reload; the previous one keeps serving", "dir", c.dir, "error", err)
		case ok:
			log.Info("the webhook certificate changed and was reloaded", "dir", c.dir)
			if changed != nil {
				changed()
			}
		}
	}
}

// errNoCert answers TLS handshakes while a shared certificate could not
// be had yet.
var errNoCert = errors.New("admission: no webhook certificate yet (see the host's log)")

// GetCertificate is tls.Config's: the current certificate.
func (c *Certs) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if cert := c.cert.Load(); cert != nil {
		return cert, nil
	}
	return nil, errNoCert
}

// SetBundle replaces the bundle (a shared certificate's new CAs).
func (c *Certs) SetBundle(bundle []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bundle = bytes.Clone(bundle)
}

// SetCert replaces the served certificate.
func (c *Certs) SetCert(cert *tls.Certificate) { c.cert.Store(cert) }

// Bundle is the PEM that clients of the server trust: the generated CA,
// or the folder's CA.
func (c *Certs) Bundle() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.bundle)
}
