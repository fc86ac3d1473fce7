package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// ErrNoHandler is wrapped by the error of Invoke when the module has no
// handler with the requested id.
var ErrNoHandler = errors.New("no such handler")

// Inspect loads the module file at path, offline, and returns its validated
// manifest and its digest ("sha256:<hex>"). A file that is not a module of
// this ABI version is an error that says what to rebuild. The wasm settings
// (nil: settings.Default()) name the compile cache, which makes a second
// look at the same module fast.
func Inspect(ctx context.Context, path string, s *settings.Settings) (abi.Manifest, string, error) {
	if s == nil {
		d := settings.Default()
		s = &d
	}
	rt, err := newRuntime(s.Wasm, discardLogger)
	if err != nil {
		return abi.Manifest{}, "", err
	}
	defer func() { _ = rt.Close(context.Background()) }()
	mod, err := loadModule(ctx, rt, path)
	if err != nil {
		return abi.Manifest{}, "", err
	}
	return mod.Manifest(), mod.Digest(), nil
}

// Invocation is one offline handler call for [Invoke].
type Invocation struct {
	// Module is the .wasm file.
	Module string
	// Handler is the handler's id in the module's manifest.
	Handler string
	// Object is the object as JSON; Old, when not nil, is its previous
	// state (an update rather than a create).
	Object, Old []byte
	// ConvertTo is the apiVersion a convert handler converts the object
	// to; required for convert handlers, ignored otherwise.
	ConvertTo string
	// Settings supply the wasm limits and the annotations prefix of the
	// diff-base essences. Default settings.Default().
	Settings *settings.Settings
	// Logger receives the module's log records. Default slog.Default().
	Logger *slog.Logger
	// Force calls the handler even when the operator would not (a filter
	// does not match the object); without it that is an [ErrNotCalled].
	Force bool
	// Objects are stored objects (Lists are expanded) from which the
	// module's Kubernetes requests are served, with Object among them;
	// writes change them in memory only.
	Objects []map[string]any
	// Kubeconfig and KubeContext, when either is set, name a cluster that
	// answers the reads (get, list) the stored objects do not; nothing is
	// ever written to it.
	Kubeconfig, KubeContext string
	// KubeCalls, when set, is told of each Kubernetes request of the module.
	KubeCalls func(KubeCall)
}

// Invoke calls one handler of a module offline and returns its response.
// The request is built by the code the operator uses, from the cause the
// operator would detect between Old and Object, after the handler's
// filters are applied as the operator would ([ErrNotCalled] unless Force).
// Kubernetes requests are served from the stored Objects and, for reads,
// the Kubeconfig's cluster; without either they answer 501 "not
// available", as Events and index look-ups always do. A failure of the
// module itself (a trap, a timeout, bad output) is the error.
func Invoke(ctx context.Context, inv Invocation) (*abi.Request, *abi.Response, error) {
	if inv.Settings == nil {
		s := settings.Default()
		inv.Settings = &s
	}
	if inv.Logger == nil {
		inv.Logger = slog.Default()
	}
	rt, err := newRuntime(inv.Settings.Wasm, inv.Logger)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = rt.Close(context.Background()) }()
	mod, err := loadModule(ctx, rt, inv.Module)
	if err != nil {
		return nil, nil, err
	}
	spec, err := findHandler(mod.Manifest(), inv.Handler, len(inv.Old) > 0)
	if err != nil {
		return nil, nil, fmt.Errorf("module %s: %w", inv.Module, err)
	}
	h, in, err := offlineCall(mod.Manifest().Module.Name, spec, inv.Object, inv.Old, inv.Settings.Persistence.Prefix, inv.ConvertTo)
	if err != nil {
		return nil, nil, err
	}
	exec := execution.New(execution.Options{
		Modules:  func(string) execution.Module { return mod },
		Settings: *inv.Settings, Logger: inv.Logger,
	})
	guest, err := inv.offlineGuest(ctx, exec, h, in)
	if err != nil {
		return nil, nil, err
	}
	r, err := exec.Call(ctx, h, in, execution.CallOptions{Host: guest})
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("handler %s: %w", inv.Handler, err)
	case r.CallErr != nil:
		return r.Request, nil, fmt.Errorf("handler %s: %w", inv.Handler, r.CallErr)
	}
	return r.Request, r.Response, nil
}

// findHandler returns the handler with the id, or an error that lists the
// ids there are. Of one function declared under several kinds (one id),
// it is the entry that fits the call: the update entry when there is an
// old object, the create entry when there is none, else the first.
func findHandler(m abi.Manifest, id string, old bool) (abi.HandlerSpec, error) {
	var ids []string
	var found []abi.HandlerSpec
	for _, h := range m.Handlers {
		if h.ID == id {
			found = append(found, h)
		}
		ids = append(ids, h.ID)
	}
	fits := abi.KindCreate
	if old {
		fits = abi.KindUpdate
	}
	for _, h := range found {
		if h.Kind == fits {
			return h, nil
		}
	}
	if len(found) > 0 {
		return found[0], nil
	}
	sort.Strings(ids)
	ids = slices.Compact(ids) // an id of several kinds once
	if id == "" {
		return abi.HandlerSpec{}, fmt.Errorf("%w: name one with --handler, one of: %s", ErrNoHandler, strings.Join(ids, ", "))
	}
	return abi.HandlerSpec{}, fmt.Errorf("%w %q: the module has %s", ErrNoHandler, id, strings.Join(ids, ", "))
}

// now is the clock of offline calls, a test seam.
var now = time.Now
