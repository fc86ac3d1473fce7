"""Kopf's filters: markers, combinators, their manifest form, the callable
filters the module evaluates when the host asks (Request.call = "when"),
and the host's own matching (for sub-handlers and the test kit).

The host applies labels, annotations, field, value, old and new itself; a
callable among them is marked ``{"callback": true}`` and, with ``when``,
sets the handler's ``filters.when``: the host then asks the module, after
every other filter matched, and the module runs the callables in
declaration order and ``when`` last.
"""

import enum
import json

from . import _structs

__all__ = ["PRESENT", "ABSENT", "MetaFilterToken", "all_", "any_", "none_", "not_"]


class MetaFilterToken(enum.Enum):
    """kopf.PRESENT and kopf.ABSENT."""

    PRESENT = "present"
    ABSENT = "absent"


PRESENT = MetaFilterToken.PRESENT
ABSENT = MetaFilterToken.ABSENT


def all_(fns):
    """A filter that matches when every one of fns does."""
    fns = list(fns)
    return lambda *args, **kwargs: all(fn(*args, **kwargs) for fn in fns)


def any_(fns):
    """A filter that matches when any of fns does."""
    fns = list(fns)
    return lambda *args, **kwargs: any(fn(*args, **kwargs) for fn in fns)


def none_(fns):
    """A filter that matches when none of fns does."""
    fns = list(fns)
    return lambda *args, **kwargs: not any(fn(*args, **kwargs) for fn in fns)


def not_(fn):
    """A filter that matches when fn does not."""
    return lambda *args, **kwargs: not fn(*args, **kwargs)


def dotted(field):
    """A field as a dotted path: "spec.x", ("spec", "x") or ["spec", "x"]."""
    if field is None:
        return None
    if isinstance(field, str):
        return field
    if isinstance(field, (tuple, list)) and all(isinstance(p, str) for p in field):
        return ".".join(field)
    raise TypeError(f"field={field!r}: use a dotted string such as 'spec.replicas' or a tuple of keys")


class Callbacks:
    """A handler's callable filters, in the order the module runs them."""

    def __init__(self):
        self.checks = []  # (description, fn(ctx) -> bool)
        self.when = None

    def __bool__(self):
        return bool(self.checks) or self.when is not None


def meta_filters(where, filters, callbacks):
    """The manifest's {key: MetaFilter} for labels= or annotations=."""
    if filters is None:
        return None
    if not hasattr(filters, "items"):
        raise TypeError(f"{where}={filters!r}: use a dict of key to a value, kopf.PRESENT, kopf.ABSENT or a callable")
    out = {}
    for key, value in filters.items():
        if value is None:
            raise ValueError(f"{where}[{key!r}] is None: use kopf.ABSENT for a missing {where[:-1]}")
        if isinstance(value, MetaFilterToken):
            out[key] = {value.value: True}
        elif isinstance(value, str):
            out[key] = {"value": value}
        elif callable(value):
            out[key] = {"callback": True}
            callbacks.checks.append((f"{where}[{key}]", _meta_check(where, key, value)))
        else:
            raise TypeError(f"{where}[{key!r}]={value!r}: use a string, kopf.PRESENT, kopf.ABSENT or a callable")
    return {k: out[k] for k in sorted(out)}


def _meta_check(where, key, fn):
    def check(ctx):
        content = ctx.body.get("metadata", {}).get(where) or {}
        return fn(content.get(key), **ctx.filter_kwargs())
    return check


def value_filter(which, value, field, callbacks, changing):
    """The manifest's ValueFilter for value=, old= or new= (None: none)."""
    if value is None:
        return None
    if isinstance(value, MetaFilterToken):
        return {value.value: True}
    if callable(value):
        callbacks.checks.append((which, _value_check(which, field, value, changing)))
        return {"callback": True}
    return {"value": _structs.plain(value)}


def _value_check(which, field, fn, changing):
    def check(ctx):
        kwargs = ctx.filter_kwargs()
        if changing and (ctx.request.get("old") is not None or ctx.request.get("new") is not None):
            old, new = lookup(ctx.request.get("old"), field)[0], lookup(ctx.request.get("new"), field)[0]
            if which == "old":
                return fn(_structs._wrap(old), **kwargs)
            if which == "new":
                return fn(_structs._wrap(new), **kwargs)
            return fn(_structs._wrap(new), **kwargs) or fn(_structs._wrap(old), **kwargs)
        return fn(_structs._wrap(lookup(ctx.body, field)[0]), **kwargs)
    return check


def run_callbacks(callbacks, ctx):
    """Runs a handler's callable filters and when, as the host's when call."""
    for _, check in callbacks.checks:
        if not check(ctx):
            return False
    if callbacks.when is not None:
        return bool(callbacks.when(**ctx.filter_kwargs()))
    return True


# --- The host's matching ------------------------------------------------------
# The same rules as host/internal/registry/filters.go (and the Go test kit's
# kopftest/filters.go); tests/test_filters.py checks the same table.

def lookup(obj, path):
    """(value, found) at a dotted path."""
    value = obj
    if not path:
        return obj, obj is not None
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None, False
        value = value[key]
    return value, True


def check_value(f, value, found):
    """One value against a ValueFilter dict (callbacks pass here)."""
    if f.get("callback"):
        return True
    if f.get("present"):
        return found
    if f.get("absent"):
        return not found
    return found and _structs.plain(f.get("value")) == _structs.plain(value)


def meta_mismatch(what, filters, content):
    """Why labels or annotations do not match ("" when they do)."""
    content = content or {}
    for key in sorted(filters or {}):
        f = filters[key]
        found = key in content
        value = content.get(key)
        if f.get("callback"):
            continue
        if f.get("absent") and found:
            return f"its {what} filter wants {key} absent, the object has {_quote(value)}"
        if f.get("present") and not found:
            return f"its {what} filter wants {key} present, the object has none"
        if "value" in f and not found:
            return f"its {what} filter wants {key}={_quote(f['value'])}, the object has none"
        if "value" in f and value != f["value"]:
            return f"its {what} filter wants {key}={_quote(f['value'])}, the object has {key}={_quote(value)}"
    return ""


def _quote(value):
    """A value quoted as the host quotes it (Go's %q of its text), so the
    kit's reasons are the host's words."""
    if value is None:
        text = "<nil>"
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, separators=(",", ":"))
    return json.dumps(text, ensure_ascii=False)
