package kube

// Reporting the watch events that the decoder skipped for passing a cap
// (jsondecode.SkippedEvent): an error in the log and a Warning Event on
// the object, once per object version.

import (
	"context"
	"sync"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube/jsondecode"
)

// skipLog remembers the events reported as skipped, so that a watch
// resumed from before one (after a server timeout) does not report it
// again. Its zero value is ready.
type skipLog struct {
	mu   sync.Mutex
	seen map[string]bool
}

// first reports whether ev is reported for the first time.
func (l *skipLog) first(ev jsondecode.SkippedEvent) bool {
	if ev.UID == "" || ev.ResourceVersion == "" {
		return true
	}
	key := ev.UID + "@" + ev.ResourceVersion
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[key] {
		return false
	}
	if l.seen == nil || len(l.seen) >= 1024 {
		l.seen = map[string]bool{}
	}
	l.seen[key] = true
	return true
}

// reportSkipped logs a skipped event as an error and posts a Warning Event
// on its object when the object is known; a repeat is a debug message.
func (c *Client) reportSkipped(ctx context.Context, ws watchScope, ev jsondecode.SkippedEvent) {
	attrs := []any{"resource", ws.String(), "namespace", ev.Namespace, "name", ev.Name, "uid", ev.UID,
		"resourceVersion", ev.ResourceVersion, "bytes", ev.Bytes, "depth", ev.Depth}
	if !c.skips.first(ev) {
		c.log.Debug(ev.Message(), attrs...)
		return
	}
	if ev.Stub() != nil {
		c.log.Warn(ev.Message()+" The deletion is passed on with the object's name only.", attrs...)
		return
	}
	c.log.Error(ev.Message(), attrs...)
	if ev.Name == "" || ev.Kind == "" || ev.APIVersion == "" {
		return
	}
	about := ObjectRef{APIVersion: ev.APIVersion, Kind: ev.Kind, Namespace: ev.Namespace, Name: ev.Name, UID: ev.UID}
	_ = c.PostEvent(ctx, about, abi.EventRequest{Type: "Warning", Reason: "WatchEventSkipped", Message: ev.Message()})
}
