package admission

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/certs"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
)

// SecretStore reads and writes the Secret of a shared certificate:
// *kube.Client, or a fake. Its errors wrap kube's classes: [kube.ErrGone]
// for a missing Secret, [kube.ErrExists] for a create that lost,
// [kube.ErrConflict] for an update that did.
type SecretStore interface {
	GetSecret(ctx context.Context, namespace, name string) (*kube.Secret, error)
	CreateSecret(ctx context.Context, namespace, name string, s kube.Secret) (*kube.Secret, error)
	UpdateSecret(ctx context.Context, namespace, name string, s kube.Secret) (*kube.Secret, error)
}

// sharedCert keeps the certificate every replica serves in one Secret
// (settings.Admission.CertSecret): the first replica creates it, each
// replica reads it, and one replaces it when it nears its end or lacks a
// name, with an update that carries the resourceVersion it read, so that
// of replicas racing to write it one wins and the others take the
// winner's.
type sharedCert struct {
	store           SecretStore
	namespace, name string
	names           []string
	validity, renew time.Duration
	now             func() time.Time
	log             *slog.Logger

	served  []byte // tls.crt and ca.crt of what the engine serves
	problem string // the last error logged, so that it is logged once
}

// attempts bounds the reads and writes of one sync that lose races. It is
// fixed, not a setting: a lost race means another replica wrote the
// Secret, and the next read takes the winner's certificate, so a second
// loss in a row is already rare; a sync that still loses ends with an
// error, and the next one comes certCheckInterval later anyway.
const attempts = 3

// sync reads the Secret and returns the certificate to serve: the stored
// one, or one it created or replaced. A Secret that holds no usable
// certificate is left as it is and reported by the error, which says to
// delete it.
func (s *sharedCert) sync(ctx context.Context) (*stored, error) {
	for range attempts {
		sec, err := s.store.GetSecret(ctx, s.namespace, s.name)
		var data map[string][]byte
		switch {
		case errors.Is(err, kube.ErrGone):
		case err != nil:
			return nil, fmt.Errorf("admission: webhook certificate: %w", err)
		default:
			data = sec.Data
			if data == nil {
				data = map[string][]byte{}
			}
		}
		d := decide(data, s.names, s.now(), s.renew)
		switch d.action {
		case actionKeep:
			return d.stored, nil
		case actionMalformed:
			return nil, fmt.Errorf("admission: the Secret %s/%s holds no usable webhook certificate (%s); delete it to have a new one generated: kubectl delete secret -n %s %s",
				s.namespace, s.name, d.reason, s.namespace, s.name)
		}
		st, lost, err := s.write(ctx, d, sec)
		if lost {
			continue // another replica wrote it: read the winner's
		}
		return st, err
	}
	return nil, fmt.Errorf("admission: the Secret %s/%s changed under each of %d attempts to write it; trying again later", s.namespace, s.name, attempts)
}

// write creates, replaces or fills the Secret with a new certificate; lost
// reports a race lost to another writer.
func (s *sharedCert) write(ctx context.Context, d decision, sec *kube.Secret) (_ *stored, lost bool, _ error) {
	m, err := renewal(d, s.now(), s.validity)
	if err != nil {
		return nil, false, err
	}
	if d.action == actionCreate {
		_, err = s.store.CreateSecret(ctx, s.namespace, s.name, kube.Secret{Type: SecretType, Data: secretData(m)})
		lost = errors.Is(err, kube.ErrExists)
	} else {
		// The type stays: it cannot change, and a certificate that loaded
		// serves whatever the Secret's type.
		_, err = s.store.UpdateSecret(ctx, s.namespace, s.name, kube.Secret{Type: sec.Type, Data: secretData(m), ResourceVersion: sec.ResourceVersion})
		lost = errors.Is(err, kube.ErrConflict) || errors.Is(err, kube.ErrGone)
	}
	if lost {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("admission: webhook certificate: %w", err)
	}
	st, err := parseStored(secretData(m))
	if err != nil {
		return nil, false, fmt.Errorf("admission: BUG: a generated certificate does not load: %w", err)
	}
	verb := map[certAction]string{actionCreate: "created", actionReplace: "replaced", actionFill: "filled"}[d.action]
	s.log.Info("webhook certificate Secret "+verb, "secret", s.namespace+"/"+s.name, "because", d.reason,
		"names", d.names, "notAfter", st.leaf.NotAfter.UTC().Format(time.RFC3339))
	return st, false, nil
}

