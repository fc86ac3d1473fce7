package registry

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// ResolveFunc resolves a handler's resource selector to the resource the
// cluster serves (discovery: plural, singular, kind or short name;
// preferred version). The reactor passes kube's resolver.
type ResolveFunc func(abi.ResourceSelector) (abi.ResourceRef, error)

// ResolveAllFunc resolves a handler's resource selector to every resource
// it names: one for a named resource, any number for a category or
// everything ([abi.ResourceSelector.Many]).
type ResolveAllFunc func(abi.ResourceSelector) ([]abi.ResourceRef, error)

// Handler is one handler of one module, ready to be matched.
type Handler struct {
	// Module is the name of the module that declared the handler.
	Module string
	// Spec is the handler as the manifest declares it.
	Spec abi.HandlerSpec
	// Resource is the resolved resource (zero for activities).
	Resource abi.ResourceRef
	// Field is the parsed Spec.Filters.Field (nil without one).
	Field objects.Path

	value, old, new *valueFilter
}

// ID is the handler's id, also its progress key and its status key.
func (h *Handler) ID() string { return h.Spec.ID }

// Kind is the handler's kind.
func (h *Handler) Kind() abi.HandlerKind { return h.Spec.Kind }

// NeedsWhen reports whether the handler has a callback filter that the
// guest must evaluate before the handler may run.
func (h *Handler) NeedsWhen() bool { return h.Spec.Filters.When }

// Registry holds the handlers of the loaded modules. It is immutable once
// built and safe for concurrent use.
type Registry struct {
	handlers   []*Handler // registration order
	resources  []abi.ResourceRef
	byResource map[resourceKey][]*Handler
	unresolved []Unresolved
}

// Unresolved is a handler whose resource could not be resolved, and why.
type Unresolved struct {
	Module string
	Spec   abi.HandlerSpec
	Err    error
}

type resourceKey struct{ group, version, plural string }

func keyOf(ref abi.ResourceRef) resourceKey {
	return resourceKey{ref.Group, ref.Version, ref.Plural}
}

// New builds a registry from manifests in load order. Each manifest is
// validated; an invalid manifest, or two modules declaring the same
// handler id for the same resource (their progress records would collide),
// is an error. Handlers whose resource does not resolve are left out and
// listed by [Registry.Unresolved] (Kopf, too, serves what it can and warns
// about the rest).
func New(manifests []abi.Manifest, resolve ResolveFunc) (*Registry, error) {
	return NewAll(manifests, func(sel abi.ResourceSelector) ([]abi.ResourceRef, error) {
		ref, err := resolve(sel)
		if err != nil {
			return nil, err
		}
		return []abi.ResourceRef{ref}, nil
	})
}

// NewAll is [New] for selectors that may name many resources (categories,
// everything): a handler serves each resource its selector resolves to,
// as a [Handler] of its own with the same id. A handler of such a selector
// whose id another module declares for one of its resources is left out
// for that resource (listed by [Registry.Unresolved]) rather than failing
// the registry: the resources it matches change with the cluster.
func NewAll(manifests []abi.Manifest, resolve ResolveAllFunc) (*Registry, error) {
	return newAll(manifests, resolve, nil)
}

