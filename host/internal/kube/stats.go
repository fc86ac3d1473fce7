package kube

import (
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
)

// Stats counts the requests that reached the API server (retries
// included, requests refused by the client's own rate limiter excluded).
type Stats struct {
	// Reads are GET requests: gets, lists, watches and discovery.
	Reads int64
	// Writes are every POST, PUT, PATCH and DELETE: the sum of the four
	// counts below.
	Writes                             int64
	Creates, Updates, Patches, Deletes int64
	// Events is how many of the creates posted an Event.
	Events int64
}

// Stats returns the request counts since the Client was built.
func (c *Client) Stats() Stats { return c.stats.snapshot() }

type counters struct {
	reads, creates, updates, patches, deletes, events atomic.Int64
}

func (s *counters) snapshot() Stats {
	st := Stats{
		Reads:   s.reads.Load(),
		Creates: s.creates.Load(),
		Updates: s.updates.Load(),
		Patches: s.patches.Load(),
		Deletes: s.deletes.Load(),
		Events:  s.events.Load(),
	}
	st.Writes = st.Creates + st.Updates + st.Patches + st.Deletes
	return st
}

// wrap is a rest.Config transport wrapper that counts requests.
func (s *counters) wrap(rt http.RoundTripper) http.RoundTripper {
	return countingTransport{rt: rt, s: s}
}

type countingTransport struct {
	rt http.RoundTripper
	s  *counters
}

// RoundTrip counts the request by method and sends it on; the metrics
// count it by verb and status code.
func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.count(req)
	code := 0
	if err == nil {
		code = resp.StatusCode
	}
	metrics.APIRequest(verbOf(req), code)
	return resp, err
}

func (t countingTransport) count(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		t.s.reads.Add(1)
	case http.MethodPost:
		t.s.creates.Add(1)
		if strings.HasSuffix(req.URL.Path, "/events") {
			t.s.events.Add(1)
		}
	case http.MethodPut:
		t.s.updates.Add(1)
	case http.MethodPatch:
		t.s.patches.Add(1)
	case http.MethodDelete:
		t.s.deletes.Add(1)
	}
	return t.rt.RoundTrip(req)
}

// WrappedRoundTripper returns the transport it wraps (client-go's
// debugging and proxy helpers look for it).
func (t countingTransport) WrappedRoundTripper() http.RoundTripper { return t.rt }

// verbOf is the Kubernetes verb of a request: from its method, and for
// GET from its watch parameter and whether its path names one object.
func verbOf(req *http.Request) string {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case req.URL.Query().Get("watch") == "true":
			return "watch"
		case namesObject(req.URL.Path):
			return "get"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return strings.ToLower(req.Method)
}

// namesObject says whether an API path names one object (or a
// subresource of one) rather than a collection: /api/v1/RES/NAME,
// /api/v1/namespaces/NS/RES/NAME and the same under /apis/GROUP/VERSION.
// Discovery documents and /version count as objects.
func namesObject(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return true
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:] // below a namespace (namespaces/NS alone names a namespace)
	}
	return len(parts) != 1
}
