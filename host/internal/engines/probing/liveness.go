package probing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/hosterr"
)

// Liveness is Kopf's liveness endpoint (Kopf's health reporter,
// host.HealthOptions.Liveness): while the
// operator runs, the JSON object {probe_id: result} of the modules' probe
// handlers ({} without any), 200 when every probe succeeded and 500 with
// the failing probes as {"error": message} otherwise; 503 while the
// operator does not run. Results are cached (settings.Execution.ProbeCache).
type Liveness struct {
	addr  string // the address it listens on, once started
	alive atomic.Bool
	probe atomic.Pointer[prober]
	// status says whether the host handles or why it is paused (peering,
	// leader election): the Kopf-Wasm-Status header of every answer, and
	// the "kopf-wasm" key of the JSON while paused.
	status atomic.Pointer[func() (paused bool, line string)]
	server *http.Server
	done   chan struct{}
}

// prober answers the probe handlers: a [Prober]'s Probe.
type prober func(ctx context.Context) (Report, error)

// StartLiveness listens on the URL's address and serves its path; an empty
// URL gives a liveness that serves nothing.
func StartLiveness(raw string, log *slog.Logger) (*Liveness, error) {
	l := &Liveness{}
	if raw == "" {
		return l, nil
	}
	host, path, err := ParseLiveness(raw)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", host)
	if err != nil {
		return nil, fmt.Errorf("liveness endpoint %s: %w (pick another address)", raw, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(path, l.serveProbes)
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

// SetAlive says whether the operator runs: the endpoint answers 503 while
// it does not.
func (l *Liveness) SetAlive(v bool) { l.alive.Store(v) }

// SetProber makes the endpoint answer the probe handlers through p.
func (l *Liveness) SetProber(p prober) { l.probe.Store(&p) }

// serveProbes answers one liveness request.
func (l *Liveness) serveProbes(w http.ResponseWriter, r *http.Request) {
	if !l.alive.Load() {
		http.Error(w, "not running", http.StatusServiceUnavailable)
		return
	}
	body, code := []byte("{}"), http.StatusOK
	if p := l.probe.Load(); p != nil {
		report, err := (*p)(r.Context())
		if err != nil {
			http.Error(w, "not probed: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		body = report.JSON()
		if !report.OK() {
			code = http.StatusInternalServerError
		}
	}
	if st := l.status.Load(); st != nil {
		paused, line := (*st)()
		w.Header().Set("Kopf-Wasm-Status", line)
		if paused {
			body = withStatus(body, line)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// SetStatus makes every answer report the host's status.
func (l *Liveness) SetStatus(st func() (paused bool, line string)) { l.status.Store(&st) }

// withStatus adds the host's status line to the probes' JSON object under
// the key "kopf-wasm" (no probe handler can have that id: ids are
// module.handler).
func withStatus(body []byte, line string) []byte {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	m["kopf-wasm"] = line
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// Close stops the server, if any.
func (l *Liveness) Close() {
	if l.server == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = l.server.Shutdown(ctx)
	<-l.done
}

// ParseLiveness splits a liveness URL into the address to listen on and the
// path to serve.
func ParseLiveness(raw string) (addr, path string, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return "", "", fmt.Errorf("%w: liveness endpoint %q: want a URL such as http://0.0.0.0:8080/healthz", hosterr.ErrUsage, raw)
	}
	path = u.Path
	if path == "" {
		path = "/"
	}
	return u.Host, path, nil
}
