package kube

import (
	"context"
	"log/slog"
	"sync"

	"k8s.io/client-go/rest"
)

// maxWarnings bounds the distinct warning messages a client remembers so
// as to log each once; past it, the memory starts again.
const maxWarnings = 256

// warnings logs the API server's warnings (Warning headers: deprecated
// APIs, unknown fields) to the host's logger at warn level, each message
// once per client, instead of client-go's default, which writes every one
// to klog's global logger.
type warnings struct {
	log *slog.Logger

	mu   sync.Mutex
	seen map[string]bool
}

var _ rest.WarningHandlerWithContext = (*warnings)(nil)

// HandleWarningHeaderWithContext implements rest.WarningHandlerWithContext.
func (w *warnings) HandleWarningHeaderWithContext(ctx context.Context, code int, _ string, message string) {
	if code != 299 || message == "" {
		return // only 299 is a warning meant for people (RFC 7234, client-go's rule)
	}
	w.mu.Lock()
	if len(w.seen) >= maxWarnings {
		clear(w.seen)
	}
	first := !w.seen[message]
	w.seen[message] = true
	w.mu.Unlock()
	if first {
		w.log.WarnContext(ctx, "The API server warns: "+message)
	}
}
