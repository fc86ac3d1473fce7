package admission_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/admission"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// fakeCluster records the managed configurations.
type fakeCluster struct {
	mu      sync.Mutex
	configs map[string]json.RawMessage // "validating/<name>", "mutating/<name>"
	writes  int
	served  map[string][]string // the versions each CRD serves
}

func (c *fakeCluster) SetWebhooks(_ context.Context, mutating bool, name string, webhooks json.RawMessage) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	kind := "validating"
	if mutating {
		kind = "mutating"
	}
	c.configs[kind+"/"+name] = webhooks
	c.writes++
	return nil
}

func (c *fakeCluster) SetConversion(_ context.Context, crd string, conversion json.RawMessage) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.configs["crd/"+crd] = conversion
	return c.served[crd], nil
}

func (c *fakeCluster) validating(t *testing.T, name string) []admissionregistrationv1.ValidatingWebhook {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []admissionregistrationv1.ValidatingWebhook
	if err := json.Unmarshal(c.configs["validating/"+name], &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (c *fakeCluster) mutating(t *testing.T, name string) []admissionregistrationv1.MutatingWebhook {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []admissionregistrationv1.MutatingWebhook
	if err := json.Unmarshal(c.configs["mutating/"+name], &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func newEngine(t *testing.T, reg func() *registry.Registry, s settings.Admission, cluster admission.Cluster) *admission.Engine {
	t.Helper()
	f := newFixture(t, nil, s)
	exec := execution.New(execution.Options{
		Modules: func(string) execution.Module { return f.mod }, Settings: settings.Default(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return admission.New(admission.Options{Exec: exec, Registry: reg, Settings: s,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, cluster)
}

func buildRegistry(t *testing.T, specs ...abi.HandlerSpec) *registry.Registry {
	t.Helper()
	reg, err := registry.New([]abi.Manifest{{ABIVersion: abi.Version, Module: abi.ModuleInfo{Name: "m"}, Handlers: specs}},
		func(abi.ResourceSelector) (abi.ResourceRef, error) { return ref, nil })
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// The engine starts its server once a webhook handler is served, over TLS
// 1.2+ with a generated certificate for its names, and keeps the managed
// configurations: one webhook per handler, updated on swaps; a clean stop
// keeps only the persistent ones.
func TestEngine(t *testing.T) {
	s := defaults()
	s.Listen, s.Host, s.ExtraSANs, s.Managed = "127.0.0.1:0", "127.0.0.1", []string{"webhook.example"}, "auto.kopf-wasm.dev"
	s.CADump = filepath.Join(t.TempDir(), "ca.pem")
	var mu sync.Mutex
	current := buildRegistry(t, abi.HandlerSpec{ID: "create_fn", Kind: abi.KindCreate, Resource: sel})
	reg := func() *registry.Registry { mu.Lock(); defer mu.Unlock(); return current }
	cluster := &fakeCluster{configs: map[string]json.RawMessage{}}
	e := newEngine(t, reg, s, cluster)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	if err := e.Update(ctx); err != nil {
		t.Fatal(err)
	}
	if e.URL() != "" {
		t.Fatalf("the server started without webhook handlers: %q", e.URL())
	}
	// Without webhook handlers the configurations are written empty (what a
	// crashed host left behind is cleared).
	if vs, ms := cluster.validating(t, s.Managed), cluster.mutating(t, s.Managed); cluster.writes != 2 || len(vs) != 0 || len(ms) != 0 {
		t.Fatalf("before any webhook handler: %d writes, %d and %d webhooks", cluster.writes, len(vs), len(ms))
	}

	mu.Lock()
	current = buildRegistry(t,
		validate("check_it", abi.Options{Operations: []string{"CREATE", "UPDATE"}, IgnoreFailures: true}, abi.Filters{
			Labels: map[string]abi.MetaFilter{"team": {Present: true}, "env": {Value: ptr("prod")}, "skip": {Absent: true}}}),
		validate("keeper", abi.Options{Persistent: true, Subresource: "status", SideEffects: true}, abi.Filters{}),
		mutate("defaults", abi.Options{}),
	)
	mu.Unlock()
	if err := e.Update(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.URL(), "https://127.0.0.1:") {
		t.Fatalf("URL = %q", e.URL())
	}
	dumped, err := os.ReadFile(s.CADump)
	if err != nil || !bytes.Equal(dumped, e.Bundle()) {
		t.Fatalf("the CA dump: %v", err)
	}

	// TLS: trusted with the bundle, for every name; TLS 1.1 is refused.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.Bundle())
	for _, name := range []string{"127.0.0.1", "webhook.example"} {
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: name}}}
		resp, err := client.Post(e.URL()+"/m/keeper", "application/json",
			bytes.NewReader(reviewOf(admissionv1.Update, "status", kex(nil, nil), kex(nil, nil), false)))
		if err != nil {
			t.Fatalf("as %s: %v", name, err)
		}
		var review admissionv1.AdmissionReview
		_ = json.NewDecoder(resp.Body).Decode(&review)
		resp.Body.Close()
		if resp.StatusCode != 200 || review.Response == nil || !review.Response.Allowed {
			t.Fatalf("as %s: %d %+v", name, resp.StatusCode, review.Response)
		}
	}
	old := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11}}}
	if _, err := old.Post(e.URL()+"/m/keeper", "application/json", strings.NewReader("{}")); err == nil {
		t.Error("a TLS 1.1 client was served")
	}

	vs, ms := cluster.validating(t, s.Managed), cluster.mutating(t, s.Managed)
	if len(vs) != 2 || len(ms) != 1 {
		t.Fatalf("%d validating and %d mutating webhooks", len(vs), len(ms))
	}
	v := vs[0]
	if v.Name != "check-it.m.auto.kopf-wasm.dev" || *v.ClientConfig.URL != e.URL()+"/m/check_it" ||
		!bytes.Equal(v.ClientConfig.CABundle, e.Bundle()) || *v.FailurePolicy != admissionregistrationv1.Ignore ||
		*v.SideEffects != admissionregistrationv1.SideEffectClassNone || *v.MatchPolicy != admissionregistrationv1.Equivalent ||
		*v.TimeoutSeconds != 30 {
		t.Errorf("webhook %+v", v)
	}
	if r := v.Rules[0]; len(r.Operations) != 2 || r.APIGroups[0] != "kopf.dev" || r.APIVersions[0] != "v1" || r.Resources[0] != "kopfexamples" {
		t.Errorf("rules %+v", v.Rules)
	}
	exprs := map[string]string{}
	for _, x := range v.ObjectSelector.MatchExpressions {
		exprs[x.Key] = string(x.Operator) + strings.Join(x.Values, ",")
	}
	if exprs["team"] != "Exists" || exprs["env"] != "Inprod" || exprs["skip"] != "DoesNotExist" {
		t.Errorf("objectSelector %+v", v.ObjectSelector)
	}
	k := vs[1]
	if k.Rules[0].Resources[0] != "kopfexamples/status" || *k.SideEffects != admissionregistrationv1.SideEffectClassNoneOnDryRun ||
		*k.FailurePolicy != admissionregistrationv1.Fail || string(k.Rules[0].Operations[0]) != "*" || k.ObjectSelector != nil {
		t.Errorf("webhook %+v", k)
	}
	if ms[0].Name != "defaults.m.auto.kopf-wasm.dev" {
		t.Errorf("mutating webhook %+v", ms[0])
	}

	// A clean stop keeps the persistent webhook only.
	cancel()
	stopCtx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	e.Stop(stopCtx)
	if vs, ms := cluster.validating(t, s.Managed), cluster.mutating(t, s.Managed); len(vs) != 1 || vs[0].Name != "keeper.m.auto.kopf-wasm.dev" || len(ms) != 0 {
		t.Errorf("after the stop: %d validating, %d mutating", len(vs), len(ms))
	}
}

func ptr[T any](v T) *T { return &v }

// The server offers HTTP/2 (which the API server's webhook client uses
// when offered) and still HTTP/1.1, and answers reviews over both.
func TestHTTP2(t *testing.T) {
	s := defaults()
	s.Listen, s.Host = "127.0.0.1:0", "127.0.0.1"
	reg := buildRegistry(t, validate("check", abi.Options{}, abi.Filters{}))
	e := newEngine(t, func() *registry.Registry { return reg }, s, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := e.Update(ctx); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.Bundle())
	for _, proto := range []string{"HTTP/2.0", "HTTP/1.1"} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: proto == "HTTP/2.0"}
		if proto == "HTTP/1.1" {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // HTTP/1.1 only
		}
		resp, err := (&http.Client{Transport: tr}).Post(e.URL()+"/m/check", "application/json",
			bytes.NewReader(reviewOf(admissionv1.Create, "", kex(nil, map[string]any{}), nil, false)))
		if err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		var review admissionv1.AdmissionReview
		err = json.NewDecoder(resp.Body).Decode(&review)
		resp.Body.Close()
		if resp.Proto != proto || err != nil || review.Response == nil || !review.Response.Allowed {
			t.Errorf("want an allowed review over %s, got %s: %v %+v", proto, resp.Proto, err, review.Response)
		}
	}
}

// With a Service, the managed webhooks reach the server through it, and
// the generated certificate names the Service.
func TestServiceClientConfig(t *testing.T) {
	s := defaults()
	s.Listen, s.Managed, s.Service = "127.0.0.1:0", "auto.kopf-wasm.dev", "ops/kopf-wasm"
	reg := buildRegistry(t, validate("check_it", abi.Options{}, abi.Filters{}))
	cluster := &fakeCluster{configs: map[string]json.RawMessage{}}
	e := newEngine(t, func() *registry.Registry { return reg }, s, cluster)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := e.Update(ctx); err != nil {
		t.Fatal(err)
	}
	vs := cluster.validating(t, s.Managed)
	if len(vs) != 1 {
		t.Fatalf("%d webhooks", len(vs))
	}
	svc := vs[0].ClientConfig.Service
	if vs[0].ClientConfig.URL != nil || svc == nil || svc.Namespace != "ops" || svc.Name != "kopf-wasm" || *svc.Port != 443 || *svc.Path != "/m/check-it" {
		t.Fatalf("client config %+v", vs[0].ClientConfig)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.Bundle())
	conn, err := tls.Dial("tcp", strings.TrimPrefix(e.URL(), "https://"), &tls.Config{RootCAs: pool, ServerName: "kopf-wasm.ops.svc"})
	if err != nil {
		t.Fatalf("the certificate for the Service's name: %v", err)
	}
	conn.Close()
}

// TestServesUntilStopped: when the host stops (its context ends), the
// server keeps answering until Stop, which the reactor calls once its
// in-flight cycles are done: their patches pass through these webhooks,
// and a server gone first made each of them fail and retry until the
// shutdown timeout (TestAllKinds' stop took 25 s).
func TestServesUntilStopped(t *testing.T) {
	s := defaults()
	s.Listen, s.Host = "127.0.0.1:0", "127.0.0.1"
	reg := buildRegistry(t, validate("check", abi.Options{}, abi.Filters{}))
	e := newEngine(t, func() *registry.Registry { return reg }, s, nil)
	ctx, cancel := context.WithCancel(context.Background())
	if err := e.Update(ctx); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.Bundle())
	review := func() error {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}
		resp, err := (&http.Client{Transport: tr}).Post(e.URL()+"/m/check", "application/json",
			bytes.NewReader(reviewOf(admissionv1.Create, "", kex(nil, map[string]any{}), nil, false)))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	cancel()
	// A shutdown on ctx would have begun by now; a review must still pass.
	for range 20 {
		if err := review(); err != nil {
			t.Fatalf("a review after the host's context ended, before Stop: %v", err)
		}
	}
	stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	e.Stop(stopCtx)
	if err := review(); err == nil {
		t.Error("the server still answers after Stop")
	}
}
