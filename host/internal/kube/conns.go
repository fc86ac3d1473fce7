package kube

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"k8s.io/client-go/util/connrotation"
)

// connPool is the set of connections that the client's requests other than
// watch streams ride on (one HTTP/2 connection, as a rule): its dialer
// tracks them, so that they can be closed all at once, busy or idle, when a
// request ran out of its time without an answer or a watch went silent
// (stall.go).
type connPool struct {
	dialer  *connrotation.Dialer
	timeout time.Duration // of an attempt, for the log
	log     *slog.Logger
	now     func() time.Time

	mu      sync.Mutex
	dropped time.Time // when the connections were last closed
}

// The dialer of the pool's connections when the rest config brings none:
// client-go's own, which a rest config without Dial gets.
const (
	dialTimeout   = 30 * time.Second
	dialKeepAlive = 30 * time.Second
)

// newConnPool tracks the connections that dial opens (nil: client-go's
// dialer) for requests whose attempts are bounded by timeout.
func newConnPool(dial func(ctx context.Context, network, address string) (net.Conn, error),
	timeout time.Duration, log *slog.Logger) *connPool {
	if dial == nil {
		dial = (&net.Dialer{Timeout: dialTimeout, KeepAlive: dialKeepAlive}).DialContext
	}
	return &connPool{dialer: connrotation.NewDialer(dial), timeout: timeout, log: log, now: time.Now}
}

// timedOut closes every connection of the pool after an attempt that began
// at start ran out of its time without an answer (retry.go): the requests
// waiting on them fail at once with a lost connection, and their retries
// dial new ones. It reports whether it closed them (see drop).
func (p *connPool) timedOut(start time.Time) bool {
	return p.drop(start, "a request unanswered within its timeout", "timeout", p.timeout)
}

// drop closes every connection of the pool, for the reason given, unless
// they were closed since the time given already: whatever went silent then
// is gone, and what times out together (several requests, several watches)
// closes the connections once. It reports whether it closed them.
func (p *connPool) drop(since time.Time, reason string, attrs ...any) bool {
	p.mu.Lock()
	if since.Before(p.dropped) {
		p.mu.Unlock()
		return false
	}
	p.dropped = p.now()
	p.mu.Unlock()
	p.log.Warn("closing the connections to the API server, so that requests go out on new ones: "+reason, attrs...)
	p.dialer.CloseAll()
	return true
}