// forget drops what is taken as served, so that the next sync's
// certificate counts as changed (its bundle could not be written).
func (s *sharedCert) forget() { s.served = nil }

// changed reports whether st differs from what is served, and takes it as
// served.
func (s *sharedCert) changed(st *stored) bool {
	key := append(bytes.Clone(st.material.Cert), st.material.CA...)
	if bytes.Equal(key, s.served) {
		return false
	}
	s.served = key
	return true
}

// report logs a failed sync once (until it changes), and a recovery.
func (s *sharedCert) report(err error) {
	switch {
	case err != nil && err.Error() != s.problem:
		s.problem = err.Error()
		s.log.Error(s.problem)
	case err == nil && s.problem != "":
		s.problem = ""
		s.log.Info("the webhook certificate Secret is usable again", "secret", s.namespace+"/"+s.name)
	}
}

// loadShared takes the certificate of settings.Admission.CertSecret for
// names. When it cannot (the Secret is malformed, or unreadable), the
// reason is logged and the server starts without a certificate: its
// handshakes fail and the configurations are left as the other replicas
// wrote them, until followShared gets one; e.mu is held.
func (e *Engine) loadShared(ctx context.Context, names []string) (*certs.Certs, error) {
	s := e.srv.opts.Settings
	if e.secrets == nil {
		return nil, fmt.Errorf("admission: admission.certSecret %s: no cluster to keep it in", s.CertSecret)
	}
	ns, name, _ := strings.Cut(s.CertSecret, "/")
	e.shared = &sharedCert{store: e.secrets, namespace: ns, name: name, names: names,
		validity: s.CertValidity, renew: s.CertRenewBefore, now: time.Now, log: e.log}
	e.certs = &certs.Certs{}
	e.adoptShared(ctx, false)
	return e.certs, nil
}

// followShared syncs the shared certificate every CertCheckInterval until
// ctx ends, taking up what another replica wrote.
func (e *Engine) followShared(ctx context.Context) {
	t := time.NewTicker(e.srv.opts.Settings.CertCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e.mu.Lock()
		e.refreshShared(ctx)
		e.mu.Unlock()
	}
}

// refreshShared syncs the shared certificate and, when it changed, serves
// it and writes its bundle into the configurations; e.mu is held.
func (e *Engine) refreshShared(ctx context.Context) {
	if e.adoptShared(ctx, true) {
		e.log.Info("the webhook certificate changed in its Secret and is served", "secret", e.srv.opts.Settings.CertSecret)
	}
}

// adoptShared syncs the shared certificate and, when it differs from the
// one served, takes it: the bundle first, written into the configurations
// when configure is set, then the certificate, so that the API server
// trusts the new one before this replica presents it. It reports whether
// it took a new one; e.mu is held.
func (e *Engine) adoptShared(ctx context.Context, configure bool) bool {
	st, err := e.shared.sync(ctx)
	e.shared.report(err)
	if err != nil || !e.shared.changed(st) {
		return false
	}
	previous := e.certs.Bundle()
	e.certs.SetBundle(st.material.CA)
	if configure {
		if err := e.configure(ctx, e.srv.opts.Registry(), nil); err != nil {
			// The configurations may still trust only the previous CAs:
			// keep serving the previous certificate, and try again at the
			// next sync.
			e.certs.SetBundle(previous)
			e.shared.forget()
			e.log.Error(err.Error()+"; the new webhook certificate is not served until the caBundle is written",
				"secret", e.srv.opts.Settings.CertSecret)
			return false
		}
	}
	cert := st.cert
	e.certs.SetCert(&cert)
	if err := e.dumpCA(st.material.CA); err != nil {
		e.log.Error(err.Error())
	}
	return true
}
