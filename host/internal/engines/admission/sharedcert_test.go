package admission_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/certs"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/admission"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// secretCluster is a fake cluster that also keeps Secrets, with the API
// server's resourceVersion checks.
type secretCluster struct {
	*fakeCluster
	mu      sync.Mutex
	secrets map[string]kube.Secret
	rv      int
	gets    int
}

func newSecretCluster() *secretCluster {
	return &secretCluster{fakeCluster: &fakeCluster{configs: map[string]json.RawMessage{}}, secrets: map[string]kube.Secret{}}
}

func (c *secretCluster) GetSecret(_ context.Context, ns, name string) (*kube.Secret, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets++
	s, ok := c.secrets[ns+"/"+name]
	if !ok {
		return nil, fmt.Errorf("get: %w", kube.ErrGone)
	}
	return &s, nil
}

func (c *secretCluster) CreateSecret(_ context.Context, ns, name string, s kube.Secret) (*kube.Secret, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.secrets[ns+"/"+name]; ok {
		return nil, fmt.Errorf("create: %w", kube.ErrExists)
	}
	return c.put(ns+"/"+name, s), nil
}

func (c *secretCluster) UpdateSecret(_ context.Context, ns, name string, s kube.Secret) (*kube.Secret, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.secrets[ns+"/"+name]; !ok || cur.ResourceVersion != s.ResourceVersion {
		return nil, fmt.Errorf("update: %w", kube.ErrConflict)
	}
	return c.put(ns+"/"+name, s), nil
}

// put stores s with a new resourceVersion; c.mu is held.
func (c *secretCluster) put(key string, s kube.Secret) *kube.Secret {
	c.rv++
	s.ResourceVersion = strconv.Itoa(c.rv)
	c.secrets[key] = s
	return &s
}

// replace writes data over the Secret key, as a user would.
func (c *secretCluster) replace(key string, data map[string][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if data == nil {
		delete(c.secrets, key)
		return
	}
	c.put(key, kube.Secret{Type: admission.SecretType, Data: data})
}

func (c *secretCluster) reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets
}

func (c *secretCluster) data(key, file string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.secrets[key].Data[file]
}

// served is the leaf certificate the engine's server presents, verified
// with bundle as the roots.
func served(e *admission.Engine, bundle []byte) (*x509.Certificate, error) {
	u, err := url.Parse(e.URL())
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bundle) {
		return nil, errors.New("no CA in the bundle")
	}
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, within, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Two replicas with one CertSecret: the first creates it, both serve its
// certificate and write its CA as the caBundle; a certificate near its end
// is replaced by one of them and both follow; a malformed Secret keeps
// the last good certificate serving; a deleted one is made again.
func TestSharedCertReplicas(t *testing.T) {
	const key = "ops/webhook-cert"
	s := defaults()
	s.Listen, s.Host, s.Managed, s.CertSecret = "127.0.0.1:0", "127.0.0.1", "auto.kopf-wasm.dev", key
	s.CertCheckInterval = 50 * time.Millisecond
	reg := buildRegistry(t, validate("check", abi.Options{}, abi.Filters{}))
	cluster := newSecretCluster()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var replicas []*admission.Engine
	for range 2 {
		e := newEngine(t, func() *registry.Registry { return reg }, s, cluster)
		if err := e.Update(ctx); err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, e)
	}
	// allServe: every replica serves the Secret's certificate, trusted
	// by its ca.crt, which is every replica's bundle and the caBundle.
	allServe := func() error {
		ca, cert := cluster.data(key, certs.CAFile), cluster.data(key, certs.CertFile)
		for i, e := range replicas {
			if !bytes.Equal(e.Bundle(), ca) {
				return fmt.Errorf("replica %d's bundle is not the Secret's ca.crt", i)
			}
			leaf, err := served(e, ca)
			if err != nil {
				return fmt.Errorf("replica %d: %w", i, err)
			}
			if !bytes.Equal(leafOf(cert), leaf.Raw) {
				return fmt.Errorf("replica %d serves another certificate than the Secret's", i)
			}
		}
		if hooks := cluster.validating(t, s.Managed); len(hooks) != 1 || !bytes.Equal(hooks[0].ClientConfig.CABundle, ca) {
			return fmt.Errorf("the configuration's caBundle is not the Secret's ca.crt")
		}
		return nil
	}
	if err := allServe(); err != nil {
		t.Fatal(err)
	}
	first := cluster.data(key, certs.CertFile)

	// A certificate near its end, as a year-old Secret holds it.
	old, err := certs.Generate([]string{"127.0.0.1"}, time.Now().Add(-360*24*time.Hour), 365*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cluster.replace(key, map[string][]byte{certs.CertFile: old.Cert, certs.KeyFile: old.Key, certs.CAFile: old.CA})
	eventually(t, 10*time.Second, "the expiring certificate replaced and served by both", func() error {
		if c := cluster.data(key, certs.CertFile); bytes.Equal(c, old.Cert) || bytes.Equal(c, first) {
			return errors.New("not replaced")
		}
		return allServe()
	})
	if ca := cluster.data(key, certs.CAFile); !bytes.HasSuffix(ca, old.CA) {
		t.Error("the replacement's ca.crt does not keep the previous CA")
	}

	good := cluster.data(key, certs.CertFile)
	goodCA := cluster.data(key, certs.CAFile)
	cluster.replace(key, map[string][]byte{certs.CertFile: []byte("garbage")})
	gets := cluster.reads()
	eventually(t, 10*time.Second, "each replica read the malformed Secret a few times", func() error {
		if n := cluster.reads() - gets; n < 6 {
			return fmt.Errorf("%d reads", n)
		}
		return nil
	})
	for i, e := range replicas {
		if leaf, err := served(e, goodCA); err != nil || !bytes.Equal(leafOf(good), leaf.Raw) {
			t.Errorf("replica %d stopped serving the last good certificate: %v", i, err)
		}
	}
	if c := cluster.data(key, certs.CertFile); string(c) != "garbage" {
		t.Error("the malformed Secret was overwritten")
	}

	cluster.replace(key, nil)
	eventually(t, 10*time.Second, "a deleted Secret made again and served by both", func() error {
		if c := cluster.data(key, certs.CertFile); len(c) == 0 || bytes.Equal(c, good) {
			return errors.New("not made again")
		}
		return allServe()
	})
}

