package kopf

// Hierarchies, as Kopf's kopf.adopt and friends: pure functions that
// prepare a child object before the handler creates it. They change the
// child in place and keep what it already has (Kopf's non-forced mode).

// Adopt makes child a child of owner: a controller owner reference, the
// owner's namespace, the owner's labels, and a generateName from the
// owner's name.
func Adopt(child, owner Object) {
	AppendOwnerReference(child, owner)
	AdjustNamespace(child, owner.String("metadata.namespace"))
	Label(child, stringMap(owner.Map("metadata")["labels"]))
	Harmonize(child, owner.String("metadata.name"))
}

// Adopt adopts child by the object being handled (Kopf's owner=None).
func (c *Context) Adopt(child Object) { Adopt(child, c.Body()) }

// OwnerReference builds a controller owner reference to owner, with
// blockOwnerDeletion, as Kopf's build_owner_reference.
func OwnerReference(owner Object) map[string]any {
	return map[string]any{
		"apiVersion":         owner.String("apiVersion"),
		"kind":               owner.String("kind"),
		"name":               owner.String("metadata.name"),
		"uid":                owner.String("metadata.uid"),
		"controller":         true,
		"blockOwnerDeletion": true,
	}
}

// AppendOwnerReference adds an owner reference to owner unless the child
// already has one with the owner's uid.
func AppendOwnerReference(child, owner Object) {
	ref := OwnerReference(owner)
	meta := ensureMap(child, "metadata")
	var refs []any
	switch existing := meta["ownerReferences"].(type) {
	case []any:
		refs = existing
	case []map[string]any:
		for _, r := range existing {
			refs = append(refs, r)
		}
	}
	for _, r := range refs {
		if asObject(r).String("uid") == ref["uid"] {
			return
		}
	}
	meta["ownerReferences"] = append(refs, ref)
}

// Label adds labels to the child, keeping the values it already has.
func Label(child Object, labels map[string]string) {
	if len(labels) == 0 {
		return
	}
	dst := ensureMap(ensureMap(child, "metadata"), "labels")
	for k, v := range labels {
		if _, ok := dst[k]; !ok {
			dst[k] = v
		}
	}
}

// Harmonize names the child after name: metadata.generateName is
// "<name>-" unless the child has a name or a generateName already.
func Harmonize(child Object, name string) {
	meta := ensureMap(child, "metadata")
	if name == "" || meta["name"] != nil || meta["generateName"] != nil {
		return
	}
	meta["generateName"] = name + "-"
}

// AdjustNamespace puts the child into namespace unless it has one.
func AdjustNamespace(child Object, namespace string) {
	meta := ensureMap(child, "metadata")
	if namespace == "" || meta["namespace"] != nil {
		return
	}
	meta["namespace"] = namespace
}
