"""Kopf's data structures: read-only body views, Memo, Patch, Diff, Reason,
Resource, Index and Store, and the JSON helpers that encode them."""

import collections.abc
import copy
import datetime
import enum
import json
import re
from typing import Any, NamedTuple, Optional, Tuple

__all__ = [
    "Body", "Spec", "Meta", "Status", "Memo", "Patch", "Diff", "DiffItem",
    "DiffOperation", "Reason", "Resource", "Index", "Store", "EVERYTHING",
]


# --- JSON -----------------------------------------------------------------

def _default(value):
    """json.dumps's fallback: Kopf's structures and common Python types."""
    if isinstance(value, collections.abc.Mapping):
        return dict(value)
    if isinstance(value, (tuple, set, frozenset, collections.abc.Sequence)):
        return list(value)
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, enum.Enum):
        return value.value
    raise TypeError(f"{type(value).__name__} is not JSON: return dicts, lists, strings, numbers, booleans or None")


def _go_numbers(value):
    """Integral floats as ints, as Go's encoding/json writes them (5, not 5.0)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {k: _go_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_numbers(v) for v in value]
    return value


def dumps(value, indent=None) -> str:
    """Compact JSON (or indented), with Kopf's types and Go's number style."""
    if indent is None:
        return json.dumps(value, default=_default, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(value, default=_default, indent=indent, ensure_ascii=False)


def plain(value):
    """A deep copy of value made of dicts, lists and JSON scalars."""
    return json.loads(dumps(value))


_FRACTION = re.compile(r"(\.\d{6})\d+")


def parse_time(text: Optional[str]) -> Optional[datetime.datetime]:
    """An RFC 3339 time from the host (Go writes up to 9 fraction digits)."""
    if not text:
        return None
    text = _FRACTION.sub(r"\1", text.replace("Z", "+00:00"))
    return datetime.datetime.fromisoformat(text)


# --- Read-only views ------------------------------------------------------

class _ReadOnly(dict):
    """A read-only dict with attribute access to its keys.

    It is a real dict (json.dumps, dict(), ``**`` and ``==`` work), nested
    mappings are read-only too, and copy.copy/deepcopy give plain dicts to
    change. Change the object through the ``patch`` kwarg instead.
    """

    __slots__ = ()

    def __init__(self, content=None):
        super().__init__()
        if content:
            dict.update(self, content)  # shallow: nested values are wrapped when read

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        if type(value) is dict or type(value) is list:
            value = _wrap(value)
            dict.__setitem__(self, key, value)  # wrapped once, then kept
        return value

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def _wrap_all(self):
        for key in self:
            self[key]

    def items(self):
        self._wrap_all()
        return dict.items(self)

    def values(self):
        self._wrap_all()
        return dict.values(self)

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no key {name!r}") from None

    def _refuse(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} is read-only: change the object through the patch kwarg")

    __setitem__ = __delitem__ = __setattr__ = __delattr__ = _refuse
    clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __copy__(self):
        return {k: v for k, v in self.items()}

    def __deepcopy__(self, memo):
        return plain(self)

    def __reduce__(self):
        return (dict, (plain(self),))

    def __repr__(self):
        return f"{type(self).__name__}({dict.__repr__(self)})"


def _wrap(value):
    """Dicts as read-only dicts; lists of dicts or lists as lists of those."""
    if isinstance(value, dict) and not isinstance(value, _ReadOnly):
        return _ReadOnly(value)
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return [_wrap(v) for v in value]
    return value


class Spec(_ReadOnly):
    """The object's spec (``{}`` when it has none)."""
    __slots__ = ()


class Status(_ReadOnly):
    """The object's status (``{}`` when it has none)."""
    __slots__ = ()


class Meta(_ReadOnly):
    """The object's metadata, with Kopf's shortcuts."""

    __slots__ = ()

    @property
    def labels(self):
        return self.get("labels") or _ReadOnly()

    @property
    def annotations(self):
        return self.get("annotations") or _ReadOnly()

    @property
    def name(self):
        return self.get("name")

    @property
    def namespace(self):
        return self.get("namespace")

    @property
    def uid(self):
        return self.get("uid")

    @property
    def creation_timestamp(self):
        return self.get("creationTimestamp")

    @property
    def deletion_timestamp(self):
        return self.get("deletionTimestamp")


