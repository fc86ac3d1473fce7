package admission

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/certs"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
)

// now is the tests' fake clock.
var now = time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)

const year = 365 * 24 * time.Hour

// material generates a certificate for names, made at made, valid for a
// year.
func material(t *testing.T, made time.Time, names ...string) certs.Material {
	t.Helper()
	m, err := certs.Generate(names, made, year)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDecide(t *testing.T) {
	const renew = 30 * 24 * time.Hour
	need := []string{"kopf-wasm.ops.svc", "127.0.0.1"}
	fresh := material(t, now.Add(-time.Hour), need...)
	other := material(t, now, need...)
	tests := []struct {
		name   string
		data   map[string][]byte
		action certAction
		reason string   // a part of the reason
		names  []string // for create and replace
	}{
		{"missing", nil, actionCreate, "there is none", need},
		{"valid", secretData(fresh), actionKeep, "", nil},
		{"valid, made by another CA", secretData(other), actionKeep, "", nil},
		{"a wildcard covers the name", secretData(material(t, now, "*.ops.svc", "127.0.0.1")), actionKeep, "", nil},
		{"expiring", secretData(material(t, now.Add(-340*24*time.Hour), need...)), actionReplace, "it expires at 2026-12-19", need},
		{"expired", secretData(material(t, now.Add(-400*24*time.Hour), need...)), actionReplace, "it expired at 2026-10-20", need},
		{"a name not covered", secretData(material(t, now, "kopf-wasm.ops.svc", "10.0.0.1")), actionReplace, "it does not name 127.0.0.1",
			[]string{"kopf-wasm.ops.svc", "127.0.0.1", "10.0.0.1"}},
		{"empty: a placeholder", map[string][]byte{}, actionFill, "it holds no certificate yet", need},
		{"a kubernetes.io/tls placeholder", map[string][]byte{certs.CertFile: {}, certs.KeyFile: []byte("\n")}, actionFill, "it holds no certificate yet", need},
		{"only ca.crt", map[string][]byte{certs.CAFile: fresh.CA}, actionMalformed, "it has no tls.crt", nil},
		{"no ca.crt", map[string][]byte{certs.CertFile: fresh.Cert, certs.KeyFile: fresh.Key}, actionMalformed, "it has no ca.crt", nil},
		{"garbage certificate", map[string][]byte{certs.CertFile: []byte("garbage"), certs.KeyFile: fresh.Key, certs.CAFile: fresh.CA}, actionMalformed, "tls.crt and tls.key:", nil},
		{"another's key", map[string][]byte{certs.CertFile: fresh.Cert, certs.KeyFile: other.Key, certs.CAFile: fresh.CA}, actionMalformed, "tls.crt and tls.key:", nil},
		{"another CA", map[string][]byte{certs.CertFile: fresh.Cert, certs.KeyFile: fresh.Key, certs.CAFile: other.CA}, actionMalformed, "tls.crt is not signed by a CA of ca.crt", nil},
		{"ca.crt not PEM", map[string][]byte{certs.CertFile: fresh.Cert, certs.KeyFile: fresh.Key, certs.CAFile: []byte("x")}, actionMalformed, "ca.crt: no PEM certificate", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(tt.data, need, now, renew)
			if d.action != tt.action || !strings.Contains(d.reason, tt.reason) || !slices.Equal(d.names, tt.names) {
				t.Errorf("decide = %v %q names %v; want %v with %q, names %v", d.action, d.reason, d.names, tt.action, tt.reason, tt.names)
			}
			if (d.action == actionKeep || d.action == actionReplace) != (d.stored != nil) {
				t.Errorf("%v with stored %v", d.action, d.stored != nil)
			}
		})
	}
}

