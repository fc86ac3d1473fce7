package reactor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// Scanning, Kopf's runtime discovery: the operator watches the
// CustomResourceDefinitions (settings.Watching.ScanCRDs), and after each
// change refreshes discovery and resolves its handlers' selectors again
// (after each of settings.Watching.ScanDelays, since discovery lists a
// new CRD's resources a little after the CRD is established). Resources
// that now have handlers start being watched — their objects are listed
// and handled as at a start — and resources that went stop being watched.
// The modules stay as they are, and objects already watched are not
// resumed: a rescan is a swap to the same modules without the resume.

// scanner is the operator's scanning state.
type scanner struct {
	// swapping serialises swaps and rescans.
	swapping sync.Mutex

	mu     sync.Mutex
	mods   []*wasmrt.Module   // the module set last built, in load order
	outs   map[string]Rollout // and its rollouts
	logged map[string]string  // what was last logged per handler and topic
}

// built remembers the module set of the last build.
func (s *scanner) built(mods []*wasmrt.Module, rollouts map[string]Rollout) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mods = append(s.mods[:0:0], mods...)
	s.outs = rollouts
}

// modules is the module set last built, with its rollouts.
func (s *scanner) modules() ([]*wasmrt.Module, map[string]Rollout) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mods, s.outs
}

// first reports whether text is new for (topic, module, handler): what a
// rescan finds again is not logged again.
func (s *scanner) first(topic, module, handler, text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := topic + "\x00" + module + "\x00" + handler
	if s.logged == nil {
		s.logged = map[string]string{}
	}
	if s.logged[key] == text {
		return false
	}
	s.logged[key] = text
	return true
}

// forget drops what was logged (a swap logs everything anew).
func (s *scanner) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logged = nil
}

// resolvedAgain lists the handlers logged as unresolved that are not in
// now (module, handler and error text by key), and forgets them.
func (s *scanner) resolvedAgain(now map[string]bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for key := range s.logged {
		if strings.HasPrefix(key, "unresolved\x00") && !now[key] {
			out = append(out, key)
			delete(s.logged, key)
		}
	}
	return out
}

// logUnresolved logs the handlers left out of reg, each once until its
// reason changes: not served yet by this host is a warning, a resource the
// cluster does not serve an error. A handler that was left out and is
// served again is logged at info.
func (o *Operator) logUnresolved(reg *registry.Registry) {
	now := map[string]bool{}
	for _, u := range reg.Unresolved() {
		now["unresolved\x00"+u.Module+"\x00"+u.Spec.ID] = true
		if !o.scan.first("unresolved", u.Module, u.Spec.ID, u.Err.Error()) {
			continue
		}
		var unserved *registry.UnservedError
		if errors.As(u.Err, &unserved) {
			o.log.Warn(fmt.Sprintf("Handler '%s' of module %q is not served: %v.", u.Spec.ID, u.Module, u.Err),
				"module", u.Module, "handler", u.Spec.ID, "kind", string(u.Spec.Kind))
			continue
		}
		o.log.Error("handler not served: its resource is not served by the cluster; install the CRD or fix the selector",
			"module", u.Module, "handler", u.Spec.ID, "error", u.Err)
	}
	for _, key := range o.scan.resolvedAgain(now) {
		parts := strings.SplitN(key, "\x00", 3)
		o.log.Info("handler served: its resource is served by the cluster now", "module", parts[1], "handler", parts[2])
	}
}

// startScanning watches the CRDs and rescans after their changes until
// ctx ends, unless scanning is off. Without permission it warns and the
// operator serves what it found at the start.
func (o *Operator) startScanning(ctx context.Context) {
	if !o.opts.Settings.Watching.ScanCRDs {
		return
	}
	kick := make(chan struct{}, 1)
	crdw, err := o.kube.WatchCRDs(ctx, func() {
		select {
		case kick <- struct{}{}:
		default: // a rescan is due anyway
		}
	})
	switch {
	case errors.Is(err, kube.ErrForbidden):
		o.log.Warn("CRDs are not watched: the host may not list customresourcedefinitions; "+
			"handlers of CRDs created later are served after a restart (grant list and watch on them to follow the cluster)", "error", err)
		return
	case err != nil:
		o.log.Warn("CRDs are not watched; handlers of CRDs created later are served after a restart", "error", err)
		return
	}
	o.wg.Add(1) // awaited by Run: a rescan swaps watches, which Run stops after it
	go func() {
		defer o.wg.Done()
		// A CRD may have appeared between the start's discovery and the
		// watch's initial listing, which reports no change for it: once
		// the listing is in, one rescan now and the delayed ones.
		if crdw.WaitForSync(ctx) == nil {
			select {
			case kick <- struct{}{}:
			default:
			}
		}
		o.rescan(ctx)
		o.scanLoop(ctx, kick)
	}()
}

// scanLoop rescans after each kick, once after each of the scan delays.
func (o *Operator) scanLoop(ctx context.Context, kick <-chan struct{}) {
	clock := o.exec.Clock()
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		}
		for _, d := range o.opts.Settings.Watching.ScanDelays {
			select {
			case <-ctx.Done():
				return
			case <-clock.After(d):
			}
			o.rescan(ctx)
		}
	}
}

// rescan refreshes discovery and resolves the selectors of the current
// modules again, starting and stopping watches.
func (o *Operator) rescan(ctx context.Context) {
	if err := o.kube.RefreshDiscovery(ctx); err != nil {
		if ctx.Err() == nil {
			o.log.Warn("rescan: discovery failed; the resources served stay as they are", "error", err)
		}
		return
	}
	if err := o.swap(ctx, nil, nil, false); err != nil && ctx.Err() == nil {
		o.log.Error(fmt.Sprintf("rescan: %v", err))
	}
}

// unchanged reports whether reg serves the same handlers on the same
// resources as the operator's registry: a rescan that finds nothing new
// changes nothing (no watch, webhook configuration or spawner touched).
func (o *Operator) unchanged(reg *registry.Registry) bool {
	o.mu.RLock()
	cur := o.registry
	o.mu.RUnlock()
	return cur != nil && fingerprint(cur) == fingerprint(reg)
}

// fingerprint names every resource handler of reg with its module and
// resource, and every left-out handler with its reason.
func fingerprint(reg *registry.Registry) string {
	var parts []string
	for _, ref := range reg.Resources() {
		for _, h := range reg.Handlers(ref) {
			parts = append(parts, h.Module+"/"+h.ID()+"@"+refString(ref)+"/"+ref.Kind)
		}
	}
	for _, u := range reg.Unresolved() {
		parts = append(parts, u.Module+"/"+u.Spec.ID+"!"+u.Err.Error())
	}
	sort.Strings(parts)
	return strings.Join(parts, "\n")
}