class Body(_ReadOnly):
    """The whole object as the host last saw it (Kopf's kopf.Body)."""

    __slots__ = ()

    @property
    def metadata(self):
        return Meta(self.get("metadata") or {})

    meta = metadata

    @property
    def spec(self):
        return Spec(self.get("spec") or {})

    @property
    def status(self):
        return Status(self.get("status") or {})


# --- Memo -----------------------------------------------------------------

class Memo(dict):
    """Kopf's kopf.Memo: a dict with attribute access.

    In kopf-wasm it lives in the host between calls and travels as JSON:
    keep JSON values in it (a copy of it is what each call sees).
    """

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value

    def __delattr__(self, name):
        try:
            del self[name]
        except KeyError:
            raise AttributeError(name) from None


# --- Patch ----------------------------------------------------------------

class _Section(dict):
    """A sub-dict of a Patch that joins its parent on first write, so
    reading ``patch.status`` adds nothing to the patch."""

    def __init__(self, parent, key):
        super().__init__()
        self._parent, self._key = parent, key

    def _attach(self):
        if self._parent is not None:
            parent, self._parent = self._parent, None
            if isinstance(parent, _Section):
                parent._attach()
            dict.__setitem__(parent, self._key, self)

    def __setitem__(self, key, value):
        self._attach()
        super().__setitem__(key, value)

    def __delitem__(self, key):
        super().__delitem__(key)

    def update(self, *args, **kwargs):
        self._attach()
        super().update(*args, **kwargs)

    def setdefault(self, key, default=None):
        self._attach()
        return super().setdefault(key, default)

    def __ior__(self, other):
        self.update(other)
        return self

    def _section(self, key):
        value = self.get(key)
        if isinstance(value, dict):
            return value
        return _Section(self, key)

    @property
    def labels(self):
        return self._section("labels")

    @property
    def annotations(self):
        return self._section("annotations")


class Patch(dict):
    """Kopf's kopf.Patch: a JSON merge patch to apply to the object.

    ``patch.status``, ``patch.spec`` and ``patch.metadata`` (``patch.meta``)
    are sub-dicts that join the patch when written; ``None`` values remove
    keys (RFC 7396). ``patch.fns`` holds functions ``fn(body)`` that change
    a copy of the body in place; their changes go out as JSON-patch
    operations, as Kopf's do. ``patch.json_patch`` (a kopf-wasm addition)
    takes RFC 6902 operations as dicts, applied after the merge patch.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fns = []
        self.json_patch = []

    def _section(self, key):
        value = self.get(key)
        if isinstance(value, dict):
            return value
        return _Section(self, key)

    @property
    def metadata(self):
        return self._section("metadata")

    meta = metadata

    @property
    def spec(self):
        return self._section("spec")

    @property
    def status(self):
        return self._section("status")

    def as_json_patch(self, body):
        """The JSON-patch operations of ``fns`` applied to a copy of body."""
        if not self.fns:
            return []
        before = plain(body)
        after = plain(body)
        for fn in self.fns:
            fn(after)
        return json_patch_between(before, after)


def _pointer(path):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def json_patch_between(old, new, path=()):
    """RFC 6902 operations that turn old into new (objects key by key)."""
    if isinstance(old, dict) and isinstance(new, dict):
        ops = []
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": _pointer(path + (key,))})
        for key, value in new.items():
            if key not in old:
                ops.append({"op": "add", "path": _pointer(path + (key,)), "value": value})
            else:
                ops.extend(json_patch_between(old[key], value, path + (key,)))
        return ops
    if old == new and type(old) is type(new):
        return []
    return [{"op": "replace", "path": _pointer(path), "value": new}]


# --- Diff, Reason, Resource -----------------------------------------------

class DiffOperation(str, enum.Enum):
    """The operation of a DiffItem."""

    ADD = "add"
    CHANGE = "change"
    REMOVE = "remove"

    def __str__(self):
        return self.value


class DiffItem(NamedTuple):
    """One difference: Kopf's (operation, field, old, new) tuple."""

    operation: DiffOperation
    field: Tuple[str, ...]
    old: Any
    new: Any

    @property
    def op(self):
        return self.operation


class Diff(tuple):
    """A sequence of DiffItem, as Kopf's kopf.Diff."""

    def __new__(cls, items=()):
        return super().__new__(cls, items)

    @classmethod
    def from_abi(cls, items):
        return cls(DiffItem(DiffOperation(i["op"]), tuple(i.get("field") or ()),
                            _wrap(i.get("old")), _wrap(i.get("new"))) for i in items or ())


