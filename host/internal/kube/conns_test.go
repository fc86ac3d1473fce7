package kube

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// TestTimedOut: only an attempt that got no answer within its time points
// at a silent connection.
func TestTimedOut(t *testing.T) {
	info := reqInfo{verb: "patch", resource: "kopfexamples.v1.kopf.dev"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"no answer in time", wrapAPI(info, &net.OpError{Op: "read", Err: context.DeadlineExceeded}), true},
		{"the attempt's context", wrapAPI(info, fmt.Errorf("Patch %q: %w", "https://x", context.DeadlineExceeded)), true},
		{"the server's timeout", wrapAPI(info, apierrors.NewTimeoutError("etcd", 1)), false},
		{"a 504 with a deadline inside", wrapAPI(info, &apierrors.StatusError{ErrStatus: metav1.Status{
			Code: http.StatusGatewayTimeout, Message: context.DeadlineExceeded.Error()}}), false},
		{"the client's rate limiter", wrapAPI(info, fmt.Errorf("client rate limiter Wait returned an error: %w", context.DeadlineExceeded)), false},
		{"a lost connection", wrapAPI(info, io.ErrUnexpectedEOF), false},
		{"cancelled", wrapAPI(info, context.Canceled), false},
		{"none", nil, false},
	}
	for _, tt := range tests {
		if got := timedOut(tt.err); got != tt.want {
			t.Errorf("%s: timedOut(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// poolOfPipes is a pool whose connections are pipes; peers are their
// server ends.
func poolOfPipes(t *testing.T) (p *connPool, dial func() *pooledConn, closed func() int) {
	var peers []net.Conn
	p = newConnPool(func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		peers = append(peers, server)
		return client, nil
	}, time.Second, slog.New(slog.DiscardHandler))
	dial = func() *pooledConn {
		conn, err := p.dial(t.Context(), "tcp", "api:443")
		if err != nil {
			t.Fatal(err)
		}
		return conn.(*pooledConn)
	}
	closed = func() int {
		n := 0
		for _, peer := range peers {
			_ = peer.SetReadDeadline(time.Now().Add(time.Millisecond))
			if _, err := peer.Read(make([]byte, 1)); errors.Is(err, io.EOF) {
				n++
			}
		}
		return n
	}
	return p, dial, closed
}

// usedOn is an attempt that went out on conn.
func usedOn(p *connPool, conn *pooledConn) *connUse {
	_, use := p.track(context.Background())
	use.conn.Store(conn)
	return use
}

// TestConnPoolClosesOncePerTimeout: a timed-out attempt closes every
// connection of the pool, busy or idle; attempts on connections dialed
// before that close them no more (their connections are gone already);
// one on a connection dialed after closes the new ones, even when the
// attempt began before the close (a silent watch closed them, the attempt
// dialed again on the still-broken path: review finding 8; judged by the
// attempt's start, it closed nothing).
func TestConnPoolClosesOncePerTimeout(t *testing.T) {
	p, dial, closed := poolOfPipes(t)
	clock := time.Unix(1000, 0)
	p.now = func() time.Time { return clock }

	first, second := dial(), dial()
	if !p.timedOut(usedOn(p, first)) || closed() != 2 {
		t.Fatalf("after the first timeout %d of 2 connections closed, want both", closed())
	}
	third := dial()
	if p.timedOut(usedOn(p, second)) || closed() != 2 {
		t.Errorf("an attempt on a connection closed already closed again (%d of 3 closed), want nothing", closed())
	}
	if !p.timedOut(usedOn(p, third)) || closed() != 3 {
		t.Errorf("an attempt on a connection dialed after the close: %d of 3 closed, want 3", closed())
	}

	_, early := p.track(context.Background()) // begins, then a watch goes silent
	clock = clock.Add(time.Minute)
	dial()                                           // a fourth, dialed since the last close
	if p.silentWatch(time.Second) || closed() != 4 { // no probe: no answer
		t.Fatalf("the silent watch: %d of 4 connections closed, want every one", closed())
	}
	early.conn.Store(dial()) // dialed on the still-broken path
	if !p.timedOut(early) || closed() != 5 {
		t.Errorf("an attempt that began before the watch's close, on a connection dialed after: %d of 5 closed, want 5", closed())
	}
}

// TestConnPoolProbes: a timed-out attempt closes the connections only when
// a probe gets no answer on its connection: not when the server was only
// slow to answer that request (review finding 3: every request in flight
// was cut).
func TestConnPoolProbes(t *testing.T) {
	tests := []struct {
		name   string
		probe  testProbe // given the attempt's connection, then another
		closes bool
	}{
		{"answered on the attempt's connection", answeredOnFirst, false},
		{"no answer", unanswered, true},
		{"answered on another connection", answeredOnSecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, dial, closed := poolOfPipes(t)
			attempt, other := dial(), dial()
			p.probeTimeout = 10 * time.Millisecond
			p.probe = func(ctx context.Context) bool { return tt.probe(ctx, attempt, other) }
			if got := p.timedOut(usedOn(p, attempt)); got != tt.closes || (closed() == 2) != tt.closes {
				t.Errorf("closed: %v (%d of 2 connections), want %v", got, closed(), tt.closes)
			}
		})
	}
}

// testProbe stands for the pool's connection probe in the tests: it is
// given two of the pool's connections and reports the one it got, as the
// real probe's trace does.
type testProbe func(ctx context.Context, first, second net.Conn) bool

// answeredOnFirst is a probe answered on the first connection.
func answeredOnFirst(ctx context.Context, first, _ net.Conn) bool {
	httptrace.ContextClientTrace(ctx).GotConn(httptrace.GotConnInfo{Conn: first})
	return true
}

// answeredOnSecond is a probe answered on the second connection.
func answeredOnSecond(ctx context.Context, _, second net.Conn) bool {
	httptrace.ContextClientTrace(ctx).GotConn(httptrace.GotConnInfo{Conn: second})
	return true
}

// unanswered is a probe sent on the first connection that gets no answer
// before its timeout.
func unanswered(ctx context.Context, first, _ net.Conn) bool {
	httptrace.ContextClientTrace(ctx).GotConn(httptrace.GotConnInfo{Conn: first})
	<-ctx.Done()
	return false
}

// silentConnServer is an HTTPS server speaking HTTP/2 whose first
// connection never answers (a path that silently stopped forwarding):
// every request on it waits until its client goes away. Requests on later
// connections are answered.
type silentConnServer struct {
	*httptest.Server
	conns  atomic.Int32
	waited chan string // "METHOD path" of each request waiting on the silent connection
	protos sync.Map    // protocols seen
}

type connIDKey struct{}

func newSilentConnServer(t *testing.T) *silentConnServer {
	s := &silentConnServer{waited: make(chan string, 16)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.protos.Store(r.Proto, true)
		if r.Context().Value(connIDKey{}).(int32) == 1 {
			s.waited <- r.Method + " " + r.URL.Path
			<-r.Context().Done()
			return
		}
		if r.URL.Query().Get("watch") == "true" { // a silent stream
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPatch {
			_, _ = io.WriteString(w, `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"x","namespace":"ns","resourceVersion":"7"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"7"},"items":[]}`)
	}))
	s.EnableHTTP2 = true
	s.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connIDKey{}, s.conns.Add(1))
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func (s *silentConnServer) config() *rest.Config {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	return &rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

// waitFor returns the next request that waits on the silent connection.
func (s *silentConnServer) waitFor(t *testing.T, what string) string {
	t.Helper()
	select {
	case req := <-s.waited:
		return req
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not reach the server within 20s", what)
		return ""
	}
}

// TestSilenceFreesBusyConnection: a silent HTTP/2 connection that a
// request without a timeout of its own (as an informer's list) waits on is
// closed, busy as it is, when a PATCH's attempt on it runs out of the
// request timeout (the PATCH's retry then lands on a new connection), or
// when a watch stream goes silent; the waiting request is freed at once.
// Closing only the idle connections left it, and every retry, on the
// silent connection until HTTP/2's health check (30 s + 15 s).
func TestSilenceFreesBusyConnection(t *testing.T) {
	ref := abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
	tests := []struct {
		name    string
		trigger func(t *testing.T, ctx context.Context, c *Client, srv *silentConnServer)
	}{
		{"a timed-out patch", func(t *testing.T, ctx context.Context, c *Client, srv *silentConnServer) {
			out, err := c.Patch(ctx, ref, "ns", "x", "", abi.PatchMerge, []byte(`{"spec":{}}`))
			if req := srv.waitFor(t, "the patch"); req != "PATCH /apis/kopf.dev/v1/namespaces/ns/kopfexamples/x" {
				t.Errorf("waiting on the silent connection: %s, want the patch's first attempt", req)
			}
			if err != nil || out.ResourceVersion != "7" {
				t.Fatalf("patch: %v (%+v), want it to land on a new connection", err, out)
			}
		}},
		{"a timed-out shard lease", func(t *testing.T, ctx context.Context, c *Client, srv *silentConnServer) {
			_, err := c.PutLease(ctx, Lease{Namespace: "ns", Name: "shard-0", Holder: "me", DurationSeconds: 15})
			if req := srv.waitFor(t, "the lease"); req != "POST /apis/coordination.k8s.io/v1/namespaces/ns/leases" {
				t.Errorf("waiting on the silent connection: %s, want the lease's create", req)
			}
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("PutLease: %v, want ErrUnavailable (one attempt)", err)
			}
		}},
		{"a timed-out leader election request", func(t *testing.T, ctx context.Context, c *Client, srv *silentConnServer) {
			// A renewal with 1s left of its renew deadline: one attempt,
			// bounded by it.
			api := leaseAPI{c: c, namespace: "ns", name: "l", retry: c.retry.single()}
			if _, err := api.get(ctx, time.Second); !errors.Is(err, ErrUnavailable) {
				t.Errorf("the renewal: %v, want ErrUnavailable (its time ran out)", err)
			}
			if req := srv.waitFor(t, "the renewal"); req != "GET /apis/coordination.k8s.io/v1/namespaces/ns/leases/l" {
				t.Errorf("waiting on the silent connection: %s, want the renewal", req)
			}
		}},
		{"a silent watch", func(t *testing.T, ctx context.Context, c *Client, _ *silentConnServer) {
			w, err := c.listWatch(kexGVR, "ns", "test").WatchFuncWithContext(ctx, metav1.ListOptions{})
			collect(t, w, err) // ends after the inactivity timeout
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newSilentConnServer(t)
			set := settings.Default()
			set.Kube.RequestTimeout = time.Second
			set.Kube.ConnProbeTimeout = 500 * time.Millisecond
			set.Kube.ErrorBackoffs = []time.Duration{10 * time.Millisecond, 10 * time.Millisecond}
			set.Watching.InactivityTimeout = time.Second
			c, err := New(srv.config(), Options{Logger: slog.New(slog.DiscardHandler), Settings: &set})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			held := make(chan error, 1)
			go func() { held <- c.raw.Get().AbsPath("/api/v1/namespaces/ns/configmaps").Do(ctx).Error() }()
			if req := srv.waitFor(t, "the list"); req != "GET /api/v1/namespaces/ns/configmaps" {
				t.Fatalf("waiting on the silent connection: %s, want the list", req)
			}
			tt.trigger(t, ctx, c, srv)
			select {
			case <-held:
			case <-time.After(20 * time.Second):
				t.Fatal("the list still waits on the silent connection 20s later")
			}
			if _, h2 := srv.protos.Load("HTTP/2.0"); !h2 {
				t.Errorf("the client did not speak HTTP/2; the test shows nothing")
			}
		})
	}
}

// TestSilentWatchClosesItsConnection: a watch stream that stays silent for
// the inactivity timeout, and a watch request unanswered for as long, end
// by closing their connection (HTTP/1.1), not only the request, so that
// the resumed watch dials a new one.
func TestSilentWatchClosesItsConnection(t *testing.T) {
	for _, headers := range []bool{true, false} {
		t.Run(fmt.Sprintf("headers=%v", headers), func(t *testing.T) {
			var closed atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if headers {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusOK)
					w.(http.Flusher).Flush()
				}
				<-r.Context().Done()
			}))
			srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
				if st == http.StateClosed {
					closed.Add(1)
				}
			}
			srv.Start()
			t.Cleanup(srv.Close)
			c := watchingClient(t, srv.URL, settings.Watching{InactivityTimeout: 200 * time.Millisecond})
			w, err := c.listWatch(kexGVR, "ns", "test").WatchFuncWithContext(t.Context(), metav1.ListOptions{})
			if events := collect(t, w, err); len(events) != 0 {
				t.Errorf("events %v, want none", events)
			}
			deadline := time.Now().Add(20 * time.Second)
			for closed.Load() == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the silent watch ended, but its connection is still open 20s later")
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