// A replacement is signed by a new CA and keeps trusting the previous
// CAs that are still valid, at most maxPreviousCAs of them.
func TestRenewalKeepsPreviousCAs(t *testing.T) {
	old := material(t, now.Add(-340*24*time.Hour), "a.svc")
	older := material(t, now.Add(-400*24*time.Hour), "a.svc") // expired
	oldest := material(t, now.Add(-300*24*time.Hour), "a.svc")
	third := material(t, now.Add(-200*24*time.Hour), "a.svc")
	data := secretData(old)
	data[certs.CAFile] = slices.Concat(old.CA, older.CA, oldest.CA, third.CA)
	d := decide(data, []string{"a.svc"}, now, 30*24*time.Hour)
	if d.action != actionReplace {
		t.Fatalf("decide = %v %q", d.action, d.reason)
	}
	m, err := renewal(d, now, year)
	if err != nil {
		t.Fatal(err)
	}
	st, err := parseStored(secretData(m))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.cas) != 1+maxPreviousCAs || st.leaf.CheckSignatureFrom(st.cas[0]) != nil {
		t.Fatalf("%d CAs; the first must sign the new certificate", len(st.cas))
	}
	for i, want := range []certs.Material{old, oldest} {
		if !bytes.Equal(pemOf(t, want.CA), st.cas[i+1].Raw) {
			t.Errorf("CA %d is not the %d-th valid previous one", i+1, i+1)
		}
	}
	if !st.leaf.NotAfter.Equal(now.Add(year).Truncate(time.Second)) {
		t.Errorf("the new certificate ends at %v", st.leaf.NotAfter)
	}
}

func pemOf(t *testing.T, b []byte) []byte {
	t.Helper()
	cs, err := parseCerts(b)
	if err != nil {
		t.Fatal(err)
	}
	return cs[0].Raw
}

// memStore is a Secret store in memory, with the API server's
// resourceVersion checks; before, when set, runs before each request (to
// write what a racing replica writes).
type memStore struct {
	mu      sync.Mutex
	secrets map[string]kube.Secret
	rv      int
	writes  int
	getErr  error
	before  func(verb string)
}

func (s *memStore) GetSecret(_ context.Context, ns, name string) (*kube.Secret, error) {
	s.hook("get")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.getErr != nil {
		return nil, s.getErr
	}
	sec, ok := s.secrets[ns+"/"+name]
	if !ok {
		return nil, fmt.Errorf("get secrets %s/%s: %w", ns, name, kube.ErrGone)
	}
	return &sec, nil
}

func (s *memStore) CreateSecret(_ context.Context, ns, name string, sec kube.Secret) (*kube.Secret, error) {
	s.hook("create")
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.secrets[ns+"/"+name]; ok {
		return nil, fmt.Errorf("create secrets %s/%s: %w", ns, name, kube.ErrExists)
	}
	return s.put(ns+"/"+name, sec), nil
}

func (s *memStore) UpdateSecret(_ context.Context, ns, name string, sec kube.Secret) (*kube.Secret, error) {
	s.hook("update")
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.secrets[ns+"/"+name]
	switch {
	case !ok:
		return nil, fmt.Errorf("update secrets %s/%s: %w", ns, name, kube.ErrGone)
	case cur.ResourceVersion != sec.ResourceVersion:
		return nil, fmt.Errorf("update secrets %s/%s: %w", ns, name, kube.ErrConflict)
	}
	return s.put(ns+"/"+name, sec), nil
}

func (s *memStore) hook(verb string) {
	if s.before != nil {
		f := s.before
		s.before = nil // once
		f(verb)
	}
}

// put stores sec with a new resourceVersion; s.mu is held.
func (s *memStore) put(key string, sec kube.Secret) *kube.Secret {
	s.rv++
	s.writes++
	sec.ResourceVersion = strconv.Itoa(s.rv)
	if s.secrets == nil {
		s.secrets = map[string]kube.Secret{}
	}
	s.secrets[key] = sec
	return &sec
}

func (s *memStore) set(t *testing.T, m certs.Material) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put("ops/cert", kube.Secret{Type: SecretType, Data: secretData(m)})
}

