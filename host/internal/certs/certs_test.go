package certs_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/certs"
)

// writeCert writes a self-signed certificate for name into dir.
func writeCert(t *testing.T, dir, name string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		DNSNames: []string{name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	// Write the key first: the certificate's change is what a reload sees.
	if err := os.WriteFile(filepath.Join(dir, certs.KeyFile), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, certs.CertFile), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A certificate folder is served, and its files are read again when they
// change; a broken version keeps the previous certificate.
func TestCertDirReload(t *testing.T) {
	dir := t.TempDir()
	writeCert(t, dir, "first.example")
	c, err := certs.FromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	name := func() string {
		got, _ := c.GetCertificate(nil)
		leaf, _ := x509.ParseCertificate(got.Certificate[0])
		return leaf.Subject.CommonName
	}
	if name() != "first.example" || !strings.Contains(string(c.Bundle()), "BEGIN CERTIFICATE") {
		t.Fatalf("served %q", name())
	}
	if changed, err := c.Reload(); changed || err != nil {
		t.Fatalf("unchanged files reloaded: %v %v", changed, err)
	}
	time.Sleep(10 * time.Millisecond) // a new modification time
	writeCert(t, dir, "second.example")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := make(chan struct{}, 1)
	go c.Follow(ctx, 20*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)), func() { changed <- struct{}{} })
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("the change was not seen")
	}
	if name() != "second.example" {
		t.Fatalf("served %q after the change", name())
	}
	if err := os.WriteFile(filepath.Join(dir, certs.CertFile), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reload(); err == nil || name() != "second.example" {
		t.Errorf("a broken certificate: %v, serving %q", err, name())
	}
}

func TestSelfSignedNames(t *testing.T) {
	c, err := certs.SelfSigned([]string{"10.0.0.1", "svc.ns.svc", "localhost"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := c.GetCertificate(nil)
	leaf, _ := x509.ParseCertificate(got.Certificate[0])
	if leaf.Subject.CommonName != "svc.ns.svc" || len(leaf.IPAddresses) != 1 || len(leaf.DNSNames) != 2 {
		t.Errorf("certificate %v %v %v", leaf.Subject, leaf.IPAddresses, leaf.DNSNames)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.Bundle())
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "svc.ns.svc"}); err != nil {
		t.Errorf("not signed by the bundle's CA: %v", err)
	}
	if _, err := certs.SelfSigned(nil, time.Now()); err == nil {
		t.Error("a certificate without names")
	}
}