// leafOf is the DER of the first certificate of a PEM chain.
func leafOf(chain []byte) []byte {
	block, _ := pem.Decode(chain)
	if block == nil {
		return nil
	}
	return block.Bytes
}

// flakyCluster is a secretCluster whose configuration writes fail while
// failing is set, as the API server's 500s or timeouts after the retries.
type flakyCluster struct {
	*secretCluster
	failing atomic.Bool
}

func (c *flakyCluster) SetWebhooks(ctx context.Context, mutating bool, name string, webhooks json.RawMessage) error {
	if c.failing.Load() {
		return errors.New("the server is currently unable to handle the request")
	}
	return c.secretCluster.SetWebhooks(ctx, mutating, name, webhooks)
}

// A new certificate in the Secret whose caBundle cannot be written is not
// presented: the configurations still trust only the old CA. Once the
// write succeeds, a later tick writes the bundle and presents it.
func TestSharedCertNotServedUntilTrusted(t *testing.T) {
	const key = "ops/webhook-cert"
	s := defaults()
	s.Listen, s.Host, s.Managed, s.CertSecret = "127.0.0.1:0", "127.0.0.1", "auto.kopf-wasm.dev", key
	s.CertCheckInterval = 50 * time.Millisecond
	reg := buildRegistry(t, validate("check", abi.Options{}, abi.Filters{}))
	cluster := &flakyCluster{secretCluster: newSecretCluster()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := newEngine(t, func() *registry.Registry { return reg }, s, cluster)
	if err := e.Update(ctx); err != nil {
		t.Fatal(err)
	}
	oldCA, oldCert := cluster.data(key, certs.CAFile), cluster.data(key, certs.CertFile)

	// Another replica's certificate, by a new CA that does not keep the old one.
	cluster.failing.Store(true)
	other, err := certs.Generate([]string{"127.0.0.1"}, time.Now(), 365*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	gets := cluster.reads()
	cluster.replace(key, map[string][]byte{certs.CertFile: other.Cert, certs.KeyFile: other.Key, certs.CAFile: other.CA})
	eventually(t, 10*time.Second, "the new Secret read a few times", func() error {
		if n := cluster.reads() - gets; n < 3 {
			return fmt.Errorf("%d reads", n)
		}
		return nil
	})
	if leaf, err := served(e, oldCA); err != nil || !bytes.Equal(leafOf(oldCert), leaf.Raw) {
		t.Fatalf("with the caBundle not written, the old certificate is no longer served: %v", err)
	}
	if hooks := cluster.validating(t, s.Managed); len(hooks) != 1 || !bytes.Equal(hooks[0].ClientConfig.CABundle, oldCA) {
		t.Fatal("the caBundle changed while its writes failed")
	}

	cluster.failing.Store(false)
	eventually(t, 10*time.Second, "the new bundle written, then the new certificate served", func() error {
		if hooks := cluster.validating(t, s.Managed); len(hooks) != 1 || !bytes.Equal(hooks[0].ClientConfig.CABundle, other.CA) {
			return errors.New("the caBundle is not the new ca.crt")
		}
		leaf, err := served(e, other.CA)
		if err != nil {
			return err
		}
		if !bytes.Equal(leafOf(other.Cert), leaf.Raw) {
			return errors.New("the new certificate is not served")
		}
		return nil
	})
}