func newShared(store SecretStore) *sharedCert {
	return &sharedCert{store: store, namespace: "ops", name: "cert", names: []string{"a.svc"}, validity: year, renew: 30 * 24 * time.Hour,
		now: func() time.Time { return now }, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func leafOf(st *stored) string { return string(st.leaf.Raw) }

// sync: the first replica creates the Secret, the next one uses it; a
// race lost, on create or on update, ends with the winner's certificate.
func TestSharedSync(t *testing.T) {
	ctx := context.Background()
	t.Run("created, then shared", func(t *testing.T) {
		store := &memStore{}
		first, err := newShared(store).sync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		second, err := newShared(store).sync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if store.writes != 1 || leafOf(first) != leafOf(second) || store.secrets["ops/cert"].Type != SecretType {
			t.Errorf("%d writes; the same certificate: %v", store.writes, leafOf(first) == leafOf(second))
		}
	})
	t.Run("a create lost", func(t *testing.T) {
		store := &memStore{}
		winner := material(t, now, "a.svc")
		store.before = func(verb string) { // the other replica creates it between our get and create
			store.before = func(string) { store.set(t, winner) }
		}
		got, err := newShared(store).sync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.material.Cert, winner.Cert) || store.writes != 1 {
			t.Errorf("not the winner's certificate (%d writes)", store.writes)
		}
	})
	t.Run("an update lost", func(t *testing.T) {
		store := &memStore{}
		store.set(t, material(t, now.Add(-340*24*time.Hour), "a.svc")) // expiring
		winner := material(t, now, "a.svc")
		store.before = func(string) {
			store.before = func(string) { store.set(t, winner) }
		}
		got, err := newShared(store).sync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.material.Cert, winner.Cert) || store.writes != 2 {
			t.Errorf("not the winner's certificate (%d writes)", store.writes)
		}
	})
	t.Run("replaced when expiring, keeping the type", func(t *testing.T) {
		store := &memStore{}
		store.set(t, material(t, now.Add(-340*24*time.Hour), "a.svc"))
		sec := store.secrets["ops/cert"]
		sec.Type = "Opaque"
		store.secrets["ops/cert"] = sec
		got, err := newShared(store).sync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !got.leaf.NotAfter.After(now.Add(300*24*time.Hour)) || store.secrets["ops/cert"].Type != "Opaque" || len(got.cas) != 2 {
			t.Errorf("ends %v, type %q, %d CAs", got.leaf.NotAfter, store.secrets["ops/cert"].Type, len(got.cas))
		}
	})
	t.Run("a placeholder filled, keeping its type", func(t *testing.T) {
		store := &memStore{}
		store.put("ops/cert", kube.Secret{Type: "Opaque"}) // as deploy or Helm creates it
		got, err := newShared(store).sync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sec := store.secrets["ops/cert"]
		if store.writes != 2 || sec.Type != "Opaque" || len(got.cas) != 1 || !bytes.Equal(sec.Data[certs.CertFile], got.material.Cert) {
			t.Errorf("%d writes, type %q, %d CAs", store.writes, sec.Type, len(got.cas))
		}
	})
	t.Run("malformed: left alone, one line saying to delete it", func(t *testing.T) {
		store := &memStore{}
		store.put("ops/cert", kube.Secret{Type: SecretType, Data: map[string][]byte{certs.CertFile: []byte("x")}})
		_, err := newShared(store).sync(ctx)
		want := "admission: the Secret ops/cert holds no usable webhook certificate (it has no tls.key); delete it to have a new one generated: kubectl delete secret -n ops cert"
		if err == nil || err.Error() != want || store.writes != 1 {
			t.Errorf("error %v (%d writes); want %q", err, store.writes, want)
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		store := &memStore{getErr: fmt.Errorf("get secrets ops/cert: %w", kube.ErrForbidden)}
		if _, err := newShared(store).sync(ctx); !errors.Is(err, kube.ErrForbidden) || store.writes != 0 {
			t.Errorf("error %v, %d writes", err, store.writes)
		}
	})
	t.Run("always losing", func(t *testing.T) {
		store := &memStore{}
		// Before each write, another replica writes a certificate without
		// our name: each of ours loses, and each read asks to replace it.
		racer := material(t, now, "b.svc")
		var race func(string)
		race = func(verb string) {
			if verb != "get" {
				store.set(t, racer)
			}
			store.before = race
		}
		store.before = race
		_, err := newShared(store).sync(ctx)
		if err == nil || !strings.Contains(err.Error(), "changed under each of 3 attempts") {
			t.Errorf("error %v", err)
		}
	})
}

// The certificates a sync returns parse as served: the leaf's chain ends
// in the bundle's first CA.
func TestSharedChain(t *testing.T) {
	st, err := newShared(&memStore{}).sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(st.material.CA)
	if _, err := st.leaf.Verify(x509.VerifyOptions{DNSName: "a.svc", Roots: pool, CurrentTime: now}); err != nil {
		t.Error(err)
	}
}
