package e2etest

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy is a TCP proxy in front of an address (an API server) that can
// silently stop forwarding the connections established so far, as a load
// balancer or NAT that drops a connection without a word does: the bytes
// each side sends are read and thrown away, nothing is closed, and
// connections made afterwards are forwarded as before.
type Proxy struct {
	ln       net.Listener
	upstream string

	mu     sync.Mutex
	conns  []*proxied
	closed bool
	// Accepted counts the connections accepted since the start.
	Accepted atomic.Int64
	// held freezes connections from their start (Hold).
	held atomic.Bool
}

// proxied is one client connection and its upstream connection.
type proxied struct {
	client, server net.Conn
	frozen         atomic.Bool
	// h2: the client's TLS hello offered HTTP/2 (set before the first
	// bytes are forwarded).
	h2 atomic.Bool
}

// NewProxy listens on a free port of 127.0.0.1 and forwards to upstream
// (host:port) until the test ends.
func NewProxy(tb testing.TB, upstream string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{ln: ln, upstream: upstream}
	go p.serve()
	tb.Cleanup(p.Close)
	return p
}

// Addr is the proxy's address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Freeze silently stops forwarding every connection open now, and returns
// how many there were.
func (p *Proxy) Freeze() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.conns {
		if !c.frozen.Swap(true) {
			n++
		}
	}
	return n
}

// Hold, while on, freezes every connection from its start: a client that
// connects again gets neither an answer nor a refusal, as behind a path
// that swallows everything. Off, new connections are forwarded again;
// those accepted while held stay frozen.
func (p *Proxy) Hold(on bool) { p.held.Store(on) }

// FreezeMultiplexed silently stops forwarding the connections open now
// whose TLS handshake offered HTTP/2 (ALPN "h2"): the connection a
// client-go client shares among its requests, while watches on HTTP/1.1
// connections of their own go on. It returns how many it froze.
func (p *Proxy) FreezeMultiplexed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.conns {
		if c.h2.Load() && !c.frozen.Swap(true) {
			n++
		}
	}
	return n
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	_ = p.ln.Close()
	for _, c := range conns {
		c.close()
	}
}

func (p *Proxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.Accepted.Add(1)
		server, err := net.Dial("tcp", p.upstream)
		if err != nil {
			_ = client.Close()
			continue
		}
		c := &proxied{client: client, server: server}
		c.frozen.Store(p.held.Load())
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.close()
			return
		}
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		go c.pipe(server, client, true)
		go c.pipe(client, server, false)
	}
}

// alpnH2 is how the protocol "h2" appears in a TLS hello's ALPN list:
// its length, then its name. Random bytes of the hello match it with a
// chance of a few in ten million.
var alpnH2 = []byte("\x02h2")

// pipe copies from src to dst until either side closes; once frozen, what
// it reads is dropped. hello says src is the client, whose first bytes are
// its TLS hello.
func (c *proxied) pipe(dst, src net.Conn, hello bool) {
	defer c.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if hello && n > 0 {
			c.h2.Store(bytes.Contains(buf[:n], alpnH2))
			hello = false
		}
		if n > 0 && !c.frozen.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // EOF, or the connection closed
			return
		}
	}
}

func (c *proxied) close() {
	_ = c.client.Close()
	_ = c.server.Close()
}
