package kube

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// initialEndBookmark is the bookmark that ends a streamed listing.
func initialEndBookmark(rv string) string {
	return fmt.Sprintf(`{"type":"BOOKMARK","object":{"apiVersion":"kopf.dev/v1","kind":"KopfExample",`+
		`"metadata":{"resourceVersion":%q,"annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n", rv)
}

// managedEvent is an ADDED event whose object has managedFields.
func managedEvent(name, rv string) string {
	return fmt.Sprintf(`{"type":"ADDED","object":{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":`+
		`{"name":%q,"namespace":"ns","resourceVersion":%q,"managedFields":[{"manager":"m"}]}}}`+"\n", name, rv)
}

// listServer answers a watch with sendInitialEvents as its mode says
// ("stream": the objects a and b and the end bookmark at 30; "refuse": 422;
// "cut": a, then the end of the stream), a later watch with nothing until
// the client goes away, and a LIST with the object c at 20. It records the
// requests, "watch ..." or "list ...", with their queries.
type listServer struct {
	*httptest.Server
	mode string

	mu   sync.Mutex
	reqs []string
}

func newListServer(t *testing.T, mode string) *listServer {
	s := &listServer{mode: mode}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *listServer) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	kind := "list "
	if q.Get("watch") == "true" {
		kind = "watch "
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, kind+r.URL.RawQuery)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case kind == "list ":
		_, _ = w.Write([]byte(`{"apiVersion":"kopf.dev/v1","kind":"KopfExampleList","metadata":{"resourceVersion":"20"},"items":[` +
			`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"c","namespace":"ns","resourceVersion":"19",` +
			`"managedFields":[{"manager":"m"}]}}]}`))
		return
	case q.Get("sendInitialEvents") == "true" && s.mode == "refuse":
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"Status","status":"Failure","reason":"Invalid","code":422,` +
			`"message":"sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"}`))
		return
	}
	w.WriteHeader(http.StatusOK)
	if q.Get("sendInitialEvents") == "true" {
		_, _ = w.Write([]byte(managedEvent("a", "11")))
		if s.mode == "cut" {
			return
		}
		_, _ = w.Write([]byte(managedEvent("b", "12") + bookmark("25") + initialEndBookmark("30")))
	}
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

func (s *listServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// TestListStreamed: the informer's LIST is one watch with sendInitialEvents
// when the settings allow and the server streams; a LIST when the server
// refuses (and from then on), when the stream ends before its bookmark
// (tried again next time), for a continued page, or when the settings say
// no. Objects come without managedFields either way.
func TestListStreamed(t *testing.T) {
	streamed := "watch allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"
	listed := "list limit=500&resourceVersion=0"
	cases := []struct {
		name, mode string
		watchList  bool
		opts       metav1.ListOptions
		names      string // the objects listed, and the list's resource version
		reqs       []string
		againReqs  []string // the requests of a second listing
	}{
		{"streamed", "stream", true, metav1.ListOptions{ResourceVersion: "0", Limit: 500}, "a b @30",
			[]string{streamed}, []string{streamed}},
		{"refused", "refuse", true, metav1.ListOptions{ResourceVersion: "0", Limit: 500}, "c @20",
			[]string{streamed, listed}, []string{listed}},
		{"cut short", "cut", true, metav1.ListOptions{ResourceVersion: "0", Limit: 500}, "c @20",
			[]string{streamed, listed}, []string{streamed, listed}},
		{"off", "stream", false, metav1.ListOptions{ResourceVersion: "0", Limit: 500}, "c @20",
			[]string{listed}, []string{listed}},
		{"continued", "stream", true, metav1.ListOptions{Continue: "x", Limit: 500}, "c @20",
			[]string{"list continue=x&limit=500"}, []string{"list continue=x&limit=500"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newListServer(t, tc.mode)
			c := watchingClient(t, srv.URL, settings.Watching{WatchList: tc.watchList})
			lw := c.listWatch(kexGVR, "", "test")
			for round, want := range [][]string{tc.reqs, tc.againReqs} {
				before := len(srv.requests())
				obj, err := lw.ListWithContextFunc(t.Context(), tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				list := obj.(*unstructured.UnstructuredList)
				var names []string
				for _, item := range list.Items {
					names = append(names, item.GetName())
					if item.GetManagedFields() != nil {
						t.Errorf("%s: managedFields kept", item.GetName())
					}
				}
				if got := strings.Join(names, " ") + " @" + list.GetResourceVersion(); got != tc.names {
					t.Errorf("round %d: listed %q, want %q", round, got, tc.names)
				}
				if got := srv.requests()[before:]; strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("round %d: requests\n %q\nwant\n %q", round, got, want)
				}
			}
		})
	}
}

// TestInitialEvents: the events up to the initial-events-end bookmark make
// the list; anything else before it is an error, as is the stream's end.
func TestInitialEvents(t *testing.T) {
	obj := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		u.SetName(name)
		return u
	}
	mark := func(rv string, end bool) *unstructured.Unstructured {
		u := obj("")
		u.SetResourceVersion(rv)
		if end {
			u.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		}
		return u
	}
	gone := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "gone"}
	cases := []struct {
		name   string
		events []watch.Event
		want   string
	}{
		{"ends", []watch.Event{{Type: watch.Added, Object: obj("a")}, {Type: watch.Bookmark, Object: mark("5", false)},
			{Type: watch.Added, Object: obj("b")}, {Type: watch.Bookmark, Object: mark("7", true)},
			{Type: watch.Added, Object: obj("after")}}, "a b @7"},
		{"empty", []watch.Event{{Type: watch.Bookmark, Object: mark("3", true)}}, " @3"},
		{"no bookmark", []watch.Event{{Type: watch.Added, Object: obj("a")}}, "error: " + errNoInitialEventsEnd.Error()},
		{"error", []watch.Event{{Type: watch.Error, Object: gone}}, "error: gone"},
		{"modified", []watch.Event{{Type: watch.Modified, Object: obj("a")}},
			"error: a MODIFIED event before the initial-events-end bookmark"},
	}
	for _, tc := range cases {
		w := watch.NewFakeWithChanSize(len(tc.events), false)
		for _, ev := range tc.events {
			w.Action(ev.Type, ev.Object)
		}
		if !strings.HasPrefix(tc.name, "ends") && !strings.HasPrefix(tc.name, "empty") {
			w.Stop()
		}
		list, err := initialEvents(t.Context(), w)
		got := ""
		if err != nil {
			got = "error: " + err.Error()
		} else {
			var names []string
			for _, item := range list.Items {
				names = append(names, item.GetName())
			}
			got = strings.Join(names, " ") + " @" + list.GetResourceVersion()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestWatchStreamsInitialListing: an informer on a server that streams
// its listing delivers the streamed objects as initial, is synced, and
// then watches from the bookmark's resource version, without a LIST.
func TestWatchStreamsInitialListing(t *testing.T) {
	srv := newListServer(t, "stream")
	c := watchingClient(t, srv.URL, settings.Watching{WatchList: true})
	var mu sync.Mutex
	var seen []string
	res := Resource{ResourceRef: abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}}
	w, err := c.Watch(t.Context(), res, AllNamespaces(), func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("%s %s initial=%v", ev.Type, ev.Object.GetName(), ev.Initial))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := w.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := strings.Join(seen, ", ")
	mu.Unlock()
	if want := "ADDED a initial=true, ADDED b initial=true"; got != want {
		t.Errorf("delivered when synced: %q, want %q", got, want)
	}
	deadline := time.Now().Add(20 * time.Second)
	for reqs := srv.requests(); len(reqs) < 2; reqs = srv.requests() {
		if time.Now().After(deadline) {
			t.Fatalf("requests %q: no watch after the listing", reqs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	reqs := srv.requests()
	if !strings.Contains(reqs[0], "sendInitialEvents=true") || !strings.HasPrefix(reqs[1], "watch ") ||
		!strings.Contains(reqs[1], "resourceVersion=30") || strings.Contains(reqs[1], "sendInitialEvents") {
		t.Errorf("requests %q; want the streamed listing, then a watch from resourceVersion 30", reqs)
	}
}

// TestLookupAfterStop: a stopped watch no longer knows whether an object
// exists. It must not say "complete": the reactor takes a missing object
// of a complete cache for deleted, and stopped an exiting host's daemons
// with the reason "deleted" (a race in conformance restart/daemon-restarted).
func TestLookupAfterStop(t *testing.T) {
	srv := newListServer(t, "stream")
	c := watchingClient(t, srv.URL, settings.Watching{WatchList: true})
	res := Resource{ResourceRef: abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}}
	w, err := c.Watch(t.Context(), res, AllNamespaces(), func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                    string
		stopped                 bool
		wantFound, wantComplete bool
	}{
		{name: "a", wantFound: true, wantComplete: true},
		{name: "missing", wantFound: false, wantComplete: true},
		{name: "a", stopped: true, wantFound: false, wantComplete: false},
		{name: "missing", stopped: true, wantFound: false, wantComplete: false},
	} {
		if tc.stopped {
			w.Stop()
		}
		_, found, complete := w.Lookup("ns", tc.name)
		if found != tc.wantFound || complete != tc.wantComplete {
			t.Errorf("Lookup(ns/%s), stopped=%v: found=%v complete=%v; want found=%v complete=%v",
				tc.name, tc.stopped, found, complete, tc.wantFound, tc.wantComplete)
		}
	}
}