func newAll(manifests []abi.Manifest, resolve ResolveAllFunc, pick PickFunc) (*Registry, error) {
	r := &Registry{byResource: map[resourceKey][]*Handler{}}
	var errs []error
	for i := range manifests {
		m := &manifests[i]
		if err := m.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("registry: module[%s]: %w", m.Module.Name, err))
			continue
		}
		for _, spec := range m.Handlers {
			if err := r.add(m.Module.Name, spec, resolve, pick); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

// PickFunc asks a module which of the candidates its handler's callable
// selector ([abi.ResourceSelector.Callback]) takes: the resources that
// handler serves.
type PickFunc func(module string, spec abi.HandlerSpec, candidates []abi.ResourceRef) ([]abi.ResourceRef, error)

// NewAllPicked is [NewAll] with callable selectors served: each resolves
// to its candidates (resolve), of which pick keeps the handler's
// resources. A failed pick leaves the handler out (listed by
// [Registry.Unresolved]). [NewAll] leaves handlers of callable selectors
// out as unserved (offline calls have no cluster to select from).
func NewAllPicked(manifests []abi.Manifest, resolve ResolveAllFunc, pick PickFunc) (*Registry, error) {
	return newAll(manifests, resolve, pick)
}

// NewHandler returns the handler of module declared by spec, serving
// resource ref (zero for activities), outside any registry: for offline
// calls.
func NewHandler(module string, spec abi.HandlerSpec, ref abi.ResourceRef) (*Handler, error) {
	h := &Handler{Module: module, Spec: spec, Resource: ref, Field: objects.ParsePath(spec.Filters.Field)}
	var err error
	if h.value, err = decodeValueFilter(spec.Filters.Value); err == nil {
		if h.old, err = decodeValueFilter(spec.Filters.Old); err == nil {
			h.new, err = decodeValueFilter(spec.Filters.New)
		}
	}
	if err != nil {
		return nil, &InvalidHandlerError{Module: module, Handler: spec.ID, Err: err}
	}
	return h, nil
}

func (r *Registry) add(module string, spec abi.HandlerSpec, resolve ResolveAllFunc, pick PickFunc) error {
	h, err := NewHandler(module, spec, abi.ResourceRef{})
	if err != nil {
		return err
	}
	if spec.Kind.IsActivity() {
		r.handlers = append(r.handlers, h)
		return nil
	}
	many := spec.Resource.Many()
	if many && (spec.Kind.IsWebhook() || spec.Kind == abi.KindConvert) {
		r.unresolved = append(r.unresolved, Unresolved{Module: module, Spec: spec, Err: &UnservedError{
			What: fmt.Sprintf("%s handlers of a category or of everything (name the resource)", spec.Kind)}})
		return nil
	}
	if spec.Resource.Callback && pick == nil {
		r.unresolved = append(r.unresolved, Unresolved{Module: module, Spec: spec, Err: &UnservedError{
			What: "callable resource selectors without a cluster to select from"}})
		return nil
	}
	refs, err := resolve(*spec.Resource)
	if err == nil && spec.Resource.Callback {
		refs, err = pick(module, spec, refs)
	}
	if err != nil {
		r.unresolved = append(r.unresolved, Unresolved{Module: module, Spec: spec, Err: err})
		return nil
	}
	for _, ref := range refs {
		clone := *h
		clone.Resource = ref
		if err := r.addFor(&clone, many); err != nil {
			return err
		}
	}
	return nil
}

// addFor registers h for its resolved resource.
func (r *Registry) addFor(h *Handler, many bool) error {
	key := keyOf(h.Resource)
	for i, other := range r.byResource[key] {
		if other.ID() != h.ID() {
			continue
		}
		if other.Module == h.Module {
			if other.Kind() == h.Kind() {
				// One function declared for several selectors that name
				// one resource ('pods' and 'v1/pods'): served once, by
				// the first, as Kopf deduplicates by function and id.
				return nil
			}
			continue
		}
		err := &DuplicateHandlerError{Handler: h.ID(), Resource: h.Resource, Modules: [2]string{other.Module, h.Module}}
		switch {
		case many:
			r.unresolved = append(r.unresolved, Unresolved{Module: h.Module, Spec: h.Spec, Err: err})
			return nil
		case other.Spec.Resource.Many():
			// The handler that names the resource wins.
			r.unresolved = append(r.unresolved, Unresolved{Module: other.Module, Spec: other.Spec, Err: err})
			r.byResource[key] = slices.Delete(r.byResource[key], i, i+1)
			r.handlers = slices.DeleteFunc(r.handlers, func(x *Handler) bool { return x == other })
		default:
			return err
		}
		break
	}
	if _, seen := r.byResource[key]; !seen {
		r.resources = append(r.resources, h.Resource)
	}
	r.byResource[key] = append(r.byResource[key], h)
	r.handlers = append(r.handlers, h)
	return nil
}

// Resources lists the resolved resources that have handlers, in the order
// they were first seen.
func (r *Registry) Resources() []abi.ResourceRef {
	return append([]abi.ResourceRef(nil), r.resources...)
}

// Unresolved lists the handlers left out because their resource did not
// resolve.
func (r *Registry) Unresolved() []Unresolved { return append([]Unresolved(nil), r.unresolved...) }

// Handlers lists the resource's handlers of the given kinds (all kinds
// when none is given), in registration order.
func (r *Registry) Handlers(ref abi.ResourceRef, kinds ...abi.HandlerKind) []*Handler {
	var out []*Handler
	for _, h := range r.byResource[keyOf(ref)] {
		if len(kinds) == 0 || kindIn(h.Kind(), kinds) {
			out = append(out, h)
		}
	}
	return out
}

// Activities lists the module-level handlers of one kind (startup,
// cleanup, probe), in registration order.
func (r *Registry) Activities(kind abi.HandlerKind) []*Handler {
	var out []*Handler
	for _, h := range r.handlers {
		if h.Kind() == kind && kind.IsActivity() {
			out = append(out, h)
		}
	}
	return out
}

// Changing lists the resource's changing handlers (create, update, delete,
// resume, field): the handlers whose progress the object may carry.
func (r *Registry) Changing(ref abi.ResourceRef) []*Handler {
	var out []*Handler
	for _, h := range r.byResource[keyOf(ref)] {
		if h.Kind().IsChanging() {
			out = append(out, h)
		}
	}
	return out
}

// ChangingIDs lists the ids of [Registry.Changing], each once (handlers of
// one function under several kinds share theirs), for loading and purging
// progress.
func (r *Registry) ChangingIDs(ref abi.ResourceRef) []string {
	var out []string
	for _, id := range IDs(r.Changing(ref)) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// IDs lists the ids of handlers, in order.
func IDs(handlers []*Handler) []string {
	out := make([]string, len(handlers))
	for i, h := range handlers {
		out[i] = h.ID()
	}
	return out
}

// ExtraFields are the fields that the resource's event, changing, timer and
// daemon handlers filter on: the diff-base essence keeps them even outside
// spec, labels and annotations (e.g. status.phase), so their changes are
// essential. Each field appears once, in registration order.
func (r *Registry) ExtraFields(ref abi.ResourceRef) []objects.Path {
	var out []objects.Path
	seen := map[string]bool{}
	for _, h := range r.byResource[keyOf(ref)] {
		switch {
		case h.Field == nil, seen[h.Field.String()]:
		case h.Kind().IsChanging(), h.Kind() == abi.KindEvent, h.Kind() == abi.KindTimer, h.Kind() == abi.KindDaemon:
			seen[h.Field.String()] = true
			out = append(out, h.Field)
		}
	}
	return out
}

func kindIn(k abi.HandlerKind, kinds []abi.HandlerKind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}
