package kopf

import (
	"encoding/json"
	"fmt"
	"path"
	"runtime/debug"
	"strings"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/guest-sdk/internal/hostcall"
)

func init() {
	hostcall.Serve(hostcall.Module{
		Manifest: func() ([]byte, error) { return registered.manifestJSON() },
		Handle: func(request []byte, host hostcall.Host) ([]byte, error) {
			return registered.handleJSON(request, host)
		},
	})
}

// registered is the module's registry, filled by the package-level
// registration functions from the author's init.
var registered = &registry{}

// registry holds what a module registered: handlers in order, module
// identity, permissions, and any mistakes found while registering (they
// are reported by the manifest export, as Kopf raises at decoration time).
type registry struct {
	module   abi.ModuleInfo
	handlers []*handler
	// byID holds each id's handlers: several for one function declared as
	// changing handlers of several kinds, told apart by the request's kind.
	byID        map[string][]*handler
	permissions abi.Permissions
	problems    []string
}

// handler is one registered handler.
type handler struct {
	spec abi.HandlerSpec
	fn   Handler
	// fnName names the author's function, to tell two functions under one
	// id from one function under several kinds.
	fnName string
	when   func(*Context) bool
	// callbacks are the callable label, annotation and value filters
	// (callbacks.go), evaluated before when.
	callbacks []func(*Context) bool
	// initialDelay is a timer's or daemon's callable initial delay.
	initialDelay func(*Context) time.Duration
	// selects is the callable resource selector.
	selects func(ResourceInfo) bool
}

func (r *registry) problem(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

func (r *registry) add(kind abi.HandlerKind, sel *abi.ResourceSelector, fn Handler, opts []Option) {
	r.addNamed(kind, sel, fn, funcName(fn), opts)
}

// addNamed adds a handler whose default id is name (the author's function
// when fn adapts a kind-specific handler type).
func (r *registry) addNamed(kind abi.HandlerKind, sel *abi.ResourceSelector, fn Handler, name string, opts []Option) {
	h := &handler{spec: abi.HandlerSpec{Kind: kind, Resource: sel}, fn: fn, fnName: name}
	if fn == nil {
		r.problem("a %s handler has no function", kind)
		return
	}
	// Mistakes name the handler by its id, known once every option (ID
	// among them) is applied, not by the Go function behind it.
	var mistakes []func(id string)
	for _, o := range opts {
		if !o.appliesTo(kind) {
			mistakes = append(mistakes, func(id string) {
				r.problem("option %s does not apply to %s handlers (handler %s)", o.name, kind, id)
			})
			continue
		}
		if err := o.apply(h); err != nil {
			mistakes = append(mistakes, func(id string) { r.problem("option %s of handler %s: %v", o.name, id, err) })
		}
	}
	if h.spec.ID == "" {
		h.spec.ID = name
	}
	if f := h.spec.Filters.Field; f != "" && kind != abi.KindIndex {
		h.spec.ID += "/" + f
	}
	for _, m := range mistakes {
		m(h.spec.ID)
	}
	if r.byID == nil {
		r.byID = map[string][]*handler{}
	}
	if same := r.byID[h.spec.ID]; len(same) > 0 && same[0].fnName != h.fnName {
		r.problem("handler %q is declared twice, for %s and for %s: give one of them an id of its own",
			h.spec.ID, same[0].fnName, h.fnName)
	}
	r.byID[h.spec.ID] = append(r.byID[h.spec.ID], h)
	r.handlers = append(r.handlers, h)
}

// lookup returns the handler a request names: by id, and among the
// entries of one function declared under several kinds, by kind (the
// first entry when none has the request's kind).
func (r *registry) lookup(id string, kind abi.HandlerKind) *handler {
	same := r.byID[id]
	for _, h := range same {
		if h.spec.Kind == kind {
			return h
		}
	}
	if len(same) == 0 {
		return nil
	}
	return same[0]
}

// manifest builds the module's manifest, or returns an *abi.ManifestError
// that lists registration mistakes and validation problems together.
func (r *registry) manifest() (*abi.Manifest, error) {
	m := &abi.Manifest{ABIVersion: abi.Version, Module: r.module, Permissions: r.permissions}
	if m.Module.Name == "" {
		m.Module.Name = defaultModuleName()
	}
	m.Handlers = make([]abi.HandlerSpec, 0, len(r.handlers))
	for _, h := range r.handlers {
		m.Handlers = append(m.Handlers, h.spec)
	}
	problems := append([]string(nil), r.problems...)
	problems = append(problems, r.permitProblems()...)
	if err := m.Validate(); err != nil {
		me, ok := err.(*abi.ManifestError)
		if !ok {
			return nil, err
		}
		problems = append(problems, me.Problems...)
	}
	if len(problems) > 0 {
		return nil, &abi.ManifestError{Module: m.Module.Name, Problems: problems}
	}
	return m, nil
}

func (r *registry) manifestJSON() ([]byte, error) {
	m, err := r.manifest()
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// defaultModuleName is the last element of the main package's path.
func defaultModuleName() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" {
		return strings.TrimSuffix(path.Base(bi.Path), ".test")
	}
	return "module"
}
