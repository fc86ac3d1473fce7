package admission

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
)

func TestInstrumentCountsByPathAndCode(t *testing.T) {
	h := instrument(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/nothing" {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte("{}"))
	}))
	for _, path := range []string{"/m/good", "/m/good", "/nothing"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, path, nil))
	}
	for _, tc := range []struct {
		path, code string
		want       float64
	}{{"/m/good", "200", 2}, {"unmatched", "404", 1}} {
		if got, _ := metrics.Sample("controller_runtime_webhook_requests_total", "webhook", tc.path, "code", tc.code); got != tc.want {
			t.Errorf("requests %s %s: %v, want %v", tc.path, tc.code, got, tc.want)
		}
		if got, _ := metrics.Sample("controller_runtime_webhook_latency_seconds", "webhook", tc.path); got != tc.want {
			t.Errorf("latency samples %s: %v, want %v", tc.path, got, tc.want)
		}
	}
}
