package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// The tests of the settings' watching group: server timeout, reconnect
// backoff and inactivity timeout, on a fake API server.

func kexEvent(typ, name, rv string) string {
	return fmt.Sprintf(`{"type":%q,"object":{"apiVersion":"kopf.dev/v1","kind":"KopfExample",`+
		`"metadata":{"name":%q,"namespace":"ns","resourceVersion":%q}}}`+"\n", typ, name, rv)
}

func bookmark(rv string) string {
	return fmt.Sprintf(`{"type":"BOOKMARK","object":{"apiVersion":"kopf.dev/v1","kind":"KopfExample",`+
		`"metadata":{"resourceVersion":%q}}}`+"\n", rv)
}

// silentServer answers a watch with its events, each after its delay, then
// keeps the stream open without a byte until the client goes away (a
// connection silently dropped by a load balancer looks the same). It
// records the watch requests and when they came.
type silentServer struct {
	*httptest.Server
	events func(n int) []timedEvent // the events of the n-th watch (from 0)
	list   string                   // the answer to a list

	mu    sync.Mutex
	lists int
	reqs  []string
	times []time.Time
}

type timedEvent struct {
	after time.Duration
	event string
}

func newSilentServer(t *testing.T, list string, events func(n int) []timedEvent) *silentServer {
	s := &silentServer{list: list, events: events}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/livez" { // the connection probe after a silent watch
			_, _ = w.Write([]byte("ok"))
			return
		}
		if r.URL.Query().Get("watch") != "true" {
			s.mu.Lock()
			s.lists++
			s.mu.Unlock()
			_, _ = w.Write([]byte(s.list))
			return
		}
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, r.URL.RawQuery)
		s.times = append(s.times, time.Now())
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for _, ev := range s.events(n) {
			select {
			case <-time.After(ev.after):
			case <-r.Context().Done():
				return
			}
			_, _ = w.Write([]byte(ev.event))
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *silentServer) watches() ([]string, []time.Time, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...), append([]time.Time(nil), s.times...), s.lists
}

