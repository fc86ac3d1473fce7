package kube

import (
	"context"
	"testing"
	"time"
)

// TestConnPoolSilentWatch: a silent watch stream closes the pool's
// connections only when a probe gets no answer on any of them. A watch of
// a resource nothing changes gets no bookmark for minutes after a streamed
// listing; closing every connection then cut the requests in flight (the
// N=50,000 benchmark: 16 retried patches, 70 s after the start).
func TestConnPoolSilentWatch(t *testing.T) {
	tests := []struct {
		name   string
		probe  testProbe // given the busy connection, then a fresh one
		closes bool
	}{
		{"answered", answeredOnFirst, false},
		{"answered on a new connection", answeredOnSecond, false},
		{"no answer", unanswered, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, dial, closed := poolOfPipes(t)
			busy, fresh := dial(), dial()
			p.probeTimeout = 10 * time.Millisecond
			p.probe = func(ctx context.Context) bool { return tt.probe(ctx, busy, fresh) }
			if answered := p.silentWatch(time.Minute); answered == tt.closes || (closed() == 2) != tt.closes {
				t.Errorf("answered: %v, %d of 2 connections closed; want closed: %v", answered, closed(), tt.closes)
			}
		})
	}
}

// TestConnPoolClosedDoesNotProbe: once the client is closed, a silent
// watch or a timed-out attempt (an informer stopping as its timer fires)
// neither probes, which would dial a connection nobody closes, nor closes.
func TestConnPoolClosedDoesNotProbe(t *testing.T) {
	p, dial, _ := poolOfPipes(t)
	conn := dial()
	probed := false
	p.probe = func(context.Context) bool { probed = true; return false }
	p.close()
	if !p.silentWatch(time.Minute) || p.timedOut(usedOn(p, conn)) || probed {
		t.Errorf("a closed pool probed (%v) or reported a close", probed)
	}
}
