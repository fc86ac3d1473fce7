package examplestest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// certPair is a CA and a serving certificate it signed, as PEM.
type certPair struct {
	ca, cert, key []byte
	caCert        *x509.Certificate
}

// newCertPair makes a CA named cn and a certificate for 127.0.0.1.
func newCertPair(t *testing.T, cn string) certPair {
	t.Helper()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano() + 1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return certPair{
		ca:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		cert:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:    pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		caCert: caCert,
	}
}

// mountSecret writes p into dir as the kubelet updates a mounted Secret:
// the files in a new timestamped folder, "..data" swapped to it with one
// rename, and tls.crt, tls.key, ca.crt links through "..data".
func mountSecret(t *testing.T, dir string, p certPair) {
	t.Helper()
	ts := fmt.Sprintf("..%d", time.Now().UnixNano())
	if err := os.Mkdir(filepath.Join(dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"tls.crt": p.cert, "tls.key": p.key, "ca.crt": p.ca} {
		if err := os.WriteFile(filepath.Join(dir, ts, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(dir, name)); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Symlink(ts, filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// runAdmissionHost runs 09-admission with s until the test ends and
// returns its logs; the managed configurations are deleted at the end.
func runAdmissionHost(t *testing.T, ns string, s settings.Settings) *e2etest.LogBuffer {
	t.Helper()
	createObject(t, gvr("", "v1", "namespaces"), "", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	t.Cleanup(func() {
		_ = dyn.Resource(validatingConfigs).Delete(context.Background(), s.Admission.Managed, metav1.DeleteOptions{})
		_ = dyn.Resource(mutatingConfigs).Delete(context.Background(), s.Admission.Managed, metav1.DeleteOptions{})
	})
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	logs := runHost(t, host.Options{Modules: []string{wasmtest.Path(t, "09-admission")}, Kubeconfig: env.Kubeconfig, Namespaces: []string{ns}, Settings: &s})
	return logs
}

// checkFieldHook is the managed validating webhook of 09-admission's
// check_field handler (nil until it exists).
func checkFieldHook(managed string) (map[string]any, error) {
	obj, err := dyn.Resource(validatingConfigs).Get(context.Background(), managed, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		if name, _ := m["name"].(string); strings.HasPrefix(name, "check-field.") {
			return m, nil
		}
	}
	return nil, fmt.Errorf("no check-field webhook among %d in %s", len(hooks), managed)
}

// TestAdmissionCertDirReload: with --webhook-cert-dir the host serves the
// folder's certificate; when the folder's files are replaced while it
// runs (a new CA, as when cert-manager or a Secret rotates them), the
// managed configuration's caBundle follows, the server presents the new
// certificate, and the API server's calls keep succeeding.
func TestAdmissionCertDirReload(t *testing.T) {
	const ns, managed = "ex-admission-certs", "certs.kopf-wasm.dev"
	dir := t.TempDir()
	first, second := newCertPair(t, "first CA"), newCertPair(t, "second CA")
	mountSecret(t, dir, first)
	s := settings.Default()
	s.Admission.Listen, s.Admission.Host, s.Admission.Managed = "127.0.0.1:0", "127.0.0.1", managed
	s.Admission.CertDir, s.Admission.CertCheckInterval = dir, 500*time.Millisecond
	logs := runAdmissionHost(t, ns, s)

	var serverURL string
	caBundleIs := func(p certPair) func() error {
		return func() error {
			h, err := checkFieldHook(managed)
			if err != nil {
				return err
			}
			cc, _ := h["clientConfig"].(map[string]any)
			serverURL, _ = cc["url"].(string)
			bundle, _ := cc["caBundle"].(string)
			var raw []byte
			_ = json.Unmarshal([]byte(`"`+bundle+`"`), &raw) // base64, as []byte decodes
			if !bytes.Equal(raw, p.ca) {
				return fmt.Errorf("the caBundle is not the %s", p.caCert.Subject.CommonName)
			}
			return nil
		}
	}
	// presents is a condition: the server's certificate is signed by p's CA.
	presents := func(p certPair) func() error {
		return func() error {
			u, err := url.Parse(serverURL)
			if err != nil {
				return err
			}
			pool := x509.NewCertPool()
			pool.AddCert(p.caCert)
			conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
			if err != nil {
				return fmt.Errorf("the server's certificate is not signed by the %s: %w", p.caCert.Subject.CommonName, err)
			}
			return conn.Close()
		}
	}
	// denied is a condition: the API server called the webhook and got
	// the handler's denial (not a TLS failure).
	kexs := dyn.Resource(kopfexamples).Namespace(ns)
	denied := func() error {
		_, err := kexs.Create(context.Background(), &unstructured.Unstructured{Object: kex("forbidden", nil, map[string]any{"field": "forbidden"})}, metav1.CreateOptions{})
		if err == nil {
			_ = kexs.Delete(context.Background(), "forbidden", metav1.DeleteOptions{})
			return fmt.Errorf("a forbidden object was admitted")
		}
		if !strings.Contains(err.Error(), "spec.field must not be 'forbidden'") {
			return fmt.Errorf("not the handler's denial: %w", err)
		}
		return nil
	}

	e2etest.Eventually(t, 60*time.Second, "the caBundle is the first CA", caBundleIs(first))
	e2etest.Eventually(t, 10*time.Second, "the first certificate served", presents(first))
	e2etest.Eventually(t, 60*time.Second, "the API server calls the webhook", denied)
	createObject(t, kopfexamples, ns, kex("before", nil, map[string]any{"field": "x"}))

	mountSecret(t, dir, second)
	e2etest.Eventually(t, 60*time.Second, "the caBundle follows to the second CA", caBundleIs(second))
	e2etest.Eventually(t, 10*time.Second, "the second certificate served", presents(second))
	if err := presents(first)(); err == nil {
		t.Error("the server still presents a certificate of the first CA")
	}
	e2etest.Eventually(t, 60*time.Second, "the API server calls the webhook with the new certificate", denied)
	createObject(t, kopfexamples, ns, kex("after", nil, map[string]any{"field": "x"}))
	if l := get(t, kopfexamples, ns, "after").GetLabels(); l["admitted-by"] != "kopf-wasm" {
		t.Errorf("the mutating webhook did not label the object created after the rotation: %v", l)
	}
	if err := logged(logs, "the webhook certificate changed and was reloaded")(); err != nil {
		t.Error(err)
	}
}

// TestAdmissionServiceMode: with --webhook-service the managed
// configurations point at the Service (namespace, name, port, the
// handler's Service path: the API server requires DNS-1123 segments, so
// "check_field" is served as "/admission/check-field" too) instead of a
// URL, with the generated CA, whose certificate names the Service. The
// API server accepting the configurations is part of the test: it refused
// the handler's own path, "/admission/check_field", before. Only the configurations are checked: the
// test's API server runs without a cluster network, so it cannot reach a
// Service (in a cluster it would reach the host's Pod through it).
func TestAdmissionServiceMode(t *testing.T) {
	const ns, managed = "ex-admission-svc", "svc.kopf-wasm.dev"
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	s := settings.Default()
	s.Admission.Listen, s.Admission.Managed, s.Admission.Service = "127.0.0.1:0", managed, "ops/kopf-wasm"
	s.Admission.CADump = caFile
	// The webhooks point at a Service nobody serves: this test's objects
	// are not admitted meanwhile, so it creates none.
	logs := runAdmissionHost(t, ns, s)
	var hook map[string]any
	e2etest.Eventually(t, 60*time.Second, "the managed validating configuration", func() (err error) {
		hook, err = checkFieldHook(managed)
		return err
	})
	cc, _ := hook["clientConfig"].(map[string]any)
	want := map[string]any{"namespace": "ops", "name": "kopf-wasm", "port": int64(443), "path": "/admission/check-field"}
	svc, _ := cc["service"].(map[string]any)
	for k, v := range want {
		if fmt.Sprint(svc[k]) != fmt.Sprint(v) {
			t.Errorf("clientConfig.service.%s = %v, want %v (clientConfig %v)", k, svc[k], v, cc)
		}
	}
	if _, ok := cc["url"]; ok {
		t.Errorf("clientConfig has a url besides the service: %v", cc)
	}
	bundle, _ := cc["caBundle"].(string)
	var raw []byte
	_ = json.Unmarshal([]byte(`"`+bundle+`"`), &raw)
	dumped, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) == 0 || !bytes.Equal(raw, dumped) {
		t.Errorf("the caBundle is not the dumped CA (%d bytes, dumped %d)", len(raw), len(dumped))
	}
	// The served certificate names the Service, signed by that CA.
	addr := regexp.MustCompile(`address=(127\.0\.0\.1:\d+)`).FindStringSubmatch(logs.String())
	if addr == nil {
		t.Fatalf("no listen address in the logs:\n%s", logs.String())
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(dumped)
	for _, name := range []string{"kopf-wasm.ops.svc", "kopf-wasm.ops.svc.cluster.local"} {
		conn, err := tls.Dial("tcp", addr[1], &tls.Config{RootCAs: pool, ServerName: name, MinVersion: tls.VersionTLS12})
		if err != nil {
			t.Errorf("the served certificate for %s: %v", name, err)
			continue
		}
		_ = conn.Close()
	}
	// The mutating configuration too.
	obj, err := dyn.Resource(mutatingConfigs).Get(context.Background(), managed, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
	if len(hooks) != 1 {
		t.Fatalf("mutating webhooks %v", hooks)
	}
	path, _, _ := unstructured.NestedString(hooks[0].(map[string]any), "clientConfig", "service", "path")
	if path != "/admission/add-label" {
		t.Errorf("the mutating webhook's service path is %q", path)
	}
}
