package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"
)

// liveness serves Options.Liveness: 200 "ok" while the operator runs, 503
// otherwise. It is Kopf's -L endpoint without the probe handlers (the host
// does not run probe handlers yet).
type liveness struct {
	addr   string // the address it listens on, once started
	alive  atomic.Bool
	server *http.Server
	done   chan struct{}
}

// startLiveness listens on the URL's address and serves its path; an empty
// URL gives a liveness that serves nothing.
func startLiveness(raw string, log *slog.Logger) (*liveness, error) {
	l := &liveness{}
	if raw == "" {
		return l, nil
	}
	host, path, err := parseLiveness(raw)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", host)
	if err != nil {
		return nil, fmt.Errorf("liveness endpoint %s: %w (pick another address with -L)", raw, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
		if !l.alive.Load() {
			http.Error(w, "not running", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	l.addr = ln.Addr().String()
	l.server = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		if err := l.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("liveness endpoint stopped", "error", err)
		}
	}()
	log.Info("liveness endpoint serving", "url", "http://"+ln.Addr().String()+path)
	return l, nil
}

func (l *liveness) setAlive(v bool) { l.alive.Store(v) }

// close stops the server, if any.
func (l *liveness) close() {
	if l.server == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = l.server.Shutdown(ctx)
	<-l.done
}

// parseLiveness splits a liveness URL into the address to listen on and the
// path to serve.
func parseLiveness(raw string) (addr, path string, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return "", "", fmt.Errorf("%w: liveness endpoint %q: want a URL such as http://0.0.0.0:8080/healthz", ErrUsage, raw)
	}
	path = u.Path
	if path == "" {
		path = "/"
	}
	return u.Host, path, nil
}
