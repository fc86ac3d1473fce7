"""A small dynamic Kubernetes client through the host (a kopf-wasm
addition): every call is one abi.KubeRequest, checked by the host against
the permissions the module declared with kopf.permit().

    pod = kopf.kube.get("v1", "pods", "web-0", namespace="default")
    pods = kopf.kube.list("v1", "pods", namespace="default", label_selector="app=web")
    kopf.kube.create("v1", "configmaps", {"metadata": {"name": "x"}, "data": {}}, namespace="default")
    kopf.kube.patch("apps/v1", "deployments", "web", {"spec": {"replicas": 3}}, namespace="default")
    kopf.kube.apply("v1", "configmaps", body, field_manager="my-operator")
    kopf.kube.delete("v1", "pods", "web-0", namespace="default")

The resource is a plural ("deployments") or a Kind ("Deployment"); Kinds
become plurals as Kubernetes names them. Objects come back as ApiObject:
dicts that also allow attribute access (obj.metadata.name). A failure
raises ApiError with the HTTP status: code 403 from the host means the
module did not declare the permission.
"""

import re

from . import _host

__all__ = ["ApiError", "ApiObject", "get", "list", "create", "update", "patch", "apply",
           "delete", "request", "plural_of"]

_list = list

_IRREGULAR = {"endpoints": "endpoints", "ingress": "ingresses", "networkpolicy": "networkpolicies",
              "podsecuritypolicy": "podsecuritypolicies", "priorityclass": "priorityclasses",
              "storageclass": "storageclasses", "ingressclass": "ingressclasses",
              "runtimeclass": "runtimeclasses"}


def plural_of(resource: str) -> str:
    """A resource's plural: plurals as they are, Kinds as Kubernetes
    pluralises them ("Pod" -> "pods", "NetworkPolicy" -> "networkpolicies")."""
    if not resource[:1].isupper():
        return resource
    low = resource.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if re.search(r"[^aeiou]y$", low):
        return low[:-1] + "ies"
    if low.endswith(("s", "x", "z", "ch", "sh")):
        return low + "es"
    return low + "s"


class ApiError(_host.HostError):
    """A Kubernetes request that failed: ``status`` is the HTTP code."""

    @property
    def status(self):
        return self.code


def _camel(name):
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


class ApiObject(dict):
    """A Kubernetes object as a dict that also allows attribute access,
    snake_case included (obj.metadata.owner_references); unset fields are
    None, as in the official client's models."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        for key in (name, _camel(name)):
            if key in self:
                return wrap(self[key])
        return None

    def __setattr__(self, name, value):
        self[_camel(name)] = value

    def __getitem__(self, key):
        return wrap(dict.__getitem__(self, key))

    def get(self, key, default=None):
        return wrap(dict.get(self, key, default))

    def to_dict(self):
        """A plain dict (camelCase keys, as the API has them)."""
        return _plain(self)


def wrap(value):
    """Dicts as ApiObject, lists of dicts as lists of ApiObject."""
    if isinstance(value, dict) and not isinstance(value, ApiObject):
        return ApiObject(value)
    if isinstance(value, _list):
        return [wrap(v) for v in value]
    return value


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in dict.items(value)}
    if isinstance(value, (_list, tuple)):
        return [_plain(v) for v in value]
    return value


def _split(api_version):
    if "/" in api_version:
        return api_version.split("/", 1)
    return "", api_version


def request(verb, api_version, resource, *, name=None, namespace=None, body=None,
            subresource=None, label_selector=None, field_selector=None, patch_type=None,
            field_manager=None, force=False, error=ApiError):
    """One abi.KubeRequest; returns the reply's body (an ApiObject, or None)."""
    group, version = _split(api_version)
    req = {"verb": verb, "group": group, "version": version, "resource": plural_of(resource),
           "subresource": subresource, "namespace": namespace, "name": name,
           "labelSelector": label_selector, "fieldSelector": field_selector,
           "body": _plain(body) if body is not None else None, "patchType": patch_type,
           "fieldManager": field_manager, "force": force or None}
    req = {k: v for k, v in req.items() if v not in (None, "")}
    reply = _host.call("kube_request", req)
    what = f"{verb} {req['resource']} {namespace + '/' if namespace else ''}{name or ''}".strip()
    err = reply.get("error")
    if err:
        raise error(err.get("message", ""), err.get("code", 0), err.get("reason", ""),
                    err.get("origin", ""), what)
    return wrap(reply.get("body"))


def _namespace_of(body, namespace):
    return namespace or ((body.get("metadata") or {}).get("namespace") if body else None)


def get(api_version, resource, name, namespace=None):
    """The object, or ApiError (status 404 when it is not there)."""
    return request("get", api_version, resource, name=name, namespace=namespace)


def list(api_version, resource, namespace=None, label_selector=None, field_selector=None):
    """The objects (in one namespace, or in all with namespace=None)."""
    reply = request("list", api_version, resource, namespace=namespace,
                    label_selector=label_selector, field_selector=field_selector)
    return (reply or {}).get("items") or []


def create(api_version, resource, body, namespace=None):
    """Creates body (namespace defaults to body's metadata.namespace)."""
    return request("create", api_version, resource, namespace=_namespace_of(body, namespace), body=body)


def update(api_version, resource, body, name=None, namespace=None):
    """Replaces the object with body (a PUT)."""
    name = name or (body.get("metadata") or {}).get("name")
    return request("update", api_version, resource, name=name,
                   namespace=_namespace_of(body, namespace), body=body)


def patch(api_version, resource, name, body, namespace=None, patch_type=None, subresource=None):
    """Patches the object: a dict is a merge patch, a list JSON-patch
    operations; patch_type "strategic" asks for a strategic merge."""
    if patch_type is None:
        patch_type = "json" if isinstance(body, _list) else "merge"
    return request("patch", api_version, resource, name=name, namespace=namespace, body=body,
                   patch_type=patch_type, subresource=subresource)


def apply(api_version, resource, body, field_manager, force=False, namespace=None):
    """Server-side apply of body (name and namespace from its metadata)."""
    return request("apply", api_version, resource, name=(body.get("metadata") or {}).get("name"),
                   namespace=_namespace_of(body, namespace), body=body,
                   field_manager=field_manager, force=force)


def delete(api_version, resource, name, namespace=None):
    """Deletes the object."""
    return request("delete", api_version, resource, name=name, namespace=namespace)
