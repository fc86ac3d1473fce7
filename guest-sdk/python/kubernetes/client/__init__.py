"""The typed APIs of the official client that Kopf's examples use, on
kopf.kube: dict bodies in, kopf.kube.ApiObject out (dicts with attribute
access: obj.metadata.name); ApiException for failures.

Covered: CoreV1Api (pods, services, config maps, secrets, persistent
volume claims, service accounts, endpoints, events; namespaces),
AppsV1Api (deployments, stateful sets, daemon sets, replica sets),
BatchV1Api (jobs, cron jobs), NetworkingV1Api (ingresses, network
policies), RbacAuthorizationV1Api (roles, role bindings), and
CustomObjectsApi. For each namespaced resource X: create_namespaced_X,
read_namespaced_X, replace_namespaced_X, patch_namespaced_X,
delete_namespaced_X, list_namespaced_X, list_X_for_all_namespaces.
Models (V1Pod(...), V1ObjectMeta(...)) are dicts built from their
keyword arguments (snake_case becomes camelCase).
"""

import re

from kopf import kube as _kube
from kopf.kube import ApiObject

from .exceptions import ApiException, OpenApiException  # noqa: F401

__all__ = ["ApiClient", "Configuration", "CoreV1Api", "AppsV1Api", "BatchV1Api",
           "NetworkingV1Api", "RbacAuthorizationV1Api", "CustomObjectsApi", "ApiException",
           "ApiObject"]


class Configuration:
    """Accepted and ignored: the host is configured, not the module."""

    def __init__(self, *args, **kwargs):
        pass

    @classmethod
    def get_default_copy(cls):
        return cls()

    @classmethod
    def set_default(cls, config):
        pass


class ApiClient:
    """Accepted and ignored; sanitize_for_serialization gives plain dicts."""

    def __init__(self, *args, **kwargs):
        pass

    def sanitize_for_serialization(self, obj):
        return _kube._plain(obj)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _request(verb, api_version, plural, **kwargs):
    return _kube.request(verb, api_version, plural, error=ApiException, **kwargs)


def _patch_type(body, default):
    return "json" if isinstance(body, list) else default


class _TypedApi:
    """Generated methods for the resources of one API group version."""

    API_VERSION = ""
    NAMESPACED = {}  # snake_case name -> plural
    CLUSTER = {}

    def __init__(self, api_client=None):
        pass

    def __getattr__(self, attr):
        call = self._method(attr)
        if call is None:
            raise AttributeError(
                f"{type(self).__name__}.{attr} is not in kopf-wasm's kubernetes client; "
                f"use kopf.kube (get, list, create, update, patch, apply, delete)")
        return call

    def _method(self, attr):
        av = self.API_VERSION
        m = re.fullmatch(r"(create|read|replace|patch|delete|list)_namespaced_(\w+?)(_status)?", attr)
        if m and m.group(2) in self.NAMESPACED:
            return _namespaced(m.group(1), av, self.NAMESPACED[m.group(2)], "status" if m.group(3) else None)
        m = re.fullmatch(r"list_(\w+)_for_all_namespaces", attr)
        if m and m.group(1) in self.NAMESPACED:
            plural = self.NAMESPACED[m.group(1)]
            return lambda label_selector=None, field_selector=None, **_: _list(
                av, plural, None, label_selector, field_selector)
        m = re.fullmatch(r"(create|read|replace|patch|delete|list)_(\w+?)(_status)?", attr)
        if m and m.group(2) in self.CLUSTER:
            return _cluster(m.group(1), av, self.CLUSTER[m.group(2)], "status" if m.group(3) else None)
        return None


class ApiList:
    """A list reply: ``.items`` (ApiObjects) and ``.metadata``, as the
    official client's V1PodList and kin; ``reply["items"]`` works too."""

    def __init__(self, body):
        self._body = body if body is not None else ApiObject(items=[])
        self.items = self._body.get("items") or []
        self.metadata = self._body.get("metadata")
        self.kind = self._body.get("kind")
        self.api_version = self._body.get("apiVersion")

    def __getitem__(self, key):
        return self._body[key]

    def get(self, key, default=None):
        return self._body.get(key, default)

    def to_dict(self):
        return self._body.to_dict()

    def __repr__(self):
        return f"ApiList({len(self.items)} items)"


def _list(api_version, plural, namespace, label_selector, field_selector):
    return ApiList(_request("list", api_version, plural, namespace=namespace,
                            label_selector=label_selector, field_selector=field_selector))


def _namespaced(verb, api_version, plural, subresource):
    if verb == "create":
        return lambda namespace, body, **_: _request("create", api_version, plural, namespace=namespace,
                                                     body=body)
    if verb == "read":
        return lambda name, namespace, **_: _request("get", api_version, plural, name=name,
                                                     namespace=namespace, subresource=subresource)
    if verb == "replace":
        return lambda name, namespace, body, **_: _request("update", api_version, plural, name=name,
                                                           namespace=namespace, body=body,
                                                           subresource=subresource)
    if verb == "patch":
        return lambda name, namespace, body, **_: _request(
            "patch", api_version, plural, name=name, namespace=namespace, body=body,
            subresource=subresource, patch_type=_patch_type(body, "strategic"))
    if verb == "delete":
        return lambda name, namespace, body=None, **_: _request("delete", api_version, plural, name=name,
                                                                namespace=namespace)
    return lambda namespace, label_selector=None, field_selector=None, **_: _list(
        api_version, plural, namespace, label_selector, field_selector)


