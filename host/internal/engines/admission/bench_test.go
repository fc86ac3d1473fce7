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
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/certs"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/admission"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
	"github.com/kopf-wasm/kopf-wasm/internal/webhookname"
)

// BenchmarkAdmission measures AdmissionReviews over HTTPS on loopback
// with 16 concurrent clients (keep-alive connections), for a trivial
// validating handler and a mutating one that adds a label
// (examples/testguests/admissionbench), on a 2 KB object: reviews/s and
// the p50 and p99 latency seen by the clients.
//
//	go test -run '^$' -bench Admission -benchtime 20000x ./host/internal/engines/admission/
//
// The "floor" sub-benchmark is the same clients against an HTTPS server on
// the same settings whose handler reads the review and writes a fixed
// answer: no decoding, no handler. Its p99 is what TLS, HTTP and the
// clients' own work cost on this machine's cores, the least the host could
// reach. BENCH_GUEST=rust loads the Rust build of the module
// (examples/rust/admissionbench, `make guests`); BENCH_POOL and BENCH_GOGC
// override wasm.poolSize and wasm.guestGOGC; BENCH_CLIENTS the 16 clients;
// BENCH_WASM loads another build of the module (a file).
//
// Figures: docs/benchmarks/engines.md, "Admission webhooks" (the current ones in BENCHMARKS.md).
func BenchmarkAdmission(b *testing.B) {
	s := settings.Default()
	if v := os.Getenv("BENCH_GOGC"); v != "" {
		fmt.Sscan(v, &s.Wasm.GuestGOGC)
	}
	if v := os.Getenv("BENCH_POOL"); v != "" {
		fmt.Sscan(v, &s.Wasm.PoolSize)
	}
	clients := 16
	if v := os.Getenv("BENCH_CLIENTS"); v != "" {
		fmt.Sscan(v, &clients)
	}
	e := benchEngine(b, s)
	floorURL, floorCA := floorServer(b, s.Admission)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.Bundle())
	pool.AppendCertsFromPEM(floorCA)
	// HTTP/1.1 keep-alive connections, one per client; BENCH_H2=1 makes
	// them HTTP/2 (the server offers it, as the API server would use it).
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients,
		ForceAttemptHTTP2: os.Getenv("BENCH_H2") == "1",
	}}
	body := benchReview()
	b.Logf("AdmissionReview of %d bytes, object of about %d bytes; %d clients", len(body), len(body)-450, clients)

	for _, handler := range []string{"floor", "allow", "label"} {
		b.Run(handler, func(b *testing.B) {
			url := e.URL() + webhookname.Path("admissionbench", handler)
			if handler == "floor" {
				url = floorURL
			}
			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			var wg sync.WaitGroup
			var failed atomic.Int64
			b.ResetTimer()
			start, cpu0 := time.Now(), processCPU()
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
			elapsed, cpu := time.Since(start), processCPU()-cpu0
			b.StopTimer()
			if n := failed.Load(); n > 0 {
				b.Fatalf("%d of %d reviews failed", n, b.N)
			}
			slices.Sort(lat)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "reviews/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			// The CPU of the whole process (clients, TLS on both ends, the
			// server and the guest) per review: the machine's cores divided
			// by it bound the reviews/s.
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/review")
		})
	}
}

// benchReview is the benchmarks' AdmissionReview: the creation of a 2 KB
// object, as a typical custom resource.
func benchReview() []byte {
	spec := map[string]any{"field": "value", "items": strings.Split(strings.Repeat("item-0123456789,", 100), ",")}
	obj := kex(map[string]any{"app": "bench", "bench-mutate": "yes"}, spec)
	return reviewOf(admissionv1.Create, "", obj, nil, false)
}

// benchEngine serves the admission benchmark's module (Go, or Rust with
// BENCH_GUEST=rust) with settings s until the benchmark ends.
func benchEngine(b *testing.B, s settings.Settings) *admission.Engine {
	ctx := context.Background()
	path := wasmtest.Path(b, "testguests/admissionbench")
	if os.Getenv("BENCH_GUEST") == "rust" {
		path = guestwasm.Path(b, guestwasm.Rust, "admissionbench")
	}
	if p := os.Getenv("BENCH_WASM"); p != "" { // another build, to compare
		path = p
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	opts := wasmrt.OptionsFor(s.Wasm)
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	rt, err := wasmrt.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close(ctx) })
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
	b.Cleanup(cancel)
	if err := e.Update(runCtx); err != nil {
		b.Fatal(err)
	}
	b.Logf("module %s", path)
	return e
}

// BenchmarkReviewServe is one review answered by the server's handler in
// the process, without TLS or a network: the host's and the guest's CPU
// per review, single-threaded (BENCH_GUEST=rust for the Rust module).
//
//	go test -run '^$' -bench ReviewServe -count 5 ./host/internal/engines/admission/
func BenchmarkReviewServe(b *testing.B) {
	s := settings.Default()
	e := benchEngine(b, s)
	body := benchReview()
	for _, handler := range []string{"allow", "label"} {
		b.Run(handler, func(b *testing.B) {
			path := webhookname.Path("admissionbench", handler)
			b.ReportAllocs()
			cpu0, n := processCPU(), 0
			for b.Loop() {
				w := httptest.NewRecorder()
				e.Server().ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
				if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"allowed":true`)) {
					b.Fatalf("%d: %s", w.Code, w.Body.String())
				}
				n++
			}
			// CPU, not wall time: the machine is shared.
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(n), "cpu-us/review")
		})
	}
}

// floorServer serves, over HTTPS with the admission server's TLS and
// timeouts, a fixed allowed AdmissionReview after reading the request's
// body; it returns its URL and CA.
func floorServer(b *testing.B, s settings.Admission) (string, []byte) {
	serverCerts, err := certs.SelfSigned([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	answer := []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"rev-1","allowed":true}}`)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	cert, _ := serverCerts.GetCertificate(nil)
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*cert}}
	srv.Config.ReadHeaderTimeout, srv.Config.ReadTimeout, srv.Config.IdleTimeout = s.ReadHeaderTimeout, s.ReadTimeout, s.IdleTimeout
	srv.StartTLS()
	b.Cleanup(srv.Close)
	return srv.URL + "/floor", serverCerts.Bundle()
}

// processCPU is the CPU time (user and system) the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
