package offline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/hosterr"
	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// RenderCall is one render of objects by a module (`kopf-wasm render`).
type RenderCall struct {
	// Module is the .wasm file.
	Module string
	// Objects are the objects to render, as JSON.
	Objects [][]byte
	// Stored are the objects the module's Kubernetes requests are served
	// from (as for [Invoke]); each rendered object is among them.
	Stored []map[string]any
	// Settings and Logger are required; Settings.Recording.Path, when set,
	// records the calls (a baseline for a replay).
	Settings *settings.Settings
	Logger   *slog.Logger
	// Now is the clock of the requests' times (nil: time.Now).
	Now func() time.Time
}

// Rendered is what the module would do to one object.
type Rendered struct {
	// Object names the object: "KopfExample default/name".
	Object string `json:"object"`
	// Handlers are the due handlers' calls, in the order the operator
	// calls them; none when no handler is due.
	Handlers []RenderedCall `json:"handlers"`
}

// RenderedCall is one handler call of a render.
type RenderedCall struct {
	Handler  string          `json:"handler"`
	Kind     abi.HandlerKind `json:"kind"`
	Response *abi.Response   `json:"response,omitempty"`
	Error    string          `json:"error,omitempty"`
	Kube     []KubeCall      `json:"kube,omitempty"`
}

// Render calls, for each object, the changing handlers the operator would
// call on first seeing it (the create cause, as [Invoke] chooses it
// without an old state: create and field handlers whose filters match),
// offline, and returns their responses. A failure of one call is in its
// RenderedCall; the error is about the input.
func Render(ctx context.Context, rc RenderCall) ([]Rendered, error) {
	if rc.Now == nil {
		rc.Now = time.Now
	}
	rt, err := modules.NewRuntime(rc.Settings.Wasm, rc.Logger)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rt.Close(context.Background()) }()
	mod, err := modules.Load(ctx, rt, rc.Module)
	if err != nil {
		return nil, err
	}
	exec := execution.New(execution.Options{
		Modules:  func(string) execution.Module { return mod },
		Settings: *rc.Settings, Logger: rc.Logger,
	})
	defer func() { _ = exec.CloseRecorder() }()
	var out []Rendered
	for i, raw := range rc.Objects {
		r, err := rc.renderOne(ctx, exec, mod, raw)
		if err != nil {
			return out, fmt.Errorf("object %d: %w", i+1, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// renderOne calls the due handlers of one object.
func (rc RenderCall) renderOne(ctx context.Context, exec *execution.Executor, mod *wasmrt.Module, raw []byte) (Rendered, error) {
	body, err := decodeObject("object", raw)
	if err != nil {
		return Rendered{}, fmt.Errorf("%w: %w", hosterr.ErrUsage, err)
	}
	m := mod.Manifest()
	ref := resourceRef(nil, body)
	name := strings.Trim(objects.GetString(body, objects.Path{"metadata", "namespace"})+"/"+objects.GetString(body, objects.Path{"metadata", "name"}), "/")
	r := Rendered{Object: ref.Kind + " " + name, Handlers: []RenderedCall{}}
	ref.Plural = pluralOf(ref.Kind)
	reg, err := registry.New([]abi.Manifest{m}, func(sel abi.ResourceSelector) (abi.ResourceRef, error) {
		if sel.Group != ref.Group || (sel.Version != "" && sel.Version != ref.Version) ||
			!strings.EqualFold(sel.Name, ref.Plural) && !strings.EqualFold(sel.Name, ref.Kind) {
			return abi.ResourceRef{}, errors.New("another resource")
		}
		return ref, nil
	})
	if err != nil {
		return r, err
	}
	storage, err := persistence.New(persistence.Options{Prefix: rc.Settings.Persistence.Prefix, Finalizer: rc.Settings.Persistence.Prefix + "/KopfFinalizerMarker"})
	if err != nil {
		return r, err
	}
	var extra []objects.Path
	for _, h := range reg.Changing(ref) {
		if h.Field != nil {
			extra = append(extra, h.Field)
		}
	}
	cause := registry.DetectCause(registry.CauseInput{Body: body, Finalizer: storage.Finalizer(), New: storage.Essence(body, extra)})
	subj := execution.NewSubject(ref, false, &unstructured.Unstructured{Object: body})
	due, err := reg.Due(ref, &cause, exec.When(ctx, subj, nil))
	if err != nil {
		return r, err
	}
	for _, h := range due {
		r.Handlers = append(r.Handlers, rc.call(ctx, exec, m.Module.Name, h.Spec, raw))
	}
	return r, nil
}

// call makes one handler call of a render, as Invoke makes it.
func (rc RenderCall) call(ctx context.Context, exec *execution.Executor, module string, spec abi.HandlerSpec, raw []byte) RenderedCall {
	out := RenderedCall{Handler: spec.ID, Kind: spec.Kind}
	inv := Call{Module: rc.Module, Handler: spec.ID, Object: raw, Settings: rc.Settings, Logger: rc.Logger, Objects: rc.Stored,
		KubeCalls: func(c KubeCall) { out.Kube = append(out.Kube, c) }}
	h, in, err := offlineCall(module, spec, raw, nil, rc.Settings.Persistence.Prefix, "", rc.Now())
	var guest wasmrt.Host
	if err == nil {
		guest, err = inv.offlineGuest(ctx, exec, h, in)
	}
	var res execution.Result
	if err == nil {
		res, err = exec.Call(ctx, h, in, execution.CallOptions{Host: guest})
	}
	switch {
	case err != nil:
		out.Error = err.Error()
	case res.CallErr != nil:
		out.Error = res.CallErr.Error()
	default:
		out.Response = res.Response
	}
	return out
}