class Reason(str, enum.Enum):
    """The cause of a changing handler's call (Kopf's kopf.Reason)."""

    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"
    RESUME = "resume"

    def __str__(self):
        return self.value


class Resource(NamedTuple):
    """The resolved resource of the handled object (Kopf's kopf.Resource)."""

    group: str
    version: str
    plural: str
    kind: str = ""
    namespaced: bool = False

    @property
    def api_version(self):
        return f"{self.group}/{self.version}" if self.group else self.version


#: Kopf's kopf.EVERYTHING: every resource of a group/version, or the cluster.
EVERYTHING = "kopf.EVERYTHING"


# --- Indexes --------------------------------------------------------------

def index_key(key) -> str:
    """An index key as the host keeps it: strings as they are, None as
    "null", anything else (numbers, tuples) as compact JSON."""
    if isinstance(key, str):
        return key
    if isinstance(key, tuple):
        key = list(key)
    return dumps(key)


def _key_of(text: str):
    if text == "null":
        return None
    if text.startswith("["):
        try:
            return tuple(json.loads(text))
        except ValueError:
            pass
    return text


#: The JSON form of a set in an index value: ["kopf:set", item, ...]. Index
#: values travel to the host and back as JSON, which has no sets, and
#: Kopf's recipes (indices of indices) keep sets in indexes. An array, not
#: an object: the host reads an object result as {key: value}, and a set
#: returned alone is one value under the null key.
SET_TAG = "kopf:set"


def index_value(value):
    """An index value as the host keeps it: sets and frozensets, at any
    depth, as ["kopf:set", items...] (see _unset), the rest as it is."""
    if isinstance(value, (set, frozenset)):
        return [SET_TAG] + [index_value(v) for v in value]
    if isinstance(value, collections.abc.Mapping):
        return {k: index_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [index_value(v) for v in value]
    return value


def _unset(value):
    """An index value as its handler returned it: the sets index_value
    tagged are sets again, their items hashable (lists as tuples)."""
    if isinstance(value, dict):
        return {k: _unset(v) for k, v in value.items()}
    if isinstance(value, list):
        if value and value[0] == SET_TAG:
            return {_hashable(_unset(v)) for v in value[1:]}
        return [_unset(v) for v in value]
    return value


def _hashable(value):
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


class Store(collections.abc.Collection):
    """The values indexed under one key (Kopf's kopf.Store): unordered,
    duplicates kept."""

    def __init__(self, values):
        self._values = [_wrap_indexed(v) for v in values]

    def __contains__(self, value):
        return value in self._values

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def __repr__(self):
        return f"Store({self._values!r})"


def _wrap_indexed(value):
    """An indexed value as the handlers see it: a Kubernetes object (an
    index of whole bodies, as Kopf's docs mirror resources) as a kopf.Body
    with .meta, .spec and .status; anything else as _wrap does."""
    if isinstance(value, dict) and isinstance(value.get("metadata"), dict) and \
            ("kind" in value or "apiVersion" in value):
        return Body(value)
    value = _unset(value)
    if isinstance(value, set):
        return value
    return _wrap(value)


class Index(collections.abc.Mapping):
    """An index by key (Kopf's kopf.Index): a read-only mapping of Stores.

    Keys are what the index handler returned: strings, None for results
    that were not dicts, tuples for tuple keys. An index the host did not
    send (too large) is read through the host's index_lookup.
    """

    def __init__(self, name, content, lookup=None):
        self._name = name
        self._content = content  # {key text: [values]} or None
        self._lookup = lookup

    def _all(self):
        if self._content is None:
            self._content = self._lookup(self._name, None, True) or {}
        return self._content

    def __getitem__(self, key):
        text = index_key(key)
        if self._content is None and self._lookup is not None:
            values = self._lookup(self._name, key, False)
        else:
            values = self._all().get(text)
        if not values:
            raise KeyError(key)
        return Store(values)

    def __iter__(self):
        return (_key_of(k) for k, v in self._all().items() if v)

    def __len__(self):
        return sum(1 for v in self._all().values() if v)

    def __repr__(self):
        return f"Index({self._name!r})"


def deepcopy_plain(value):
    """A deep copy that turns read-only views into plain dicts."""
    return copy.deepcopy(value)
