package e2etest

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// FaultProxy is an HTTPS reverse proxy in front of an API server that can
// answer a share of the requests itself with an error, as an API server
// under pressure (429 Too Many Requests with Retry-After) or a failing one
// or its load balancer (500, 503, 504) does, for as long as a [Storm]
// lasts. The other requests reach the API server with the credentials of
// the proxy's upstream transport. It serves HTTP/2, and streams watch
// responses as they come. It records every request it sees.
type FaultProxy struct {
	srv *httptest.Server

	mu       sync.Mutex
	storm    *Storm
	seen     int // requests that matched the storm so far
	log      []Request
	inFlight map[int]context.CancelFunc // the requests passed on, by number
	next     int
}

// Storm is a period of injected failures.
type Storm struct {
	// Share of the matching requests answered with a failure, 0 to 1;
	// spread evenly (with 0.5 every second request fails), not at random.
	Share float64
	// Codes are the HTTP statuses of the failures, used in turn.
	Codes []int
	// RetryAfter is sent as the Retry-After header (whole seconds) and in
	// the Status' details with every 429 and 503, as the API server does.
	RetryAfter time.Duration
	// Match picks the requests the storm may fail; nil means all.
	Match func(Request) bool
	// Cut ends the responses in flight when the storm begins (the watch
	// streams among them), as a load balancer that restarts does, so that
	// the client has to ask again during the storm.
	Cut bool
}

// Request is one request the proxy saw.
type Request struct {
	At time.Time
	// Verb is the Kubernetes verb (get, list, watch, create, update,
	// patch, delete), from the method, the path and the watch parameter.
	Verb, Method, Path string
	// Code is the status the proxy answered with itself (0 when the
	// request went on to the API server).
	Code int
}

// NewFaultProxy starts a proxy to upstream (the API server's URL) that
// sends the requests on through transport (which carries the credentials),
// until the test ends.
func NewFaultProxy(tb testing.TB, upstream *url.URL, transport http.RoundTripper) *FaultProxy {
	tb.Helper()
	p := &FaultProxy{inFlight: map[int]context.CancelFunc{}}
	rp := httputil.NewSingleHostReverseProxy(upstream)
	rp.Transport = transport
	rp.FlushInterval = -1 // watch events as they come
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code, retryAfter := p.decide(r); code != 0 {
			writeStatus(w, code, retryAfter)
			return
		}
		ctx, done := p.track(r)
		defer done()
		rp.ServeHTTP(w, r.WithContext(ctx))
	}))
	p.srv.EnableHTTP2 = true
	p.srv.StartTLS()
	tb.Cleanup(p.srv.Close)
	return p
}

// URL is the proxy's address, https://127.0.0.1:PORT.
func (p *FaultProxy) URL() string { return p.srv.URL }

// CAData is the PEM certificate a client trusts to reach the proxy.
func (p *FaultProxy) CAData() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
}

// Certificate is the proxy's certificate.
func (p *FaultProxy) Certificate() *x509.Certificate { return p.srv.Certificate() }

// Start begins a storm (replacing the one under way, if any).
func (p *FaultProxy) Start(s Storm) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.storm, p.seen = &s, 0
	if s.Cut {
		for _, cancel := range p.inFlight {
			cancel()
		}
	}
}

// track makes a request that goes on to the API server cancellable by
// [Storm.Cut]; done forgets it.
func (p *FaultProxy) track(r *http.Request) (ctx context.Context, done func()) {
	ctx, cancel := context.WithCancel(r.Context())
	p.mu.Lock()
	id := p.next
	p.next++
	p.inFlight[id] = cancel
	p.mu.Unlock()
	return ctx, func() {
		p.mu.Lock()
		delete(p.inFlight, id)
		p.mu.Unlock()
		cancel()
	}
}

// Stop ends the storm: every request reaches the API server again.
func (p *FaultProxy) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.storm = nil
}

// Requests returns the requests seen from since on.
func (p *FaultProxy) Requests(since time.Time) []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Request
	for _, r := range p.log {
		if !r.At.Before(since) {
			out = append(out, r)
		}
	}
	return out
}

// decide records r and says whether to fail it: the status, and the
// Retry-After to send with it.
func (p *FaultProxy) decide(r *http.Request) (int, time.Duration) {
	req := Request{At: time.Now(), Verb: verbOf(r), Method: r.Method, Path: r.URL.Path}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.storm
	code := 0
	if s != nil && len(s.Codes) > 0 && (s.Match == nil || s.Match(req)) {
		// The n-th matching request fails when n*share crosses an integer.
		n := p.seen
		p.seen++
		if int(float64(n+1)*s.Share) > int(float64(n)*s.Share) {
			code = s.Codes[int(float64(n)*s.Share)%len(s.Codes)]
		}
	}
	req.Code = code
	p.log = append(p.log, req)
	if code == 0 {
		return 0, 0
	}
	return code, s.RetryAfter
}

// writeStatus answers with a metav1.Status as the API server words it.
func writeStatus(w http.ResponseWriter, code int, retryAfter time.Duration) {
	reason := map[int]string{
		http.StatusTooManyRequests: "TooManyRequests", http.StatusInternalServerError: "InternalError",
		http.StatusServiceUnavailable: "ServiceUnavailable", http.StatusGatewayTimeout: "Timeout",
	}[code]
	details := ""
	if seconds := int(retryAfter / time.Second); seconds > 0 && (code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable) {
		w.Header().Set("Retry-After", strconv.Itoa(seconds))
		details = fmt.Sprintf(`,"details":{"retryAfterSeconds":%d}`, seconds)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"injected by the test's proxy: %d","reason":%q,"code":%d%s}`,
		code, reason, code, details)
}

// verbOf names a request's Kubernetes verb.
func verbOf(r *http.Request) string {
	switch r.Method {
	case http.MethodGet:
		if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
			return "watch"
		}
		if namesObject(r.URL.Path) {
			return "get"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	}
	return strings.ToLower(r.Method)
}

// namesObject says whether an API path names one object rather than a
// collection (/api/v1/[namespaces/NS/]RES/NAME, the same under
// /apis/GROUP/VERSION); discovery paths count as objects.
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
		parts = parts[2:]
	}
	return len(parts) != 1
}
