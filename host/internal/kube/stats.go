package kube

import (
	"net/http"
	"strings"
	"sync/atomic"
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

// RoundTrip counts the request by method and sends it on.
func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
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
