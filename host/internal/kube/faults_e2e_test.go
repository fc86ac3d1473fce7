package kube

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestE2ECreateAfterFaults sends guests' creates through a proxy that
// fails every create: one answered 503 with Retry-After is sent once (the
// object may have been created: client-go's rest client used to repeat it
// up to 10 times), one answered 429 with Retry-After again after each
// backoff, never sooner than the Retry-After.
func TestE2ECreateAfterFaults(t *testing.T) {
	env := cluster(t)
	dyn := dynamic.NewForConfigOrDie(env.Config)
	ns := namespace(t, dyn, "kube-faults")
	upstream, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	proxy := e2etest.NewFaultProxy(t, upstream, transport)
	cfg := &rest.Config{Host: proxy.URL(), TLSClientConfig: rest.TLSClientConfig{CAData: proxy.CAData()}}
	c, err := New(cfg, withSettings(func(s *settings.Settings) {
		s.Kube.ErrorBackoffs = []time.Duration{10 * time.Millisecond, 10 * time.Millisecond}
	}))
	if err != nil {
		t.Fatal(err)
	}
	creates := func(r e2etest.Request) bool { return r.Verb == "create" && strings.HasSuffix(r.Path, "/configmaps") }
	const retryAfter = time.Second
	tests := []struct {
		code, sent int
	}{
		{http.StatusServiceUnavailable, 1},
		{http.StatusTooManyRequests, 3}, // the first attempt and two backoffs
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.code), func(t *testing.T) {
			proxy.Start(e2etest.Storm{Share: 1, Codes: []int{tt.code}, RetryAfter: retryAfter, Match: creates})
			defer proxy.Stop()
			start := time.Now()
			do(t, c, abi.KubeRequest{Verb: abi.VerbCreate, Version: "v1", Resource: "configmaps", Namespace: ns,
				Body: cmBody("x", nil, nil)}, tt.code)
			var sent []time.Time
			for _, r := range proxy.Requests(start) {
				if creates(r) {
					sent = append(sent, r.At)
				}
			}
			if len(sent) != tt.sent {
				t.Fatalf("the create was sent %d times, want %d", len(sent), tt.sent)
			}
			for i := 1; i < len(sent); i++ {
				if gap := sent[i].Sub(sent[i-1]); gap < retryAfter {
					t.Errorf("attempt %d came %s after the one before, sooner than the Retry-After %s", i+1, gap, retryAfter)
				}
			}
		})
	}
}
