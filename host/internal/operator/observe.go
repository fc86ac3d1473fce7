package operator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/certs"
	"github.com/kopf-wasm/kopf-wasm/host/internal/hosterr"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
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
	// removeSource stops the metrics reading this host's modules.
	removeSource func()
}

// readiness is what /readyz checks.
type readiness func() error

// startObserving starts the servers the options ask for; none when both
// addresses are off ("" or "0").
func startObserving(kc *kube.Client, ready readiness, set *moduleSet, opts Options) (*observing, error) {
	o := &observing{set: opts.Settings.Observability}
	o.removeSource = metrics.AddModuleSource(set.stats)
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
			h = newMetricsAuth(kc, h, o.set, opts.Logger, nil)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", h)
		var tlsConfig *tls.Config
		if opts.MetricsSecure {
			serverCerts, err := metricsCerts(opts)
			if err != nil {
				o.close()
				return nil, err
			}
			tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: serverCerts.GetCertificate}
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
func metricsCerts(opts Options) (*certs.Certs, error) {
	if opts.MetricsCertDir != "" {
		c, err := certs.FromDir(opts.MetricsCertDir)
		if err != nil {
			return nil, fmt.Errorf("metrics certificate: %w (put tls.crt and tls.key in %s)", err, opts.MetricsCertDir)
		}
		return c, nil
	}
	return certs.SelfSigned([]string{"localhost", "127.0.0.1"}, time.Now())
}

func (o *observing) serve(what, addr string, h http.Handler, tlsConfig *tls.Config, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%w: %s endpoint %s: %w (pick another address)", hosterr.ErrUsage, what, addr, err)
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
	o.removeSource()
}
