"""The module's handlers, their manifest form (abi/manifest.go), and the
module's identity and permissions."""

import datetime
import functools
import os
import re
import sys

from . import _errors, _filters, _structs

__all__ = ["OperatorRegistry", "module", "permit", "allow_hosts"]

ABI_VERSION = 1
CHANGING = ("create", "update", "delete", "resume", "field")
ACTIVITIES = ("startup", "cleanup", "probe")
WEBHOOKS = ("validate", "mutate")

_VERSION = re.compile(r"^v\d+((alpha|beta)\d+)?$")


def note(line: str):
    """One line for the module's author, at import (kopf-wasm build shows it)."""
    print(f"kopf: {line}", file=sys.stderr)


def seconds(name, value):
    """A duration option as seconds (numbers or timedelta), or None."""
    if value is None:
        return None
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}={value!r}: kopf-wasm takes a number of seconds here")
    if value < 0:
        raise ValueError(f"{name}={value!r} is negative")
    return float(value)


def callable_id(fn) -> str:
    """A function's default handler id, as Kopf derives it: its
    __qualname__, through partials and wrappers; lambdas are
    "lambda:<file>:<line>"."""
    while True:
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        else:
            break
    if getattr(fn, "__name__", "") == "<lambda>":
        code = fn.__code__
        return f"lambda:{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if not qualname:
        raise TypeError(f"{fn!r} has no name: give the handler an id=")
    return qualname


def selector(args, group=None, version=None, kind=None, plural=None, singular=None,
             shortcut=None, category=None):
    """Kopf's resource selector (positional and keyword forms) as an
    abi.ResourceSelector dict."""
    name = None
    if len(args) == 3:
        group, version, name = args
    elif len(args) == 2:
        first, name = args
        if "/" in first:
            group, version = first.split("/", 1)
        elif _VERSION.match(first):
            group, version = "", first
        else:
            group = first
    elif len(args) == 1:
        name = args[0]
        if name != _structs.EVERYTHING and "." in name:
            parts = name.split(".")
            name, rest = parts[0], parts[1:]
            if _VERSION.match(rest[0]):
                version, rest = rest[0], rest[1:]
            group = ".".join(rest)
    elif len(args) > 3:
        raise TypeError(f"too many resource arguments {args!r}: use (group, version, plural)")
    name = name or plural or kind or singular or shortcut
    if not name and not category:
        raise TypeError("no resource: name one, e.g. @kopf.on.create('kopf.dev', 'v1', 'kopfexamples')")
    out = {}
    if group:
        out["group"] = group
    if version:
        out["version"] = version
    if name == _structs.EVERYTHING:
        out["name"] = ""
        out["everything"] = True
    else:
        out["name"] = name or ""
        if category:
            out["category"] = category
    return out


def error_options(errors=None, timeout=None, retries=None, backoff=None, cooldown=None):
    """Kopf's error options as the ABI's (cooldown is backoff's old name)."""
    if retries is not None and (not isinstance(retries, int) or retries < 0):
        raise ValueError(f"retries={retries!r}: use a non-negative int")
    return {
        "errors": _errors.errors_value(errors),
        "timeout": seconds("timeout", timeout),
        "retries": retries,
        "backoff": seconds("backoff", backoff if backoff is not None else cooldown),
    }



class Handler:
    """One registered handler: its manifest entry and its function."""

    def __init__(self, kind, fn, id, resource, filters, options, callbacks, field=None):
        self.kind, self.fn, self.id = kind, fn, id
        self.resource, self.filters, self.options = resource, filters, options
        self.callbacks, self.field = callbacks, field

    @property
    def changing(self):
        return self.kind in CHANGING

    def spec(self):
        """The abi.HandlerSpec, keys in the Go struct's order."""
        out = {"id": self.id, "kind": self.kind}
        if self.resource is not None:
            out["resource"] = self.resource
        out["filters"] = self.filters
        out["options"] = self.options
        return out

    def __repr__(self):
        return f"<kopf handler {self.id!r} ({self.kind})>"


_FILTER_ORDER = ("labels", "annotations", "field", "value", "old", "new", "when")
_OPTION_ORDER = ("errors", "timeout", "retries", "backoff", "param", "optional", "deleted",
                 "interval", "initialDelay", "idle", "sharp", "cancellationBackoff",
                 "cancellationTimeout", "cancellationPolling", "operations", "subresource",
                 "persistent", "sideEffects", "ignoreFailures", "versions")


def ordered(values, order):
    """values without unset entries (None, False, empty), in Go's order,
    integral seconds as ints (Go writes 5, not 5.0)."""
    return {k: _structs._go_numbers(values[k]) for k in order
            if values.get(k) is not None and (k == "param" or values[k] not in (False, "", [], {}))}


