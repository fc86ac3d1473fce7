package admission

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/certs"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Cluster keeps the managed configurations: *kube.Client, or a fake. A
// Cluster that is also a [SecretStore] (*kube.Client is) keeps the shared
// certificate of settings.Admission.CertSecret.
type Cluster interface {
	// SetWebhooks creates the configuration (validating, or mutating when
	// mutating is set) named name, or replaces its webhooks.
	SetWebhooks(ctx context.Context, mutating bool, name string, webhooks json.RawMessage) error
	// SetConversion sets the spec.conversion of the CRD named crd and
	// returns the versions the CRD serves.
	SetConversion(ctx context.Context, crd string, conversion json.RawMessage) (served []string, err error)
}

// Engine runs the server while the host serves webhook handlers and keeps
// the managed configurations: the reactor calls [Engine.Update] when it
// starts and after every module swap, and [Engine.Stop] on a clean stop.
type Engine struct {
	srv     *Server
	cluster Cluster     // nil: unmanaged
	secrets SecretStore // nil: no shared certificate can be kept
	log     *slog.Logger

	mu      sync.Mutex
	runCtx  context.Context // ends at Stop, not with the host's context
	stopRun context.CancelFunc
	httpSrv *http.Server
	certs   *certs.Certs
	shared  *sharedCert // nil unless settings.Admission.CertSecret
	url     string      // https://host:port
	done    chan struct{}
}

// New returns an engine; cluster may be nil when no configuration is
// managed (settings.Admission.Managed empty) or offline.
func New(opts Options, cluster Cluster) *Engine {
	srv := NewServer(opts)
	secrets, _ := cluster.(SecretStore)
	if opts.Settings.Managed == "" {
		cluster = nil
	}
	return &Engine{srv: srv, cluster: cluster, secrets: secrets, log: srv.log}
}

// Server is the engine's http.Handler.
func (e *Engine) Server() *Server { return e.srv }

// URL is the server's base URL ("" until it started).
func (e *Engine) URL() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.url
}

// Bundle is the PEM of the CA that signed the server's certificate (nil
// until it started).
func (e *Engine) Bundle() []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.certs == nil {
		return nil
	}
	return e.certs.Bundle()
}

// hasWebhooks reports whether reg has a validating, mutating or convert
// handler.
func hasWebhooks(reg *registry.Registry) bool {
	if reg == nil {
		return false
	}
	for _, ref := range reg.Resources() {
		if len(reg.Handlers(ref, abi.KindValidate, abi.KindMutate, abi.KindConvert)) > 0 {
			return true
		}
	}
	return false
}

// Update starts the server once the served modules have a webhook
// handler (it then serves until Stop), and brings the managed
// configurations up to date with the handlers served now (empty ones when
// there are none, which clears what a crashed host left).
func (e *Engine) Update(ctx context.Context) error {
	reg := e.srv.opts.Registry()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.runCtx == nil {
		// The server outlives ctx until Stop: the cycles the host drains
		// when it stops still patch objects through these webhooks.
		e.runCtx, e.stopRun = context.WithCancel(context.WithoutCancel(ctx))
	}
	switch {
	case e.httpSrv == nil && hasWebhooks(reg):
		if err := e.start(e.runCtx); err != nil {
			return err
		}
	case e.shared != nil && e.httpSrv != nil:
		// A replica that has not picked up a new shared certificate
		// would write the old CA alone.
		e.refreshShared(ctx)
	}
	return e.configure(ctx, reg, nil)
}

