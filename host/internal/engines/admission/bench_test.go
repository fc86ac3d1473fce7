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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/admission"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// BenchmarkAdmission measures AdmissionReviews over HTTPS on loopback
// with 16 concurrent clients (keep-alive connections), for a trivial
// validating handler and a mutating one that adds a label
// (examples/testguests/admissionbench), on a 2 KB object: reviews/s and the p50 and p99 latency seen by the clients.
//
//	go test -run '^$' -bench Admission -benchtime 20000x ./host/internal/engines/admission/
//
// BENCH_POOL and BENCH_GOGC override wasm.poolSize and wasm.guestGOGC.
//
// On the 2-core development VM (2026-11-24; clients and server in one
// process, other sessions building on the same VM, so runs vary): allow
// 2,200-2,270 reviews/s, p50 5.5-5.9 ms, p99 26-29 ms; label 1,560-2,390
// reviews/s, p99 28-39 ms (three runs). With wasm.poolSize 1 one run gave
// 3,090/s at p99 10.1 ms and another 1,950/s at p99 35 ms. Of the CPU
// (profiled with the 09-admission validator, which reads the spec), about
// half runs in the Go guest (decoding the request, which carries the
// 2 KB body as body, new and the creation's diff), an eighth builds and
// encodes the request and decodes the review on the host, the rest is
// TLS, HTTP and the clients' own JSON. With 16 reviews in flight, latency
// is mostly queueing: 16 / 2,250 per second is 7 ms on average.
func BenchmarkAdmission(b *testing.B) {
	ctx := context.Background()
	s := settings.Default()
	if v := os.Getenv("BENCH_GOGC"); v != "" {
		fmt.Sscan(v, &s.Wasm.GuestGOGC)
	}
	if v := os.Getenv("BENCH_POOL"); v != "" {
		fmt.Sscan(v, &s.Wasm.PoolSize)
	}
	wasm, err := os.ReadFile(wasmtest.Path(b, "testguests/admissionbench"))
	if err != nil {
		b.Fatal(err)
	}
	opts := wasmrt.OptionsFor(s.Wasm)
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	rt, err := wasmrt.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	mod, err := rt.Load(ctx, "admissionbench", wasm)
	if err != nil {
		b.Fatal(err)
	}
	reg, err := registry.New([]abi.Manifest{mod.Manifest()}, func(abi.ResourceSelector) (abi.ResourceRef, error) { return ref, nil })
	if err != nil {
		b.Fatal(err)
	}
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	exec := execution.New(execution.Options{
		Modules: func(string) execution.Module { return mod }, Settings: s, Logger: discard,
	})
	s.Admission.Listen, s.Admission.Host = "127.0.0.1:0", "127.0.0.1"
	e := admission.New(admission.Options{Exec: exec, Registry: func() *registry.Registry { return reg }, Settings: s.Admission, Logger: discard}, nil)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := e.Update(runCtx); err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.Bundle())
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 16, MaxConnsPerHost: 16,
	}}
	// A 2 KB object, as a typical custom resource.
	spec := map[string]any{"field": "value", "items": strings.Split(strings.Repeat("item-0123456789,", 100), ",")}
	obj := kex(map[string]any{"app": "bench", "bench-mutate": "yes"}, spec)
	body := reviewOf(admissionv1.Create, "", obj, nil, false)
	b.Logf("AdmissionReview of %d bytes, object of about %d bytes", len(body), len(body)-450)

	for _, handler := range []string{"allow", "label"} {
		b.Run(handler, func(b *testing.B) {
			url := e.URL() + admission.HandlerPath("admissionbench", handler)
			const clients = 16
			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			var wg sync.WaitGroup
			var failed atomic.Int64
			b.ResetTimer()
			start := time.Now()
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						t0 := time.Now()
						resp, err := client.Post(url, "application/json", bytes.NewReader(body))
						if err != nil {
							failed.Add(1)
							continue
						}
						var review admissionv1.AdmissionReview
						err = json.NewDecoder(resp.Body).Decode(&review)
						resp.Body.Close()
						lat[i] = time.Since(t0)
						if err != nil || review.Response == nil || !review.Response.Allowed {
							failed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if n := failed.Load(); n > 0 {
				b.Fatalf("%d of %d reviews failed", n, b.N)
			}
			slices.Sort(lat)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "reviews/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
