package gate

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// Gate is the host-wide handling switch: open while no blocker is on. The
// zero value is not usable; call [New]. A nil *Gate is always open, so
// callers without pausing pass nil.
type Gate struct {
	mu       sync.Mutex
	blockers map[string]string // name -> reason
	changed  chan struct{}     // closed and replaced at every change
	inflight int
	idle     chan struct{} // closed and replaced when inflight drops to 0
}

// New returns an open gate.
func New() *Gate {
	return &Gate{blockers: map[string]string{}, changed: make(chan struct{}), idle: make(chan struct{})}
}

// Block turns the blocker name on with a reason (or updates its reason)
// and reports whether the gate was open before.
func (g *Gate) Block(name, reason string) (wasOpen bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	wasOpen = len(g.blockers) == 0
	if old, on := g.blockers[name]; on && old == reason {
		return wasOpen
	}
	g.blockers[name] = reason
	g.notify()
	return wasOpen
}

// Unblock turns the blocker name off and reports whether the gate is open
// now.
func (g *Gate) Unblock(name string) (open bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, on := g.blockers[name]; on {
		delete(g.blockers, name)
		g.notify()
	}
	return len(g.blockers) == 0
}

// Blocked reports whether the blocker name is on.
func (g *Gate) Blocked(name string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_, on := g.blockers[name]
	return on
}

// notify wakes the followers; g.mu is held.
func (g *Gate) notify() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// Open reports whether no blocker is on.
func (g *Gate) Open() bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.blockers) == 0
}

// Reason is why the gate is closed: the reasons of the blockers that are
// on, by blocker name, joined with "; " ("" when open).
func (g *Gate) Reason() string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	names := make([]string, 0, len(g.blockers))
	for name := range g.blockers {
		names = append(names, name)
	}
	slices.Sort(names)
	reasons := make([]string, len(names))
	for i, name := range names {
		reasons[i] = g.blockers[name]
	}
	return strings.Join(reasons, "; ")
}

// Changed returns a channel closed at the next change of the blockers.
// Read the state after taking the channel, so no change is missed. A nil
// gate never changes.
func (g *Gate) Changed() <-chan struct{} {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changed
}

// Enter starts a unit of handling (a processing cycle, a timer run) and
// reports whether it may run: false while the gate is closed. Every Enter
// that returned true must be followed by one [Gate.Leave].
func (g *Gate) Enter() bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.blockers) > 0 {
		return false
	}
	g.inflight++
	return true
}

// Leave ends a unit of handling that [Gate.Enter] let in.
func (g *Gate) Leave() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	if g.inflight == 0 {
		close(g.idle)
		g.idle = make(chan struct{})
	}
}

// InFlight tells how many units of handling are running.
func (g *Gate) InFlight() int {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inflight
}

// Drained waits until no unit of handling is in flight, or ctx ends (its
// error is returned then). Call it after closing the gate: while the gate
// is open new units may enter at any time.
func (g *Gate) Drained(ctx context.Context) error {
	if g == nil {
		return nil
	}
	for {
		g.mu.Lock()
		n, idle := g.inflight, g.idle
		g.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
