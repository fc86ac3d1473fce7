package admission

import (
	"net/http"

	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
)

// instrument reports every review h answers to the metrics
// (controller_runtime_webhook_*), by path and status code; requests on
// paths that are not a handler's count as "unmatched", so that a scanner
// cannot make up labels.
func instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		label := "unmatched"
		if _, ok := parsePath(r.URL.Path); ok {
			label = r.URL.Path
		}
		done := metrics.WebhookStarted(label)
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		done(rec.code)
	})
}

// statusRecorder keeps the status code a handler writes.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}