func watchingClient(t *testing.T, url string, w settings.Watching) *Client {
	t.Helper()
	c, err := New(&rest.Config{Host: url}, withSettings(func(s *settings.Settings) { s.Watching = w }))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestWatchRequestOptions: every watch asks for bookmarks; a server timeout
// replaces the reflector's timeoutSeconds, and none keeps it.
func TestWatchRequestOptions(t *testing.T) {
	for _, tc := range []struct {
		server time.Duration
		want   string
	}{
		{10 * time.Minute, "timeoutSeconds=600"},
		{0, "timeoutSeconds=347"},
	} {
		srv := newStreamServer(t, recordedStream)
		c := watchingClient(t, srv.URL, settings.Watching{ServerTimeout: tc.server})
		reflectorTimeout := int64(347)
		w, err := c.listWatch(kexGVR, "ns", "test").WatchFuncWithContext(t.Context(),
			metav1.ListOptions{ResourceVersion: "5", TimeoutSeconds: &reflectorTimeout})
		collect(t, w, err)
		req := srv.lastRequest()
		if !strings.Contains(req, tc.want) || !strings.Contains(req, "allowWatchBookmarks=true") ||
			!strings.Contains(req, "resourceVersion=5") {
			t.Errorf("server timeout %v: request %s, want %s and bookmarks", tc.server, req, tc.want)
		}
	}
}

// TestWatchInactivityTimeout: a stream on which nothing arrives for the
// inactivity timeout ends cleanly (no ERROR event, so the reflector resumes
// it rather than relisting); events and bookmarks keep it open; without
// the timeout it stays open.
func TestWatchInactivityTimeout(t *testing.T) {
	const idle = 300 * time.Millisecond
	var bookmarks []timedEvent
	for i := range 6 {
		bookmarks = append(bookmarks, timedEvent{100 * time.Millisecond, bookmark(fmt.Sprint(20 + i))})
	}
	srv := newSilentServer(t, "", func(n int) []timedEvent {
		return append([]timedEvent{{0, kexEvent("ADDED", "a", "11")}}, bookmarks...)
	})
	c := watchingClient(t, srv.URL, settings.Watching{InactivityTimeout: idle})
	start := time.Now()
	w, err := c.listWatch(kexGVR, "ns", "test").WatchFuncWithContext(t.Context(), metav1.ListOptions{})
	done := make(chan []watch.Event)
	go func() { done <- collect(t, w, err) }()
	select {
	case events := <-done:
		took := time.Since(start)
		if len(events) != 7 || events[0].Type != watch.Added || events[6].Type != watch.Bookmark {
			t.Errorf("%d events (%v), want the ADDED and 6 bookmarks, no ERROR", len(events), events)
		}
		if took < 600*time.Millisecond+idle {
			t.Errorf("the stream ended after %v, before its last bookmark (600ms) and the inactivity timeout after it", took)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the silent stream did not end within 20s with an inactivity timeout of 300ms")
	}

	// Without the timeout, the silent stream stays open until stopped.
	c = watchingClient(t, srv.URL, settings.Watching{})
	w, err = c.listWatch(kexGVR, "ns", "test").WatchFuncWithContext(t.Context(), metav1.ListOptions{})
	go func() { done <- collect(t, w, err) }()
	select {
	case events := <-done:
		t.Fatalf("the stream ended without an inactivity timeout, after %d events", len(events))
	case <-time.After(idle + 900*time.Millisecond):
	}
	w.Stop()
	<-done
}

// TestWatchReconnectBackoff: a watch resumed after its stream ended waits
// the reconnect backoff; the first watch does not; a stop during the wait
// ends it.
func TestWatchReconnectBackoff(t *testing.T) {
	srv := newStreamServer(t, recordedStream) // each stream ends at once
	c := watchingClient(t, srv.URL, settings.Watching{ReconnectBackoff: 400 * time.Millisecond})
	lw := c.listWatch(kexGVR, "ns", "test")
	var starts []time.Time
	for range 2 {
		starts = append(starts, time.Now())
		w, err := lw.WatchFuncWithContext(t.Context(), metav1.ListOptions{})
		collect(t, w, err)
	}
	if gap := time.Since(starts[1]); gap < 400*time.Millisecond {
		t.Errorf("the resumed watch came %v after the first ended, want at least the 400ms backoff", gap)
	}

	c = watchingClient(t, srv.URL, settings.Watching{ReconnectBackoff: time.Hour})
	lw = c.listWatch(kexGVR, "ns", "test")
	w, err := lw.WatchFuncWithContext(t.Context(), metav1.ListOptions{}) // at once: nothing ended yet
	collect(t, w, err)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := lw.WatchFuncWithContext(ctx, metav1.ListOptions{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a watch stopped during the backoff: %v, want the context's error", err)
	}
}

// TestInformerResumesInactiveWatch: an informer whose watch goes silent
// resumes it from the last resource version it saw, without listing again,
// and gets the changes that follow.
func TestInformerResumesInactiveWatch(t *testing.T) {
	list := `{"apiVersion":"kopf.dev/v1","kind":"KopfExampleList","metadata":{"resourceVersion":"10"},"items":[` +
		`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"old","namespace":"ns","resourceVersion":"9"}}]}`
	srv := newSilentServer(t, list, func(n int) []timedEvent {
		switch n {
		case 0:
			return []timedEvent{{0, kexEvent("ADDED", "a", "11")}}
		case 1:
			return []timedEvent{{0, kexEvent("MODIFIED", "a", "12")}}
		}
		return nil
	})
	c := watchingClient(t, srv.URL, settings.Watching{InactivityTimeout: 200 * time.Millisecond, ReconnectBackoff: 10 * time.Millisecond})
	var mu sync.Mutex
	var seen []string
	res := Resource{ResourceRef: abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}}
	w, err := c.Watch(t.Context(), res, AllNamespaces(), func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, string(ev.Type)+" "+ev.Object.GetName()+"@"+ev.Object.GetResourceVersion())
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	want := []string{"ADDED old@9", "ADDED a@11", "MODIFIED a@12"}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		got := strings.Join(seen, ", ")
		mu.Unlock()
		if got == strings.Join(want, ", ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events %q, want %q", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	reqs, _, lists := srv.watches()
	if lists != 1 || len(reqs) < 2 || !strings.Contains(reqs[1], "resourceVersion=11") {
		t.Errorf("%d lists and watches %q; want one list, and the second watch from resourceVersion 11", lists, reqs)
	}
}
