package examplestest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
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

var secrets = gvr("", "v1", "secrets")

// TestAdmissionSharedCert: two hosts (replicas) with managed webhooks and
// one --webhook-cert-secret: the Secret is created once, both serve its
// certificate, the configuration's caBundle is its ca.crt, and the API
// server's calls succeed through either replica (the webhooks pointed at
// each in turn). A certificate near its end written into the Secret is
// replaced by one replica and served by both, the caBundle following; a
// malformed Secret is reported by both with what to do, and once deleted
// it is made again.
func TestAdmissionSharedCert(t *testing.T) {
	const ns, managed, secret = "ex-admission-shared", "shared.kopf-wasm.dev", "webhook-cert"
	createObject(t, gvr("", "v1", "namespaces"), "", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	t.Cleanup(func() {
		_ = dyn.Resource(validatingConfigs).Delete(context.Background(), managed, metav1.DeleteOptions{})
		_ = dyn.Resource(mutatingConfigs).Delete(context.Background(), managed, metav1.DeleteOptions{})
	})
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	s := settings.Default()
	s.Admission.Listen, s.Admission.Host, s.Admission.Managed = "127.0.0.1:0", "127.0.0.1", managed
	s.Admission.CertSecret, s.Admission.CertCheckInterval = ns+"/"+secret, 500*time.Millisecond
	var logs []*e2etest.LogBuffer
	var addrs []string
	for range 2 {
		s := s // each replica its own settings
		l := runHost(t, host.Options{Modules: []string{wasmtest.Path(t, "09-admission")}, Kubeconfig: env.Kubeconfig, Namespaces: []string{ns}, Settings: &s})
		var addr string
		e2etest.Eventually(t, 60*time.Second, "the replica serves webhooks", func() error {
			m := regexp.MustCompile(`msg="serving admission webhooks" address=(127\.0\.0\.1:\d+)`).FindStringSubmatch(l.String())
			if m == nil {
				return fmt.Errorf("no listen address in the logs")
			}
			addr = m[1]
			return nil
		})
		logs, addrs = append(logs, l), append(addrs, addr)
	}

	stored := func() (map[string][]byte, string, error) {
		obj, err := dyn.Resource(secrets).Namespace(ns).Get(context.Background(), secret, metav1.GetOptions{})
		if err != nil {
			return nil, "", err
		}
		data := map[string][]byte{}
		m, _, _ := unstructured.NestedStringMap(obj.Object, "data")
		for k, v := range m {
			if data[k], err = base64.StdEncoding.DecodeString(v); err != nil {
				return nil, "", err
			}
		}
		return data, obj.GetResourceVersion(), nil
	}
	// bothServe: both replicas present the Secret's certificate, verified
	// by its ca.crt, which every managed webhook's caBundle is.
	bothServe := func() error {
		data, _, err := stored()
		if err != nil {
			return err
		}
		for i, addr := range addrs {
			if err := presentsStored(addr, data); err != nil {
				return fmt.Errorf("replica %d: %w", i, err)
			}
		}
		for _, res := range []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"} {
			obj, err := dyn.Resource(gvr("admissionregistration.k8s.io", "v1", res)).Get(context.Background(), managed, metav1.GetOptions{})
			if err != nil {
				return err
			}
			hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
			for _, h := range hooks {
				bundle, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "caBundle")
				if raw, _ := base64.StdEncoding.DecodeString(bundle); !bytes.Equal(raw, data["ca.crt"]) {
					return fmt.Errorf("a webhook of %s trusts another CA than the Secret's ca.crt", res)
				}
			}
		}
		return nil
	}
	e2etest.Eventually(t, 60*time.Second, "both replicas serve the Secret's certificate, the caBundle its CA", bothServe)
	_, rv, err := stored()
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range logs {
		if n := strings.Count(l.String(), "webhook certificate Secret created"); n > 1 {
			t.Errorf("replica %d created the Secret %d times", i, n)
		}
	}
	if n := strings.Count(logs[0].String()+logs[1].String(), "webhook certificate Secret created"); n != 1 {
		t.Errorf("the Secret was created %d times by the replicas, want once", n)
	}

	// The API server's calls, through each replica in turn.
	for i, addr := range addrs {
		throughReplica(t, managed, ns, addr)
		t.Logf("the API server's calls through replica %d (%s) succeed", i, addr)
	}
	if _, now, err := stored(); err != nil || now != rv {
		t.Errorf("the Secret changed meanwhile (%v): resourceVersion %s, was %s", err, now, rv)
	}

	// A certificate near its end (a day left, less than renewBefore).
	expiring := newCertPair(t, "expiring CA")
	writeSecret(t, ns, secret, map[string][]byte{"tls.crt": expiring.cert, "tls.key": expiring.key, "ca.crt": expiring.ca})
	e2etest.Eventually(t, 60*time.Second, "the expiring certificate replaced, served by both, the caBundle following", func() error {
		data, _, err := stored()
		if err != nil {
			return err
		}
		if bytes.Equal(data["tls.crt"], expiring.cert) {
			return fmt.Errorf("not replaced yet")
		}
		return bothServe()
	})
	if data, _, _ := stored(); !bytes.Contains(data["ca.crt"], expiring.ca) {
		t.Error("the replacement's ca.crt does not keep trusting the previous CA")
	}
	throughReplica(t, managed, ns, addrs[1])

	// A malformed Secret (the API server requires tls.crt and tls.key of
	// its type, not that they parse): reported by both replicas, with
	// what to do.
	writeSecret(t, ns, secret, map[string][]byte{"tls.crt": []byte("garbage"), "tls.key": []byte("garbage")})
	for i, l := range logs {
		e2etest.Eventually(t, 30*time.Second, fmt.Sprintf("replica %d reports the malformed Secret", i),
			logged(l, "holds no usable webhook certificate (it has no ca.crt); delete it to have a new one generated: kubectl delete secret -n "+ns+" "+secret))
	}
	if err := dyn.Resource(secrets).Namespace(ns).Delete(context.Background(), secret, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2etest.Eventually(t, 60*time.Second, "the deleted Secret made again and served by both", bothServe)
	throughReplica(t, managed, ns, addrs[0])
}

