package kube

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// A PATCH that meets transient failures is retried, and every attempt is
// counted; a 404 is not retried.
func TestPatchRetriesTransientFailures(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch n := calls.Add(1); {
		case r.URL.Path != "/apis/kopf.dev/v1/namespaces/ns/kopfexamples/x/status" || r.Method != http.MethodPatch:
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
		case string(body) == `{"gone":true}`:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"}`)
		case n <= 2:
			http.Error(w, "etcd is sulking", http.StatusServiceUnavailable)
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"x","namespace":"ns","resourceVersion":"7"}}`)
		}
	}))
	defer srv.Close()
	c, err := New(&rest.Config{Host: srv.URL}, withSettings(func(s *settings.Settings) {
		s.Kube.ErrorBackoffs = []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
	}))
	if err != nil {
		t.Fatal(err)
	}
	ref := abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
	out, err := c.Patch(t.Context(), ref, "ns", "x", "status", abi.PatchMerge, []byte(`{"status":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if out.ResourceVersion != "7" || calls.Load() != 3 {
		t.Errorf("resourceVersion %q after %d calls; want 7 after 3", out.ResourceVersion, calls.Load())
	}
	_, err = c.Patch(t.Context(), ref, "ns", "x", "status", abi.PatchMerge, []byte(`{"gone":true}`))
	if !errors.Is(err, ErrGone) || calls.Load() != 4 {
		t.Errorf("err %v after %d calls; want ErrGone after 4", err, calls.Load())
	}
	if st := c.Stats(); st.Patches != 4 || st.Writes != 4 || st.Reads != 0 {
		t.Errorf("stats = %+v; want 4 patches", st)
	}
}

func TestPatchedStatusHas(t *testing.T) {
	p, err := decodePatched([]byte(`{"metadata":{"resourceVersion":"9"},
		"status":{"kopf":{"last-handled-configuration":"{}","progress":null},"create_fn":{"message":"hi"},"flag":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path []string
		want bool
	}{
		{[]string{"kopf", "last-handled-configuration"}, true},
		{[]string{"kopf", "progress"}, false}, // null
		{[]string{"kopf", "missing"}, false},
		{[]string{"create_fn", "message"}, true},
		{[]string{"flag"}, true},
		{[]string{"flag", "below"}, false}, // not an object
		{[]string{"missing"}, false},
	}
	for _, c := range cases {
		if got := p.StatusHas(c.path...); got != c.want {
			t.Errorf("StatusHas(%v) = %v, want %v", c.path, got, c.want)
		}
	}
	if p.ResourceVersion != "9" {
		t.Errorf("resourceVersion %q", p.ResourceVersion)
	}
	if _, err := decodePatched([]byte(`[1]`)); err == nil {
		t.Error("an array decoded as an object")
	}
}
