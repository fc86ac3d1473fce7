// Package offline calls one handler of a module without an operator, for
// host.Invoke (`kopf-wasm invoke`): it builds the request the operator
// would build (request.go, with execution.Request), applies the handler's
// filters as the operator would (filter.go), and serves the module's
// Kubernetes requests from stored objects and, for reads, a cluster
// (kubehost.go, a fake API server in memory). It calls modules, execution,
// registry and persistence; host is its only caller.
package offline

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
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// ErrNoHandler is wrapped by the error of [Invoke] when the module has no
// handler with the requested id.
var ErrNoHandler = errors.New("no such handler")

// Call is one offline handler call: host.Invocation with its defaults
// filled in.
type Call struct {
	// Module is the .wasm file; Handler the handler's id in its manifest.
	Module, Handler string
	// Object is the object as JSON; Old, when not nil, its previous state.
	Object, Old []byte
	// ConvertTo is the apiVersion a convert handler converts to.
	ConvertTo string
	// Settings and Logger are required.
	Settings *settings.Settings
	Logger   *slog.Logger
	// Force calls the handler even when the operator would not.
	Force bool
	// Objects are the stored objects the module's requests are served from.
	Objects []map[string]any
	// Connect, when set, connects to the cluster that answers the reads
	// the stored objects do not; nothing is written to it.
	Connect func() (*kube.Client, error)
	// KubeCalls, when set, is told of each Kubernetes request of the module.
	KubeCalls func(KubeCall)
	// Now is the clock of the request's times (nil: time.Now).
	Now func() time.Time
}

// Invoke calls one handler of a module offline and returns its response
// (host.Invoke documents it).
// The request is built by the code the operator uses, from the cause the
// operator would detect between Old and Object, after the handler's
// filters are applied as the operator would ([ErrNotCalled] unless Force).
// Kubernetes requests are served from the stored Objects and, for reads,
// the Kubeconfig's cluster; without either they answer 501 "not
// available", as Events and index look-ups always do. A failure of the
// module itself (a trap, a timeout, bad output) is the error.
func Invoke(ctx context.Context, inv Call) (*abi.Request, *abi.Response, error) {
	if inv.Now == nil {
		inv.Now = time.Now
	}
	rt, err := modules.NewRuntime(inv.Settings.Wasm, inv.Logger)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = rt.Close(context.Background()) }()
	mod, err := modules.Load(ctx, rt, inv.Module)
	if err != nil {
		return nil, nil, err
	}
	spec, err := findHandler(mod.Manifest(), inv.Handler, len(inv.Old) > 0)
	if err != nil {
		return nil, nil, fmt.Errorf("module %s: %w", inv.Module, err)
	}
	h, in, err := offlineCall(mod.Manifest().Module.Name, spec, inv.Object, inv.Old, inv.Settings.Persistence.Prefix, inv.ConvertTo, inv.Now())
	if err != nil {
		return nil, nil, err
	}
	exec := execution.New(execution.Options{
		Modules:  func(string) execution.Module { return mod },
		Settings: *inv.Settings, Logger: inv.Logger,
	})
	defer func() { _ = exec.CloseRecorder() }()
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
		return abi.HandlerSpec{}, fmt.Errorf("%w: name one of: %s", ErrNoHandler, strings.Join(ids, ", "))
	}
	return abi.HandlerSpec{}, fmt.Errorf("%w %q: the module has %s", ErrNoHandler, id, strings.Join(ids, ", "))
}
