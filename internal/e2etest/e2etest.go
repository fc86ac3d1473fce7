// Package e2etest holds the small pieces that the end-to-end tests of
// several packages share (the reactor's, the host's, the CLI's and the
// examples'): waiting for a condition on the real control plane, and a log
// buffer the operator's goroutines may write to. It imports nothing of
// Kubernetes; each test package keeps its own object helpers.
package e2etest

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// Eventually polls cond every 50ms until it returns nil, and fails tb with
// what and cond's last error when timeout passes first.
func Eventually(tb testing.TB, timeout time.Duration, what string, cond func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("%s: not within %s: %v", what, timeout, err)
}

// LogBuffer collects logs, safely for concurrent writers.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
