"""Kopf's hierarchy helpers on dict bodies: owner references, labels,
names and namespaces of the children a handler creates."""

from . import _invoke

__all__ = ["adopt", "append_owner_reference", "remove_owner_reference", "label",
           "harmonize_naming", "adjust_namespace", "build_owner_reference",
           "build_object_reference"]


def _objs(objs):
    if isinstance(objs, dict):
        return [objs]
    return list(objs)


def _owner(owner):
    return owner if owner is not None else _invoke.current().body


def build_object_reference(body):
    """{apiVersion, kind, name, uid, namespace} of an object."""
    meta = body.get("metadata") or {}
    ref = {"apiVersion": body.get("apiVersion"), "kind": body.get("kind"), "name": meta.get("name"),
           "uid": meta.get("uid"), "namespace": meta.get("namespace")}
    return {k: v for k, v in ref.items() if v is not None}


def build_owner_reference(body, *, controller=True, block_owner_deletion=True):
    """An ownerReferences entry pointing at body."""
    meta = body.get("metadata") or {}
    return {"controller": controller, "blockOwnerDeletion": block_owner_deletion,
            "apiVersion": body.get("apiVersion"), "kind": body.get("kind"),
            "name": meta.get("name"), "uid": meta.get("uid")}


def append_owner_reference(objs, owner=None, *, controller=True, block_owner_deletion=True):
    """Makes owner (the handled object by default) an owner of objs."""
    ref = build_owner_reference(_owner(owner), controller=controller,
                                block_owner_deletion=block_owner_deletion)
    for obj in _objs(objs):
        refs = obj.setdefault("metadata", {}).setdefault("ownerReferences", [])
        if not any(r.get("uid") == ref["uid"] for r in refs):
            refs.append(dict(ref))


def remove_owner_reference(objs, owner=None):
    """Removes owner (the handled object by default) from objs' owners."""
    uid = (_owner(owner).get("metadata") or {}).get("uid")
    for obj in _objs(objs):
        refs = (obj.get("metadata") or {}).get("ownerReferences")
        if refs:
            refs[:] = [r for r in refs if r.get("uid") != uid]


def _nested(obj, path):
    for key in path.split("."):
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj if isinstance(obj, dict) else None


def label(objs, labels=None, *, forced=False, nested=None):
    """Adds labels (the handled object's by default) to objs, and to their
    nested templates that exist (nested="spec.template" or a list)."""
    if labels is None:
        labels = (_owner(None).get("metadata") or {}).get("labels") or {}
    paths = [nested] if isinstance(nested, str) else list(nested or ())
    for obj in _objs(objs):
        for target in [obj] + [t for t in (_nested(obj, p) for p in paths) if t is not None]:
            existing = target.setdefault("metadata", {}).setdefault("labels", {})
            for key, value in labels.items():
                if forced or key not in existing:
                    existing[key] = value


def harmonize_naming(objs, name=None, *, forced=False, strict=False):
    """Names objs after the owner: generateName "<name>-", or the name
    itself when strict; an existing name is kept unless forced."""
    if name is None:
        name = (_owner(None).get("metadata") or {}).get("name")
    for obj in _objs(objs):
        meta = obj.setdefault("metadata", {})
        if forced or not (meta.get("name") or meta.get("generateName")):
            if strict:
                meta["name"] = name
                meta.pop("generateName", None)
            else:
                meta["generateName"] = f"{name}-"
                meta.pop("name", None)


def adjust_namespace(objs, namespace=None, *, forced=False):
    """Puts objs in the owner's namespace unless they have one (or forced)."""
    if namespace is None:
        namespace = (_owner(None).get("metadata") or {}).get("namespace")
    for obj in _objs(objs):
        meta = obj.setdefault("metadata", {})
        if forced or not meta.get("namespace"):
            if namespace is None:
                meta.pop("namespace", None)
            else:
                meta["namespace"] = namespace


def adopt(objs, owner=None, *, forced=False, strict=False, nested=None):
    """Owner reference, naming, namespace and labels of the owner (the
    handled object by default) on objs, as Kopf's kopf.adopt."""
    owner = _owner(owner)
    meta = owner.get("metadata") or {}
    append_owner_reference(objs, owner)
    harmonize_naming(objs, meta.get("name"), forced=forced, strict=strict)
    adjust_namespace(objs, meta.get("namespace"), forced=forced)
    label(objs, meta.get("labels") or {}, forced=forced, nested=nested)