// configure writes the managed configurations; e.mu is held.
func (e *Engine) configure(ctx context.Context, reg *registry.Registry, keep func(*registry.Handler) bool) error {
	if e.cluster == nil {
		return nil
	}
	if e.httpSrv == nil {
		// No webhook handler yet: the configurations are written empty, so
		// that entries a crashed host left behind block nothing.
		reg = nil
	}
	if e.shared != nil && e.httpSrv != nil && len(e.certs.Bundle()) == 0 {
		// No shared certificate yet (logged): the other replicas' caBundle
		// stays; written once this one has the certificate.
		return nil
	}
	s := e.srv.opts.Settings
	ep := Endpoint{URL: e.url, TimeoutSeconds: int32(s.TimeoutSeconds)}
	if e.certs != nil {
		ep.CABundle = e.certs.Bundle()
	}
	if ns, name, ok := strings.Cut(s.Service, "/"); ok {
		port := int32(s.ServicePort)
		ep.Service = &admissionregistrationv1.ServiceReference{Namespace: ns, Name: name, Port: &port}
	}
	hooks := WebhooksOf(reg, s.Managed, ep, keep)
	var errs []error
	for _, mutating := range []bool{false, true} {
		list, err := hooks.JSON(mutating)
		if err == nil {
			err = e.cluster.SetWebhooks(ctx, mutating, s.Managed, list)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if keep == nil { // conversions stay after a stop: objects must stay readable
		errs = append(errs, e.configureConversions(ctx, reg, ep))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("admission: managed webhook configurations %s: %w", s.Managed, err)
	}
	e.log.Info("webhook configurations updated", "name", s.Managed, "validating", len(hooks.Validating), "mutating", len(hooks.Mutating))
	return nil
}

// configureConversions points the CRD of every convert handler at it
// (the first handler of a CRD wins, the others are logged); e.mu is held.
func (e *Engine) configureConversions(ctx context.Context, reg *registry.Registry, ep Endpoint) error {
	if reg == nil {
		return nil
	}
	var errs []error
	done := map[string]string{}
	for _, ref := range reg.Resources() {
		for _, h := range reg.Handlers(ref, abi.KindConvert) {
			crd, conv, err := conversionFor(h, ep)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if first, dup := done[crd]; dup {
				e.log.Error(fmt.Sprintf("Handler '%s' of module %s is not the conversion of %s: %s is", h.ID(), h.Module, crd, first))
				continue
			}
			done[crd] = h.Module + "/" + h.ID()
			served, err := e.cluster.SetConversion(ctx, crd, conv)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			e.log.Info("CRD conversion set", "crd", crd, "handler", h.ID(), "module", h.Module, "served", served)
			if msg := undeclaredVersions(h, crd, served); msg != "" {
				e.log.Warn(msg, "crd", crd, "handler", h.ID(), "module", h.Module)
			}
		}
	}
	return errors.Join(errs...)
}

// start listens and serves until ctx ends (at Stop); e.mu is held.
func (e *Engine) start(ctx context.Context) error {
	s := e.srv.opts.Settings
	listenHost, _, err := net.SplitHostPort(s.Listen)
	if err != nil {
		return fmt.Errorf("admission: listen address %q: %w", s.Listen, err)
	}
	host := s.Host
	if host == "" {
		host = listenHost
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			host = "localhost"
		}
	}
	certs, err := e.loadCerts(ctx, host, listenHost)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.Listen)
	if err != nil {
		return fmt.Errorf("admission: %w", err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	// HTTP/2 offered (the API server's webhook client speaks it, and
	// multiplexes its calls on one connection), HTTP/1.1 kept: Serve with
	// a listener of our own offers only what NextProtos lists.
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate,
		NextProtos: []string{"h2", "http/1.1"}}
	srv := &http.Server{
		Handler:           instrument(e.srv),
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: s.ReadHeaderTimeout,
		ReadTimeout:       s.ReadTimeout,
		IdleTimeout:       s.IdleTimeout,
		ErrorLog:          log.New(slogWriter{e.log}, "", 0),
	}
	e.httpSrv, e.certs, e.url, e.done = srv, certs, "https://"+net.JoinHostPort(host, port), make(chan struct{})
	go func() {
		defer close(e.done)
		if err := srv.Serve(tls.NewListener(ln, srv.TLSConfig)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.log.Error("the admission server stopped", "error", err)
		}
	}()
	go func() {
		<-ctx.Done()
		shutCtx, cancel := context.WithTimeout(context.Background(), s.StopTimeout)
		defer cancel()
		_ = srv.Shutdown(shutCtx)
	}()
	if e.shared != nil {
		go e.followShared(ctx)
	} else {
		go certs.Follow(ctx, s.CertCheckInterval, e.log, func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			if err := e.configure(ctx, e.srv.opts.Registry(), nil); err != nil {
				e.log.Error(err.Error())
			}
		})
	}
	e.log.Info("serving admission webhooks", "address", ln.Addr().String(), "url", e.url, "service", s.Service, "managed", s.Managed)
	return nil
}

// loadCerts reads the certificate folder, takes the shared certificate of
// the Secret, or generates a certificate for the server's names, and
// dumps its CA when asked to; e.mu is held.
func (e *Engine) loadCerts(ctx context.Context, host, listenHost string) (*certs.Certs, error) {
	s := e.srv.opts.Settings
	if s.CertDir != "" {
		return certs.FromDir(s.CertDir)
	}
	names := certNames(s, host, listenHost)
	if s.CertSecret != "" {
		return e.loadShared(ctx, names)
	}
	m, err := certs.Generate(names, time.Now(), s.CertValidity)
	if err != nil {
		return nil, err
	}
	certs, err := certs.FromMaterial(m)
	if err != nil {
		return nil, err
	}
	return certs, e.dumpCA(certs.Bundle())
}

// dumpCA writes the bundle to settings.Admission.CADump, when set.
func (e *Engine) dumpCA(bundle []byte) error {
	if dump := e.srv.opts.Settings.CADump; dump != "" {
		if err := os.WriteFile(dump, bundle, 0o644); err != nil {
			return fmt.Errorf("admission: dump the CA: %w", err)
		}
	}
	return nil
}

// certNames are the names a generated certificate covers: the host,
// the listen address's host (unless unspecified), the Service's names and
// the extra SANs.
func certNames(s settings.Admission, host, listenHost string) []string {
	names := []string{host}
	if ip := net.ParseIP(listenHost); listenHost != "" && listenHost != host && (ip == nil || !ip.IsUnspecified()) {
		names = append(names, listenHost)
	}
	if ns, name, ok := strings.Cut(s.Service, "/"); ok {
		names = append(names, name+"."+ns+".svc", name+"."+ns+".svc.cluster.local")
	}
	return append(names, s.ExtraSANs...)
}

// Stop removes the webhooks of non-persistent handlers from the managed
// configurations (so that a stopped host does not block admissions), then
// stops the server (it waits Settings.StopTimeout for reviews in flight)
// and waits for it. The host calls it once its cycles are done.
func (e *Engine) Stop(ctx context.Context) {
	e.mu.Lock()
	err := e.configure(ctx, e.srv.opts.Registry(), func(h *registry.Handler) bool { return h.Spec.Options.Persistent })
	done := e.done
	if e.stopRun != nil {
		e.stopRun()
	}
	e.mu.Unlock()
	if err != nil {
		e.log.Error(err.Error())
	}
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
}

// slogWriter sends the http.Server's own messages (TLS handshake errors)
// to the log at debug level.
type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.log.Debug(string(p))
	return len(p), nil
}
