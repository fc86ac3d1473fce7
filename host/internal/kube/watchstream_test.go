package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// streamServer answers every request with one watch stream and records
// what it was asked.
type streamServer struct {
	*httptest.Server
	stream string

	mu       sync.Mutex
	requests []string // method, path, query and Accept header
}

func newStreamServer(t *testing.T, stream string) *streamServer {
	s := &streamServer{stream: stream}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+" "+r.Header.Get("Accept"))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(s.stream))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *streamServer) lastRequest() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[len(s.requests)-1]
}

// collect reads a watch until it ends.
func collect(t *testing.T, w watch.Interface, err error) []watch.Event {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var events []watch.Event
	for ev := range w.ResultChan() {
		events = append(events, ev)
	}
	return events
}

// TestWatchLikeDynamicClient sends the dynamic client's watch request and
// hands out the same events.
func TestWatchLikeDynamicClient(t *testing.T) {
	timeout, yes := int64(300), true
	opts := metav1.ListOptions{LabelSelector: "app=a", FieldSelector: "metadata.name=x", ResourceVersion: "5",
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, TimeoutSeconds: &timeout,
		AllowWatchBookmarks: true, SendInitialEvents: &yes}
	cases := []struct {
		gvr       schema.GroupVersionResource
		namespace string
		stream    string
	}{
		{cmGVR, "ns1", recordedStream},
		{kexGVR, "", recordedStream},
		{kexGVR, "ns2", sampleEvent + sampleEvent[:50]}, // cut short: no ERROR event
	}
	for _, tc := range cases {
		srv := newStreamServer(t, tc.stream)
		cfg := &rest.Config{Host: srv.URL}
		c, err := New(cfg, withSettings(func(s *settings.Settings) { s.Kube.KeepManagedFields = true }))
		if err != nil {
			t.Fatal(err)
		}
		w, err := c.watchJSON(context.Background(), tc.gvr, tc.namespace, opts, streamHooks{}, watchScope{})
		got := collect(t, w, err)
		gotReq := srv.lastRequest()
		dyn := dynamic.NewForConfigOrDie(cfg)
		w, err = dyn.Resource(tc.gvr).Namespace(tc.namespace).Watch(context.Background(), opts)
		want := collect(t, w, err)
		if wantReq := srv.lastRequest(); gotReq != wantReq {
			t.Errorf("request\n %s\nwant\n %s", gotReq, wantReq)
		}
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s in %q: %d events, the dynamic client %d, or they differ", tc.gvr, tc.namespace, len(got), len(want))
		}
		if st := c.Stats(); st.Reads != 1 {
			t.Errorf("the watch counts as %d reads", st.Reads)
		}
	}
}

// TestWatchUndecodable reports a stream that is not JSON as client-go
// does: an ERROR event with an internal error, then the end.
func TestWatchUndecodable(t *testing.T) {
	srv := newStreamServer(t, sampleEvent+"<html>oops</html>\n")
	cfg := &rest.Config{Host: srv.URL}
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.watchJSON(context.Background(), kexGVR, "", metav1.ListOptions{}, streamHooks{}, watchScope{})
	got := collect(t, w, err)
	w, err = dynamic.NewForConfigOrDie(cfg).Resource(kexGVR).Watch(context.Background(), metav1.ListOptions{})
	want := collect(t, w, err)
	if len(got) != 2 || len(want) != 2 || got[1].Type != watch.Error || want[1].Type != watch.Error {
		t.Fatalf("%d events, the dynamic client %d; want 2, the second an ERROR", len(got), len(want))
	}
	st, ok := got[1].Object.(*metav1.Status)
	wantSt := want[1].Object.(*metav1.Status)
	if !ok || st.Code != wantSt.Code || st.Reason != wantSt.Reason || st.Details == nil ||
		!reflect.DeepEqual(st.Details.Causes[0].Type, wantSt.Details.Causes[0].Type) {
		t.Errorf("the ERROR event carries %#v\nwant like %#v", got[1].Object, wantSt)
	}
}

func TestWatchInvalidNamespace(t *testing.T) {
	c, err := New(&rest.Config{Host: "http://127.0.0.1:1"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.watchJSON(context.Background(), kexGVR, "a/../b", metav1.ListOptions{}, streamHooks{}, watchScope{}); err == nil {
		t.Errorf("no error for namespace a/../b")
	}
}
