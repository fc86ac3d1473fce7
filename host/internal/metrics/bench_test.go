package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkScrape is one scrape of a registry holding the series of a
// host serving 5 modules of 4 handlers on 5 resources: what reading
// /metrics every 5 s costs.
func BenchmarkScrape(b *testing.B) {
	for m := range 5 {
		for h := range 4 {
			for _, o := range []string{OutcomeSuccess, OutcomeTemporary} {
				HandlerCall(fmt.Sprintf("mod%d", m), fmt.Sprintf("h%d", h), o, time.Millisecond)
			}
		}
		r := fmt.Sprintf("res%d.v1.example.com", m)
		for _, res := range []string{ResultSuccess, ResultRequeueAfter, ResultError} {
			Reconcile(r, res, time.Millisecond)
		}
		APIRequest("patch", 200)
		WatchStalled(r, "", false)
	}
	h := Handler()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}

// BenchmarkHandlerCall is what reporting one handler call costs.
func BenchmarkHandlerCall(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		HandlerCall("kopfexample", "create_fn", OutcomeSuccess, 20*time.Microsecond)
	}
}

// BenchmarkReconcile is what reporting one processing cycle costs.
func BenchmarkReconcile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Reconcile("kopfexamples.v1.kopf.dev", ResultSuccess, time.Millisecond)
	}
}

// BenchmarkHandlerCallOff is what reporting one handler call costs while
// metrics are off.
func BenchmarkHandlerCallOff(b *testing.B) {
	SetEnabled(false)
	defer SetEnabled(true)
	b.ReportAllocs()
	for b.Loop() {
		HandlerCall("kopfexample", "create_fn", OutcomeSuccess, 20*time.Microsecond)
	}
}
