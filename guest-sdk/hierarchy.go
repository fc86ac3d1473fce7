package kopf

// Hierarchies, as Kopf's kopf.adopt and friends: pure functions that
// prepare a child object before the handler creates it. They change the
// child in place and keep what it already has, unless [Forced] says
// otherwise.

// HierarchyOption tunes a hierarchy function, as Kopf's keyword arguments.
type HierarchyOption func(*hierarchy)

type hierarchy struct {
	forced, strict     bool
	nested             []string
	controller, blocks bool
}

func hierarchyOf(opts []HierarchyOption) hierarchy {
	h := hierarchy{controller: true, blocks: true}
	for _, o := range opts {
		o(&h)
	}
	return h
}

// Forced overwrites what the child already has (its name or generateName,
// namespace, labels), Kopf's forced=True.
func Forced() HierarchyOption { return func(h *hierarchy) { h.forced = true } }

// Strict names the child exactly as the owner (metadata.name) instead of
// a generateName "<owner>-", Kopf's strict=True.
func Strict() HierarchyOption { return func(h *hierarchy) { h.strict = true } }

// Nested also labels the templates at these dotted paths of the child
// ("spec.template", "spec.jobTemplate.spec.template") when they exist,
// Kopf's nested=.
func Nested(paths ...string) HierarchyOption {
	return func(h *hierarchy) { h.nested = append(h.nested, paths...) }
}

// Controller sets the owner reference's controller flag (default true).
func Controller(v bool) HierarchyOption { return func(h *hierarchy) { h.controller = v } }

// BlockOwnerDeletion sets the owner reference's blockOwnerDeletion flag
// (default true).
func BlockOwnerDeletion(v bool) HierarchyOption { return func(h *hierarchy) { h.blocks = v } }

// Adopt makes child a child of owner, Kopf's kopf.adopt: an owner
// reference, a name after the owner's ([Harmonize]), the owner's namespace
// and the owner's labels. Options: [Forced], [Strict], [Nested],
// [Controller], [BlockOwnerDeletion].
func Adopt(child, owner Object, opts ...HierarchyOption) {
	AppendOwnerReference(child, owner, opts...)
	Harmonize(child, owner.String("metadata.name"), opts...)
	AdjustNamespace(child, owner.String("metadata.namespace"), opts...)
	Label(child, stringMap(owner.Map("metadata")["labels"]), opts...)
}

// Adopt adopts child by the object being handled (Kopf's owner=None).
func (c *Context) Adopt(child Object, opts ...HierarchyOption) { Adopt(child, c.Body(), opts...) }

// OwnerReference builds an owner reference to owner, a controller that
// blocks the owner's deletion unless the options say otherwise, Kopf's
// build_owner_reference.
func OwnerReference(owner Object, opts ...HierarchyOption) map[string]any {
	h := hierarchyOf(opts)
	return map[string]any{
		"apiVersion":         owner.String("apiVersion"),
		"kind":               owner.String("kind"),
		"name":               owner.String("metadata.name"),
		"uid":                owner.String("metadata.uid"),
		"controller":         h.controller,
		"blockOwnerDeletion": h.blocks,
	}
}

// BuildObjectReference is the reference to obj that Events and other
// objects use, Kopf's build_object_reference: apiVersion, kind, name,
// uid and namespace (left out when empty).
func BuildObjectReference(obj Object) map[string]any {
	ref := map[string]any{
		"apiVersion": obj.String("apiVersion"),
		"kind":       obj.String("kind"),
		"name":       obj.String("metadata.name"),
		"uid":        obj.String("metadata.uid"),
	}
	if ns := obj.String("metadata.namespace"); ns != "" {
		ref["namespace"] = ns
	}
	return ref
}

// ownerRefs returns the child's owner references as a list.
func ownerRefs(meta map[string]any) []any {
	var refs []any
	switch existing := meta["ownerReferences"].(type) {
	case []any:
		refs = existing
	case []map[string]any:
		for _, r := range existing {
			refs = append(refs, r)
		}
	}
	return refs
}

// AppendOwnerReference adds an owner reference to owner unless the child
// already has one with the owner's uid, Kopf's append_owner_reference.
func AppendOwnerReference(child, owner Object, opts ...HierarchyOption) {
	ref := OwnerReference(owner, opts...)
	meta := ensureMap(child, "metadata")
	refs := ownerRefs(meta)
	for _, r := range refs {
		if asObject(r).String("uid") == ref["uid"] {
			return
		}
	}
	meta["ownerReferences"] = append(refs, ref)
}

// RemoveOwnerReference removes the child's owner references to owner (by
// its uid), Kopf's remove_owner_reference.
func RemoveOwnerReference(child, owner Object) {
	meta, ok := child["metadata"].(map[string]any)
	if !ok {
		return
	}
	uid := owner.String("metadata.uid")
	var kept []any
	for _, r := range ownerRefs(meta) {
		if asObject(r).String("uid") != uid {
			kept = append(kept, r)
		}
	}
	if kept == nil {
		kept = []any{}
	}
	meta["ownerReferences"] = kept
}

// Label adds labels to the child, keeping the values it already has
// unless [Forced]; with [Nested], also to the templates at those paths
// that exist. Kopf's kopf.label.
func Label(child Object, labels map[string]string, opts ...HierarchyOption) {
	if len(labels) == 0 {
		return
	}
	h := hierarchyOf(opts)
	label(child, labels, h.forced)
	for _, path := range h.nested {
		if nested, ok := child.Get(path); ok {
			if m, ok := nested.(map[string]any); ok {
				label(m, labels, h.forced)
			}
		}
	}
}

func label(obj map[string]any, labels map[string]string, forced bool) {
	dst := ensureMap(ensureMap(obj, "metadata"), "labels")
	for k, v := range labels {
		if _, ok := dst[k]; forced || !ok {
			dst[k] = v
		}
	}
}

// Harmonize names the child after name, Kopf's harmonize_naming: a
// metadata.generateName "<name>-" (with [Strict], metadata.name = name),
// unless the child already has a name or a generateName (with [Forced],
// whatever it has; the other of the two is then removed).
func Harmonize(child Object, name string, opts ...HierarchyOption) {
	h := hierarchyOf(opts)
	meta := ensureMap(child, "metadata")
	named := meta["name"] != nil || meta["generateName"] != nil
	if name == "" || named && !h.forced {
		return
	}
	if h.strict {
		meta["name"] = name
		delete(meta, "generateName")
		return
	}
	meta["generateName"] = name + "-"
	delete(meta, "name")
}

// AdjustNamespace puts the child into namespace unless it has one (with
// [Forced], whatever it has), Kopf's adjust_namespace. An empty namespace
// (a cluster-scoped owner) changes nothing.
func AdjustNamespace(child Object, namespace string, opts ...HierarchyOption) {
	h := hierarchyOf(opts)
	meta := ensureMap(child, "metadata")
	if namespace == "" || meta["namespace"] != nil && !h.forced {
		return
	}
	meta["namespace"] = namespace
}
