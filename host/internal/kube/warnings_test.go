package kube

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// The API server's warnings (deprecated APIs, unknown fields) go to the
// host's logger at warn level, each message once per client, instead of
// to klog's global logger in klog's format.
func TestWarningsGoToTheLogger(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Warning", `299 - "kopf.dev/v1alpha1 KopfExample is deprecated; use kopf.dev/v1"`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"major":"1","minor":"34"}`)
	}))
	defer srv.Close()
	var logs bytes.Buffer
	c, err := New(&rest.Config{Host: srv.URL}, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 3 {
		if err := c.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	want := `level=WARN msg="The API server warns: kopf.dev/v1alpha1 KopfExample is deprecated; use kopf.dev/v1"`
	if got := logs.String(); strings.Count(got, want) != 1 || strings.Count(got, "\n") != 1 {
		t.Errorf("logs:\n%s\nwant one line with %s", got, want)
	}
}