// presentsStored: the server at addr presents the certificate of a
// Secret's data, verified with its ca.crt for 127.0.0.1.
func presentsStored(addr string, data map[string][]byte) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data["ca.crt"]) {
		return fmt.Errorf("no CA in the Secret's ca.crt")
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	if err != nil {
		return err
	}
	defer conn.Close()
	block, _ := pem.Decode(data["tls.crt"])
	if block == nil || !bytes.Equal(conn.ConnectionState().PeerCertificates[0].Raw, block.Bytes) {
		return fmt.Errorf("it presents another certificate than the Secret's tls.crt")
	}
	return nil
}

// writeSecret replaces the Secret's data, as a user would.
func writeSecret(t *testing.T, ns, name string, data map[string][]byte) {
	t.Helper()
	enc := map[string]any{}
	for k, v := range data {
		enc[k] = base64.StdEncoding.EncodeToString(v)
	}
	obj, err := dyn.Resource(secrets).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obj.Object["data"] = enc
	if _, err := dyn.Resource(secrets).Namespace(ns).Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// throughReplica points the validating webhooks at addr only and waits
// for the API server to be denied by the handler there: first at a port
// nobody listens on, until the API server's call fails to connect there
// (it uses the new URLs), then at addr.
func throughReplica(t *testing.T, managed, ns, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	kexs := dyn.Resource(kopfexamples).Namespace(ns)
	create := func() error {
		_, err := kexs.Create(context.Background(), &unstructured.Unstructured{Object: kex("forbidden", nil, map[string]any{"field": "forbidden"})}, metav1.CreateOptions{})
		if err == nil {
			_ = kexs.Delete(context.Background(), "forbidden", metav1.DeleteOptions{})
			return fmt.Errorf("a forbidden object was admitted")
		}
		return err
	}
	pointWebhooks(t, managed, dead)
	e2etest.Eventually(t, 60*time.Second, "the API server calls the dead address", func() error {
		if err := create(); !strings.Contains(err.Error(), dead) {
			return fmt.Errorf("not a failed call to %s: %w", dead, err)
		}
		return nil
	})
	pointWebhooks(t, managed, addr)
	e2etest.Eventually(t, 60*time.Second, "the API server is denied by the handler at "+addr, func() error {
		if err := create(); !strings.Contains(err.Error(), "spec.field must not be 'forbidden'") {
			return fmt.Errorf("not the handler's denial: %w", err)
		}
		return nil
	})
}

// pointWebhooks makes every validating webhook of managed call addr, with
// its path and caBundle unchanged.
func pointWebhooks(t *testing.T, managed, addr string) {
	t.Helper()
	configs := dyn.Resource(validatingConfigs)
	e2etest.Eventually(t, 30*time.Second, "the webhooks pointed at "+addr, func() error {
		obj, err := configs.Get(context.Background(), managed, metav1.GetOptions{})
		if err != nil {
			return err
		}
		hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		for _, h := range hooks {
			cc := h.(map[string]any)["clientConfig"].(map[string]any)
			u, err := url.Parse(cc["url"].(string))
			if err != nil {
				return err
			}
			u.Host = addr
			cc["url"] = u.String()
		}
		if err := unstructured.SetNestedSlice(obj.Object, hooks, "webhooks"); err != nil {
			return err
		}
		_, err = configs.Update(context.Background(), obj, metav1.UpdateOptions{})
		return err // a conflict with a replica's write: again
	})
}