def build_filters(kind, labels=None, annotations=None, field=None, value=None, old=None,
                  new=None, when=None):
    """(filters dict, Callbacks, dotted field) of a handler's filter options."""
    callbacks = _filters.Callbacks()
    field = _filters.dotted(field)
    if field is None and any(v is not None for v in (value, old, new)):
        raise TypeError("value=, old= and new= need a field=")
    if value is not None and (old is not None or new is not None):
        raise TypeError("value= cannot be combined with old= or new=")
    changing = kind in CHANGING
    f = {
        "labels": _filters.meta_filters("labels", labels, callbacks),
        "annotations": _filters.meta_filters("annotations", annotations, callbacks),
        "field": field,
        "value": _filters.value_filter("value", value, field, callbacks, changing),
        "old": _filters.value_filter("old", old, field, callbacks, changing),
        "new": _filters.value_filter("new", new, field, callbacks, changing),
    }
    if when is not None:
        if not callable(when):
            raise TypeError(f"when={when!r} is not callable")
        callbacks.when = when
    f["when"] = bool(callbacks)
    return ordered(f, _FILTER_ORDER), callbacks, field


#: The kinds under which one function may serve several resources with one
#: id (abi.Manifest.Validate): Kopf's stacked @kopf.on.update('pods') and
#: @kopf.on.update('services'), or @kopf.on.event over several resources.
SHARED_BY_RESOURCES = CHANGING + ("event",)


def _but_param(options):
    return {k: v for k, v in options.items() if k != "param"}


class OperatorRegistry:
    """The handlers of a module, in registration order (Kopf's registry)."""

    def __init__(self):
        self.handlers = []
        self.name = None
        self.version = None
        self.permissions = {"kubernetes": [], "hosts": []}

    def add(self, kind, fn, *, id=None, resource=None, filters=None, options=None, field=None):
        """Registers fn as a handler of kind and returns the Handler."""
        if not callable(fn):
            raise TypeError(f"a {kind} handler must be a function, not {fn!r}")
        given = dict(filters or {})
        filters, callbacks, field = build_filters(kind, **given)
        if kind == "field" and not field:
            raise TypeError("@kopf.on.field needs field=")
        hid = id or callable_id(fn)
        if field and kind != "index":
            hid = f"{hid}/{field}"
        options = ordered(options or {}, _OPTION_ORDER)
        for h in self.handlers:
            if h.id != hid:
                continue
            if h.kind == kind and kind in SHARED_BY_RESOURCES:
                alike = h.fn is fn and h.given == given and _but_param(h.options) == _but_param(options)
                if alike and h.resource == resource:
                    return h  # the same registration again: Kopf serves it once
                if alike:
                    continue  # one function for several resources: the host serves each
                raise ValueError(f"handler id {hid!r} is declared twice as a {kind} handler with other "
                                 f"filters or options (one function may serve several resources of one "
                                 f"kind only with the same filters and options; param may differ): "
                                 f"give one of them an id=")
            if not (h.changing and kind in CHANGING):
                raise ValueError(f"handler id {hid!r} is declared twice (only create, update, delete, "
                                 f"resume and field handlers share an id): give one of them an id=")
            if h.kind == kind:
                raise ValueError(f"handler id {hid!r} is declared twice as a {kind} handler: "
                                 f"give one of them an id=")
        h = Handler(kind, fn, hid, resource, filters, options, callbacks, field)
        h.given = given
        self.handlers.append(h)
        return h

    def find(self, id, kind=None):
        """The handler with id (of kind, when several share the id)."""
        first = None
        for h in self.handlers:
            if h.id == id:
                if kind is None or h.kind == kind:
                    return h
                first = first or h
        return first

    def indexes(self):
        return [h.id for h in self.handlers if h.kind == "index"]

    def manifest(self, default_name="python"):
        """The abi.Manifest as a dict, keys in the Go structs' order."""
        perms = {k: v for k, v in self.permissions.items() if v}
        out = {
            "abiVersion": ABI_VERSION,
            "module": {"name": self.name or default_name},
            "handlers": [h.spec() for h in self.handlers],
        }
        if self.version:
            out["module"]["version"] = self.version
        if perms:
            out["permissions"] = perms
        return _structs._go_numbers(out)


_default = OperatorRegistry()


def get_default_registry() -> OperatorRegistry:
    """The registry the module serves."""
    return _default


def set_default_registry(registry: OperatorRegistry):
    """Makes registry the one the module serves (for tests)."""
    global _default
    _default = registry


def module(name: str, version: str = None, *, registry=None):
    """Names the module (and its version) in the manifest: a kopf-wasm
    addition. Without it the name is the one kopf-wasm build gives."""
    reg = registry or _default
    reg.name, reg.version = name, version


_VERBS = {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "*"}


def permit(group: str, resource: str, *verbs: str, registry=None):
    """Declares that the handlers make Kubernetes requests with verbs on a
    resource (a plural, "pods/status", or "*") of an API group ("" for the
    core group). The host refuses undeclared requests with a 403; a
    server-side apply is a "patch". A kopf-wasm addition."""
    bad = [v for v in verbs if v not in _VERBS]
    if not verbs or bad:
        raise ValueError(f"kopf.permit({group!r}, {resource!r}, ...) needs RBAC verbs "
                         f"(get, list, watch, create, update, patch, delete or *), got {list(verbs)}")
    (registry or _default).permissions["kubernetes"].append(
        {"group": group, "resource": resource, "verbs": list(verbs)})


def allow_hosts(*hosts: str, registry=None):
    """Declares outbound HTTP hosts (globs) the module may reach."""
    (registry or _default).permissions["hosts"].extend(hosts)
