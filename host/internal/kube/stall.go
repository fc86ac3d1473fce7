package kube

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
)

// Stalled watches. A watch stream on which nothing, not even a bookmark,
// arrived within settings.Watching.InactivityTimeout is ended, and the
// informer resumes the watch from the last resourceVersion it saw, so no
// change is lost (a resourceVersion too old by then is answered 410 Gone
// and the informer lists again). A load balancer or NAT may have dropped
// the connection without a word; or the resource is only quiet: the API
// server sends no bookmark newer than what the watch saw, and after a
// streamed listing the watch saw the newest. A probe of the API server
// (conns.go) tells the two apart. Only a stream silent while the probe
// gets no answer, or a watch request unanswered for as long, is stalled:
// until the new stream answers, [Client.Stalled] names it (the host's
// readiness fails) and kopf_wasm_watch_stalled is 1.
//
// Watch streams ride on connections of their own (HTTP/1.1, one stream per
// connection), so that ending a silent stream closes its connection (a
// response body closed before its end, or a request cancelled before its
// answer, takes its HTTP/1.1 connection with it) and the resumed watch dials
// a new one; over HTTP/2 the new request would be multiplexed onto the same
// silent connection. Other requests share one HTTP/2 connection (conns.go).
//
// A stalled watch often means a broken path, and a request that runs out
// of settings.Kube.RequestTimeout without an answer (retry.go) may have
// waited on a silent connection: when a probe of the API server gets no
// answer either, the client closes every connection of the other
// requests, busy or idle, as the kubelet does after a failed heartbeat
// (client-go's connrotation dialer). The requests still waiting on a
// silent connection fail at once with a lost connection and are retried on
// a new one. Closing only the idle connections is not enough: while
// another request waits on the silent HTTP/2 connection, it is not idle,
// new requests keep joining it, and only HTTP/2's health check would close
// it (30 s + 15 s). A timed-out request does not close the watches'
// connections: each has its own inactivity timeout.

// stallTracker records the watches that are stalled now.
type stallTracker struct {
	mu      sync.Mutex
	stalled map[watchScope]time.Time // since when
	// onStall free the connections that a stall makes suspect.
	onStall []func()
}

// watchScope names one watch stream: a resource (GVR string) in a namespace
// ("" for all).
type watchScope struct{ resource, namespace string }

func (s watchScope) String() string {
	if s.namespace == "" {
		return s.resource
	}
	return s.resource + " in " + s.namespace
}

func newStallTracker() *stallTracker {
	return &stallTracker{stalled: map[watchScope]time.Time{}}
}

// stall marks a watch stalled and calls onStall.
func (t *stallTracker) stall(s watchScope) {
	t.mu.Lock()
	_, was := t.stalled[s]
	if !was {
		t.stalled[s] = time.Now()
	}
	onStall := t.onStall
	t.mu.Unlock()
	if !was {
		metrics.WatchStalled(s.resource, s.namespace, true)
	}
	for _, f := range onStall {
		f()
	}
}

// resume marks a watch's stream answered again.
func (t *stallTracker) resume(s watchScope) {
	t.mu.Lock()
	_, was := t.stalled[s]
	delete(t.stalled, s)
	t.mu.Unlock()
	if was {
		metrics.WatchStalled(s.resource, s.namespace, false)
	}
}

// Stalled names the watches that are stalled now ("RESOURCE" or "RESOURCE
// in NAMESPACE", with since when), sorted; empty when none is.
func (c *Client) Stalled() []string {
	c.stalls.mu.Lock()
	defer c.stalls.mu.Unlock()
	out := make([]string, 0, len(c.stalls.stalled))
	for s, since := range c.stalls.stalled {
		out = append(out, fmt.Sprintf("%s (silent since %s)", s, since.UTC().Format(time.RFC3339)))
	}
	slices.Sort(out)
	return out
}

// watchClient builds the client of watch streams: cfg over HTTP/1.1, with
// a transport of its own that dials with dial (nil: client-go's dialer),
// not the dialer of the other requests' connections.
func watchClient(cfg *rest.Config, dial func(ctx context.Context, network, address string) (net.Conn, error)) (rest.Interface, *http.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.TLSClientConfig.NextProtos = []string{"http/1.1"}
	cfg.Dial = dial
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	raw, err := rawClient(cfg, hc)
	return raw, hc, err
}

// headerDeadline ends ctx when the inactivity timeout passes before
// [stopDeadline] is called with the returned stop function; the context
// then lives until the stream ends (cancel).
func headerDeadline(ctx context.Context, timeout time.Duration) (_ context.Context, stop func() bool, cancel context.CancelFunc) {
	ctx, cancel = context.WithCancel(ctx)
	if timeout <= 0 {
		return ctx, func() bool { return true }, cancel
	}
	t := time.AfterFunc(timeout, cancel)
	return ctx, t.Stop, cancel
}
