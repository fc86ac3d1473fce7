package kube

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/connrotation"
)

// connPool is the set of connections that the client's requests other than
// watch streams ride on (one HTTP/2 connection, as a rule): its dialer
// tracks them, so that they can be closed all at once, busy or idle, when a
// request ran out of its time without an answer on a connection that a
// probe finds silent too, or when a watch went silent (stall.go).
type connPool struct {
	dialer  *connrotation.Dialer
	timeout time.Duration // of an attempt, for the log
	log     *slog.Logger
	now     func() time.Time
	// probe sends a short request on the pool (probeTimeout bounds it)
	// and reports whether it got an answer, any HTTP status; nil: no
	// probe, a timeout closes the connections.
	probe        func(ctx context.Context) bool
	probeTimeout time.Duration

	probing sync.Mutex // one probe at a time: attempts that time out together probe once
	mu      sync.Mutex
	gen     uint64    // the connections' generation: how often they were closed
	dropped time.Time // when the connections were last closed
	closed  bool      // by close: no more probes, which would dial
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

// pooledConn is a connection of the pool with the generation it was dialed
// in.
type pooledConn struct {
	net.Conn
	gen uint64
}

// dial opens a connection of the pool (the transport's dialer).
func (p *connPool) dial(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := p.dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return &pooledConn{Conn: conn, gen: p.gen}, nil
}

// connUse is the connection one attempt of a request went out on, as
// [connPool.track] saw it.
type connUse struct {
	start uint64                     // the generation when the attempt began
	conn  atomic.Pointer[pooledConn] // the last connection it got; nil: none yet
}

// attempt follows one attempt of a request (retry.go): it returns the
// attempt's context and what to call when the attempt ran out of its time
// without an answer.
func (p *connPool) attempt(ctx context.Context) (context.Context, func()) {
	ctx, use := p.track(ctx)
	return ctx, func() { p.timedOut(use) }
}

// track returns ctx with a trace that records the connection the attempt
// made with it goes out on.
func (p *connPool) track(ctx context.Context) (context.Context, *connUse) {
	p.mu.Lock()
	use := &connUse{start: p.gen}
	p.mu.Unlock()
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if pc := pooledOf(info.Conn); pc != nil {
			use.conn.Store(pc)
		}
	}}), use
}

// pooledOf unwraps the connection that a transport handed a request.
func pooledOf(conn net.Conn) *pooledConn {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	pc, _ := conn.(*pooledConn)
	return pc
}

// generation is the generation of the connection an attempt used, or the
// one when it began if it got none.
func (u *connUse) generation() uint64 {
	if pc := u.conn.Load(); pc != nil {
		return pc.gen
	}
	return u.start
}

// timedOut decides, after an attempt ran out of its time without an answer
// (retry.go), whether its connection went silent, and then
// closes every connection of the pool: the requests waiting on them fail
// at once with a lost connection, and their retries dial new ones. The
// connections are left alone when they were closed since the attempt's
// connection was dialed (whatever went silent then is gone), or when a
// probe on the pool gets an answer on that connection (the server was
// slow, the connection is alive). It reports whether it closed them.
func (p *connPool) timedOut(use *connUse) bool {
	p.probing.Lock()
	defer p.probing.Unlock()
	gen := use.generation()
	if p.closedSince(gen) || p.answers(use.conn.Load(), "a request ran out of its timeout", "timeout", p.timeout) {
		return false
	}
	return p.dropGen(gen, "a request unanswered within its timeout", "timeout", p.timeout)
}

// silentWatch decides, after a watch stream went silent for silence or a
// watch request went unanswered as long (stall.go), whether the API server
// answers: a probe on the pool. Without an answer it closes the pool's
// connections, unless they were closed since the silence began. A silent
// stream alone says little: the API server sends a bookmark only when the
// resource's cache has a newer resource version than the watch saw, so a
// watch of a resource nothing changes can wait minutes for one (right
// after a streamed listing, whose resource version is the newest, always).
// It reports whether the probe was answered (the connections are kept).
func (p *connPool) silentWatch(silence time.Duration) (answered bool) {
	p.probing.Lock()
	defer p.probing.Unlock()
	p.mu.Lock()
	since, gen, shut := p.now().Add(-silence), p.gen, p.closed
	closed := since.Before(p.dropped)
	p.mu.Unlock()
	if shut {
		return true // the client is closed: nothing to probe or close
	}
	if closed {
		return false
	}
	if p.answers(nil, "") {
		return true
	}
	p.dropGen(gen, "a silent watch", "inactivity", silence)
	return false
}

func (p *connPool) closedSince(gen uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return gen != p.gen
}

// answers probes the pool and reports whether the probe got an answer on
// conn (nil: on any connection). An answer on another connection (the
// transport dials one when conn has no stream left) says nothing of conn.
// what and attrs say why it probed, in the log line of an answer (none
// for ""). A closed pool does not probe: it reports an answer.
func (p *connPool) answers(conn *pooledConn, what string, attrs ...any) bool {
	p.mu.Lock()
	shut := p.closed
	p.mu.Unlock()
	if shut {
		return true
	}
	if p.probe == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.probeTimeout)
	defer cancel()
	ctx, use := p.track(ctx)
	if !p.probe(ctx) {
		return false
	}
	if got := use.conn.Load(); conn != nil && got != conn {
		return false
	}
	if what != "" {
		p.log.Info(what+", but the connections to the API server answer: kept", attrs...)
	}
	return true
}

// dropGen closes every connection of the pool unless they were closed
// since generation gen.
func (p *connPool) dropGen(gen uint64, reason string, attrs ...any) bool {
	p.mu.Lock()
	if gen != p.gen {
		p.mu.Unlock()
		return false
	}
	p.gen++
	p.dropped = p.now()
	p.mu.Unlock()
	p.log.Warn("closing the connections to the API server, so that requests go out on new ones: "+reason, attrs...)
	p.dialer.CloseAll()
	return true
}

// close closes every connection of the pool for good: later timeouts and
// silent watches neither probe nor close anything (Client.Close).
func (p *connPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.dialer.CloseAll()
}
