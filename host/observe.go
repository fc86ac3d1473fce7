package host

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/admission"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// observing serves the metrics (Options.MetricsBindAddress) and the health
// probes (Options.HealthProbeBindAddress): /healthz answers 200 while the
// process serves, /readyz 200 once the operator serves every change (every
// watch listed and none stalled, every module loaded) and 503 with the
// reason otherwise.
type observing struct {
	set     settings.Observability
	servers []*http.Server
	done    sync.WaitGroup
}

// readiness is what /readyz checks.
type readiness func() error

// startObserving starts the servers the options ask for; none when both
// addresses are off ("" or "0").
func startObserving(kc *kube.Client, ready readiness, set *moduleSet, opts Options) (*observing, error) {
	o := &observing{set: opts.Settings.Observability}
	metrics.SetModuleSource(set.stats)
	if on(opts.HealthProbeBindAddress) {
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			if err := ready(); err != nil {
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte("ok\n"))
		})
		if err := o.serve("health probes", opts.HealthProbeBindAddress, mux, nil, opts.Logger); err != nil {
			o.close()
			return nil, err
		}
	}
	if on(opts.MetricsBindAddress) {
		var h http.Handler = metrics.Handler()
		if opts.MetricsAuth {
			h = &metricsAuth{kc: kc, next: h, log: opts.Logger, ttl: o.set.AuthCacheTTL, cache: map[[32]byte]authDecision{}}
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", h)
		var tlsConfig *tls.Config
		if opts.MetricsSecure {
			certs, err := metricsCerts(opts)
			if err != nil {
				o.close()
				return nil, err
			}
			tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate}
		}
		if err := o.serve("metrics", opts.MetricsBindAddress, mux, tlsConfig, opts.Logger); err != nil {
			o.close()
			return nil, err
		}
	}
	return o, nil
}

// on says whether a bind address asks for a server ("" and "0" do not, as
// controller-runtime's "0").
func on(addr string) bool { return addr != "" && addr != "0" }

// metricsCerts are the metrics server's certificate: tls.crt and tls.key of
// Options.MetricsCertDir, or a self-signed one made now.
func metricsCerts(opts Options) (*admission.Certs, error) {
	if opts.MetricsCertDir != "" {
		c, err := admission.FromDir(opts.MetricsCertDir)
		if err != nil {
			return nil, fmt.Errorf("metrics certificate: %w (put tls.crt and tls.key in %s)", err, opts.MetricsCertDir)
		}
		return c, nil
	}
	return admission.SelfSigned([]string{"localhost", "127.0.0.1"}, time.Now())
}

func (o *observing) serve(what, addr string, h http.Handler, tlsConfig *tls.Config, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%w: %s endpoint %s: %w (pick another address)", ErrUsage, what, addr, err)
	}
	scheme := "http"
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
		scheme = "https"
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: o.set.ReadHeaderTimeout, TLSConfig: tlsConfig}
	o.servers = append(o.servers, srv)
	o.done.Add(1)
	go func() {
		defer o.done.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(what+" endpoint stopped", "error", err)
		}
	}()
	log.Info(what+" endpoint serving", "url", scheme+"://"+ln.Addr().String())
	return nil
}

// close stops the servers.
func (o *observing) close() {
	ctx, cancel := context.WithTimeout(context.Background(), o.set.StopTimeout)
	defer cancel()
	for _, s := range o.servers {
		_ = s.Shutdown(ctx)
	}
	o.done.Wait()
	metrics.SetModuleSource(nil)
}

// metricsAuth lets a request through when its bearer token is one the API
// server accepts (TokenReview) and whose user may get the path
// (SubjectAccessReview of the non-resource URL), as kubebuilder's
// scaffold does since v4.1. Decisions are kept for settings.Observability.AuthCacheTTL by token.
type metricsAuth struct {
	kc   *kube.Client
	next http.Handler
	log  *slog.Logger
	ttl  time.Duration // how long a decision is reused

	mu    sync.Mutex
	cache map[[32]byte]authDecision
}

type authDecision struct {
	code    int // 0: allowed
	message string
	until   time.Time
}

func (a *metricsAuth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		http.Error(w, "Unauthorized: send a bearer token of a user allowed to get "+r.URL.Path, http.StatusUnauthorized)
		return
	}
	d := a.decide(r.Context(), token, r.URL.Path)
	if d.code != 0 {
		http.Error(w, d.message, d.code)
		return
	}
	a.next.ServeHTTP(w, r)
}

func (a *metricsAuth) decide(ctx context.Context, token, path string) authDecision {
	key := sha256.Sum256([]byte(path + "\x00" + token))
	now := time.Now()
	a.mu.Lock()
	d, ok := a.cache[key]
	if ok && now.Before(d.until) {
		a.mu.Unlock()
		return d
	}
	for k, old := range a.cache {
		if now.After(old.until) {
			delete(a.cache, k)
		}
	}
	a.mu.Unlock()
	d = a.review(ctx, token, path)
	if d.code == http.StatusInternalServerError {
		return d // not kept: the API server may answer next time
	}
	d.until = now.Add(a.ttl)
	a.mu.Lock()
	a.cache[key] = d
	a.mu.Unlock()
	return d
}

func (a *metricsAuth) review(ctx context.Context, token, path string) authDecision {
	who, ok, err := a.kc.Authenticate(ctx, token)
	if err != nil {
		a.log.Warn("metrics: the token review failed", "error", err)
		return authDecision{code: http.StatusInternalServerError, message: "authentication failed: " + err.Error()}
	}
	if !ok {
		return authDecision{code: http.StatusUnauthorized, message: "Unauthorized: the API server does not accept the token"}
	}
	allowed, reason, err := a.kc.Authorize(ctx, who, "get", path)
	if err != nil {
		a.log.Warn("metrics: the access review failed", "error", err)
		return authDecision{code: http.StatusInternalServerError, message: "authorization failed: " + err.Error()}
	}
	if !allowed {
		msg := fmt.Sprintf("Forbidden: user %q may not get %s (grant the nonResourceURL in a ClusterRole)", who.User, path)
		if reason != "" {
			msg += ": " + reason
		}
		return authDecision{code: http.StatusForbidden, message: msg}
	}
	return authDecision{}
}

// stats are the instance figures of the modules served now.
func (s *moduleSet) stats() []metrics.ModuleStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []metrics.ModuleStats
	for m := range s.served {
		st := m.Stats()
		out = append(out, metrics.ModuleStats{Module: m.Manifest().Module.Name, Instances: st.Live, MemoryBytes: st.MemoryBytes})
	}
	return out
}

// setResources records the Module resources' server, for ready.
func (s *moduleSet) setResources(m *moduleResources) { s.resources.Store(m) }

// ready says whether every module has loaded: the arguments' are before
// the operator starts; those of Module resources once each listed object
// has been served.
func (s *moduleSet) ready() error {
	if m := s.resources.Load(); m != nil {
		return m.ready()
	}
	return nil
}

// reportSwap reports the modules of now that were not in before (loaded,
// and swapped in when before was not empty) and returns now as a set.
func reportSwap(before map[*wasmrt.Module]bool, now []*wasmrt.Module) map[*wasmrt.Module]bool {
	set := make(map[*wasmrt.Module]bool, len(now))
	for _, m := range now {
		set[m] = true
		if !before[m] {
			name := m.Manifest().Module.Name
			metrics.ModuleLoaded(name)
			if before != nil {
				metrics.ModuleSwapped(name)
			}
		}
	}
	return set
}