def _cluster(verb, api_version, plural, subresource):
    if verb == "create":
        return lambda body, **_: _request("create", api_version, plural, body=body)
    if verb == "read":
        return lambda name, **_: _request("get", api_version, plural, name=name, subresource=subresource)
    if verb == "replace":
        return lambda name, body, **_: _request("update", api_version, plural, name=name, body=body,
                                                subresource=subresource)
    if verb == "patch":
        return lambda name, body, **_: _request("patch", api_version, plural, name=name, body=body,
                                                subresource=subresource,
                                                patch_type=_patch_type(body, "strategic"))
    if verb == "delete":
        return lambda name, body=None, **_: _request("delete", api_version, plural, name=name)
    return lambda label_selector=None, field_selector=None, **_: _list(
        api_version, plural, None, label_selector, field_selector)


class CoreV1Api(_TypedApi):
    """The core group's v1 resources."""

    API_VERSION = "v1"
    NAMESPACED = {"pod": "pods", "service": "services", "config_map": "configmaps",
                  "secret": "secrets", "persistent_volume_claim": "persistentvolumeclaims",
                  "service_account": "serviceaccounts", "endpoints": "endpoints",
                  "event": "events"}
    CLUSTER = {"namespace": "namespaces", "node": "nodes", "persistent_volume": "persistentvolumes"}


class AppsV1Api(_TypedApi):
    """apps/v1."""

    API_VERSION = "apps/v1"
    NAMESPACED = {"deployment": "deployments", "stateful_set": "statefulsets",
                  "daemon_set": "daemonsets", "replica_set": "replicasets"}


class BatchV1Api(_TypedApi):
    """batch/v1."""

    API_VERSION = "batch/v1"
    NAMESPACED = {"job": "jobs", "cron_job": "cronjobs"}


class NetworkingV1Api(_TypedApi):
    """networking.k8s.io/v1."""

    API_VERSION = "networking.k8s.io/v1"
    NAMESPACED = {"ingress": "ingresses", "network_policy": "networkpolicies"}


class RbacAuthorizationV1Api(_TypedApi):
    """rbac.authorization.k8s.io/v1."""

    API_VERSION = "rbac.authorization.k8s.io/v1"
    NAMESPACED = {"role": "roles", "role_binding": "rolebindings"}
    CLUSTER = {"cluster_role": "clusterroles", "cluster_role_binding": "clusterrolebindings"}


class CustomObjectsApi:
    """Custom resources by group, version and plural (merge patches)."""

    def __init__(self, api_client=None):
        pass

    def create_namespaced_custom_object(self, group, version, namespace, plural, body, **_):
        return _request("create", f"{group}/{version}", plural, namespace=namespace, body=body)

    def get_namespaced_custom_object(self, group, version, namespace, plural, name, **_):
        return _request("get", f"{group}/{version}", plural, namespace=namespace, name=name)

    def list_namespaced_custom_object(self, group, version, namespace, plural, label_selector=None,
                                      field_selector=None, **_):
        return _list(f"{group}/{version}", plural, namespace, label_selector, field_selector)

    def list_cluster_custom_object(self, group, version, plural, label_selector=None,
                                   field_selector=None, **_):
        return _list(f"{group}/{version}", plural, None, label_selector, field_selector)

    def patch_namespaced_custom_object(self, group, version, namespace, plural, name, body, **_):
        return _request("patch", f"{group}/{version}", plural, namespace=namespace, name=name,
                        body=body, patch_type=_patch_type(body, "merge"))

    def patch_namespaced_custom_object_status(self, group, version, namespace, plural, name, body, **_):
        return _request("patch", f"{group}/{version}", plural, namespace=namespace, name=name,
                        body=body, subresource="status", patch_type=_patch_type(body, "merge"))

    def replace_namespaced_custom_object(self, group, version, namespace, plural, name, body, **_):
        return _request("update", f"{group}/{version}", plural, namespace=namespace, name=name, body=body)

    def delete_namespaced_custom_object(self, group, version, namespace, plural, name, **_):
        return _request("delete", f"{group}/{version}", plural, namespace=namespace, name=name)

    def create_cluster_custom_object(self, group, version, plural, body, **_):
        return _request("create", f"{group}/{version}", plural, body=body)

    def get_cluster_custom_object(self, group, version, plural, name, **_):
        return _request("get", f"{group}/{version}", plural, name=name)

    def patch_cluster_custom_object(self, group, version, plural, name, body, **_):
        return _request("patch", f"{group}/{version}", plural, name=name, body=body,
                        patch_type=_patch_type(body, "merge"))

    def delete_cluster_custom_object(self, group, version, plural, name, **_):
        return _request("delete", f"{group}/{version}", plural, name=name)


def _snake_to_camel(name):
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _model(class_name):
    """A model class (V1Pod, V1ObjectMeta, ...): a dict from its kwargs."""
    def build(**kwargs):
        return ApiObject({_snake_to_camel(k): v for k, v in kwargs.items() if v is not None})
    build.__name__ = build.__qualname__ = class_name
    return build


def __getattr__(name):
    if re.fullmatch(r"V\d+(alpha\d+|beta\d+)?[A-Z]\w*", name):
        model = _model(name)
        globals()[name] = model
        return model
    raise AttributeError(f"kubernetes.client.{name} is not in kopf-wasm's kubernetes client; "
                         f"use kopf.kube (get, list, create, update, patch, apply, delete)")
