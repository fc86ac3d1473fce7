"""The native test kit: run a module's handlers with the machine's Python,
without a cluster or wasm (Kopf's KopfRunner is the idea).

    import kopf.testing, handlers

    host = kopf.testing.Host()             # installs a fake _kopf_host
    res = host.run("create_fn", body)      # as the host would call it
    assert res.status == "success"
    assert res.result == {"message": "hello"}
    assert res.patch == {"status": {"x": 1}}
    assert host.events[0]["reason"] == "Created"

Host.run applies the handler's filters first, as the kopf-wasm host does
(labels, annotations, the field's value, for update and field handlers
that the field changed, old and new, then the module's callable filters
and when, asked with a "when" call) and raises FilteredOut saying why when
the host would not call the handler; ``force=True`` calls it anyway.
Memos are kept per object, index handlers feed the indexes every handler
gets, daemons' ``stopped`` turns true after ``host.stop_after`` sleeps,
and Kubernetes requests go to an in-memory store (``host.objects``),
refused with a 403 when the manifest did not declare the permission, as
the host refuses them.
"""

import copy
import datetime
import json
import sys

from . import _filters, _logging, _registry, _runtime, _structs

__all__ = ["Host", "Result", "FilteredOut", "FakeHost", "KopfRunner"]

CHANGING = _registry.CHANGING


class KopfRunner:
    """Kopf's KopfRunner runs an operator process against a cluster; a
    kopf-wasm module is run by the host instead."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("kopf.testing.KopfRunner is not offered: test the handlers with "
                           "kopf.testing.Host(), or run the module with kopf-wasm run against a cluster")


class FilteredOut(AssertionError):
    """The host would not call the handler for this object."""


class Result:
    """A handler call's response, with what the call did through the host."""

    def __init__(self, request, response, calls):
        self.request, self.response = request, response
        self.calls = calls
        self.outcome = response.get("outcome", {})
        self.status = self.outcome.get("status")
        self.message = self.outcome.get("message")
        self.delay = self.outcome.get("delay")
        self.result = response.get("result")
        patch = response.get("patch") or {}
        self.patch = patch.get("merge") or {}
        self.json_patch = patch.get("json") or []
        self.memo = response.get("memo")
        self.admission = response.get("admission")
        self.matched = response.get("matched")
        self.subhandlers = response.get("subhandlers") or []

    @property
    def allowed(self):
        return (self.admission or {}).get("allowed")

    def _of(self, name):
        return [req for n, req in self.calls if n == name]

    @property
    def logs(self):
        return self._of("log")

    @property
    def events(self):
        return self._of("post_event")

    @property
    def kube_requests(self):
        return self._of("kube_request")

    def __repr__(self):
        return f"<Result {self.status} {self.message or ''}>"


def essence(obj, field=None):
    """The diff-base essence as the host builds it: no status, apiVersion
    or kind; of metadata only labels and annotations (without kubectl's
    last-applied configuration and operators' annotations), none of them empty; plus the handler's
    field when it has one (a field in status is essential to its handler)."""
    if obj is None:
        return None
    out = {}
    for key, value in obj.items():
        if key not in ("status", "apiVersion", "kind", "metadata"):
            out[key] = value
    meta = obj.get("metadata") or {}
    kept = {}
    for key in ("labels", "annotations"):
        content = meta.get(key) or {}
        content = {k: v for k, v in content.items() if key != "annotations" or _essential_annotation(k, content)}
        if content:
            kept[key] = content
    if kept:
        out["metadata"] = kept
    if field:
        value, found = _filters.lookup(obj, field)
        if found:
            *parents, last = field.split(".")
            target = out
            for key in parents:
                target[key] = dict(target.get(key) or {})
                target = target[key]
            target[last] = value
    return _structs.plain(out)


KUBECTL_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _essential_annotation(key, annotations):
    """Whether an annotation is in the essence, as the host decides: not
    kubectl's last-applied configuration, nor under an operator's prefix
    (Kopf's kopf.zalando.org, its subdomains, or a prefix whose annotations
    include its "kopf-managed" marker)."""
    if key == KUBECTL_LAST_APPLIED:
        return False
    prefix, slash, _ = key.partition("/")
    if not slash:
        return True
    return f"{prefix}/kopf-managed" not in annotations and prefix != "kopf.zalando.org" \
        and not prefix.endswith(".kopf.zalando.org")


def diff(old, new, path=()):
    """Kopf's diff: objects key by key, anything else as a whole."""
    if old == new:
        return []
    if old is None:
        return [{"op": "add", "field": list(path), "new": new}]
    if new is None:
        return [{"op": "remove", "field": list(path), "old": old}]
    if not isinstance(old, dict) or not isinstance(new, dict):
        return [{"op": "change", "field": list(path), "old": old, "new": new}]
    out = []
    for key in sorted(set(old) | set(new)):
        out.extend(diff(old.get(key), new.get(key), path + (key,)))
    return out


class FakeHost:
    """The fake ``_kopf_host`` module: answers each host function."""

    def __init__(self, host):
        self._host = host

    def call(self, name, request):
        req = json.loads(request)
        self._host.calls.append((name, req))
        reply = getattr(self._host, "_" + name)(req)
        return None if reply is None else json.dumps(reply).encode()


class Host:
    """A fake kopf-wasm host for one module's registry (the default one)."""

    def __init__(self, registry=None, *, check_permissions=True):
        self.registry = registry or _registry.get_default_registry()
        self.calls = []            # (host function, request) of every call
        self.memos = {}            # object key -> memo; "" -> the operator memo
        self.indexes = {}          # index id -> {object key -> result}
        self.objects = {}          # (group, resource, namespace, name) -> object
        self.stop_after = None     # sleeps until a daemon is stopped (None: never)
        self.stopped = False       # True: daemons are asked to stop at once
        self.stop_reason = "deleted"
        self.sleeps = []           # seconds asked by sleep_until_stopped
        self.check_permissions = check_permissions
        self.kube = None           # optional fn(request) -> reply, before the store
        sys.modules["_kopf_host"] = FakeHost(self)
        _logging.install_root()  # as the runtime's boot does: logging.info() reaches the host

    # --- what happened ----------------------------------------------------

    def _of(self, name):
        return [req for n, req in self.calls if n == name]

    @property
    def logs(self):
        return self._of("log")

    @property
    def events(self):
        return self._of("post_event")

    @property
    def kube_requests(self):
        return self._of("kube_request")

    def manifest(self):
        """The module's manifest as the host reads it."""
        return json.loads(_runtime.manifest()) if self.registry is _registry.get_default_registry() \
            else self.registry.manifest()

    def spec(self, id, kind=None):
        handler = self.registry.find(id, kind)
        if handler is None:
            raise KeyError(f"the module has no handler {id!r}; it has {[h.id for h in self.registry.handlers]}")
        return handler

    # --- requests ---------------------------------------------------------

    def request(self, id, body=None, old=None, *, kind=None, **fields):
        """The abi.Request the host would send to handler id about body
        (old: its previous state, None for none). Keyword fields override
        the request's (retry=2, runtime=30.0, ...)."""
        handler = self.spec(id, kind)
        req = {"handler": id, "kind": handler.kind, "retry": 0,
               "started": datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")}
        if "param" in handler.options:
            req["param"] = handler.options["param"]
        req["indices"] = self._indices()
        if handler.kind in _registry.ACTIVITIES:
            req["activity"] = handler.kind
            if "" in self.memos:
                req["memo"] = self.memos[""]
        else:
            obj = body if body is not None else old
            obj = _structs.plain(obj or {})
            meta = obj.get("metadata") or {}
            req.update(body=obj, name=meta.get("name"), namespace=meta.get("namespace"), uid=meta.get("uid"))
            req["resource"] = self._resource(handler, obj)
            memo = self.memos.get(self._key(obj), self.memos.get(""))
            if memo is not None:
                req["memo"] = memo
            self._cause(req, handler, body, old)
        req.update(fields)
        return {k: v for k, v in req.items() if v is not None}

    def _resource(self, handler, obj):
        sel = handler.resource or {}
        group, version = sel.get("group", ""), sel.get("version", "")
        if obj.get("apiVersion"):
            group, _, version = obj["apiVersion"].rpartition("/")
        return {"group": group, "version": version, "plural": sel.get("name", ""),
                "kind": obj.get("kind", ""), "namespaced": bool((obj.get("metadata") or {}).get("namespace"))}

    def _cause(self, req, handler, body, old):
        kind = handler.kind
        if kind in CHANGING:
            req["reason"] = {"create": "create", "update": "update", "delete": "delete",
                             "resume": "resume"}.get(kind, "create" if old is None else "update")
            before, after = essence(old, handler.field), essence(body, handler.field)
            if handler.field:
                before = _filters.lookup(before, handler.field)[0]
                after = _filters.lookup(after, handler.field)[0]
            req["old"], req["new"], req["diff"] = before, after, diff(before, after)
        elif kind == "event":
            req["event"] = {"type": "MODIFIED" if old is not None else "ADDED", "object": req["body"]}
        elif kind in ("validate", "mutate"):
            req["new"] = req["body"]
            if old is not None:
                req["old"] = _structs.plain(old)
            req["diff"] = diff(_structs.plain(old), req["body"])
            req["admission"] = {"uid": "kopf-testing-" + str(req.get("name")),
                                "operation": "UPDATE" if old is not None else "CREATE",
                                "userInfo": {"username": "kopf-testing"}}

    @staticmethod
    def _key(obj):
        meta = (obj or {}).get("metadata") or {}
        return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"

    def _indices(self):
        out = {}
        for name in self.registry.indexes():
            merged = {}
            for value in self.indexes.get(name, {}).values():
                items = value.items() if isinstance(value, dict) else [("null", value)]
                for key, v in items:
                    merged.setdefault(key, []).append(v)
            out[name] = merged
        return out

    # --- calls --------------------------------------------------------------

    def call(self, request):
        """Sends an abi.Request (a dict) to the module; keeps the memo and
        index values the response leaves, as the host does."""
        start = len(self.calls)
        raw = _runtime.handle(json.dumps(request).encode()) if self.registry is _registry.get_default_registry() \
            else _structs.dumps(_runtime.respond(request, self.registry)).encode()
        response = json.loads(raw)
        result = Result(request, response, self.calls[start:])
        if request.get("call") != "when":
            key = "" if request.get("activity") else self._key(request.get("body"))
            if response.get("memo") is not None:
                self.memos[key] = response["memo"]
            if request.get("kind") == "index":
                values = self.indexes.setdefault(request["handler"], {})
                if result.status == "success" and result.result is not None:
                    values[key] = result.result
                elif result.status != "success":
                    values.pop(key, None)
        return result

    def match(self, id, body=None, old=None, kind=None):
        """Asks the module's callable filters and when, as the host does."""
        handler = self.spec(id, kind)
        if not handler.filters.get("when"):
            return True
        req = self.request(id, body, old, kind=kind)
        if handler.changing and handler.field:  # when calls see the whole essences
            req["old"], req["new"] = essence(old), essence(body)
            req["diff"] = diff(req["old"], req["new"])
        req["call"] = "when"
        res = self.call(req)
        if res.status != "success":
            raise AssertionError(f"the when filter of {id!r} failed: {res.message}")
        return bool(res.matched)

    def why_not(self, id, body=None, old=None, kind=None):
        """Why the host would not call handler id for body ("" if it would)."""
        handler = self.spec(id, kind)
        why = declared_why_not(handler.kind, handler.filters, body, old)
        if why or handler.kind in _registry.ACTIVITIES:
            return why
        if not self.match(id, body, old, kind):
            return _callback_refusal(handler.filters, handler.field)
        return ""

    def run(self, id, body=None, old=None, *, kind=None, force=False, **fields):
        """Calls handler id about body as the host would; raises FilteredOut
        when the host would not call it (unless force=True)."""
        if not force:
            why = self.why_not(id, body, old, kind)
            if why:
                raise FilteredOut(f"the host would not call handler {id!r} for this object: {why}")
        return self.call(self.request(id, body, old, kind=kind, **fields))

    def run_cycles(self, id, body=None, old=None, *, kind=None, max_cycles=20, **fields):
        """Calls a handler with sub-handlers cycle after cycle, as the host
        does, until it is not "children" any more; returns every Result."""
        states = {}
        results = []
        for cycle in range(max_cycles):
            req = self.request(id, body, old, kind=kind, retry=cycle, **fields)
            req["subhandlers"] = list(states.values())
            res = self.call(req)
            results.append(res)
            for sub in res.subhandlers:
                state = states.setdefault(sub["id"], {"id": sub["id"], "retry": 0})
                out = sub.get("outcome")
                if out is None:
                    continue
                if out["status"] in ("success", "permanent") or \
                        (out["status"] == "error" and sub["options"].get("errors") in ("ignored", "permanent")):
                    state["finished"] = True
                else:
                    state["retry"] += 1
                    retries = sub["options"].get("retries")
                    if retries and state["retry"] >= retries:
                        state["finished"] = True
            if res.status != "children":
                return results
        raise AssertionError(f"handler {id!r} still has unfinished sub-handlers after {max_cycles} cycles")

    # --- host functions -----------------------------------------------------

    def _log(self, req):
        return None

    def _post_event(self, req):
        return {}

    def _index_lookup(self, req):
        index = self._indices().get(req.get("index"), {})
        if req.get("all"):
            return {"values": [], "index": index}
        key = req.get("key")
        key = "null" if key is None else key if isinstance(key, str) else json.dumps(key, separators=(",", ":"))
        return {"values": index.get(key, [])}

    #: Sleeps a daemon may take in one test when stop_after is not set.
    MAX_SLEEPS = 1000

    def _sleep_until_stopped(self, req):
        self.sleeps.append(req.get("seconds"))
        if self.stop_after is None and not self.stopped and len(self.sleeps) > self.MAX_SLEEPS:
            raise AssertionError(f"the handler slept {self.MAX_SLEEPS} times and was never stopped: "
                                 "set host.stop_after = n (or host.stopped = True) to stop it")
        return self._is_stopped(req)

    def _is_stopped(self, req):
        stopped = self.stopped or (self.stop_after is not None and len(self.sleeps) >= self.stop_after)
        return {"stopped": True, "reason": self.stop_reason} if stopped else {"stopped": False}

    def _kube_request(self, req):
        denied = self._denied(req)
        if denied:
            return {"error": {"code": 403, "reason": "Forbidden", "message": denied, "origin": "host"}}
        if self.kube is not None:
            reply = self.kube(req)
            if reply is not None:
                return reply
        return self._store(req)

    def _denied(self, req):
        if not self.check_permissions:
            return ""
        verb = "patch" if req["verb"] == "apply" else req["verb"]
        resource = req["resource"] + ("/" + req["subresource"] if req.get("subresource") else "")
        for perm in self.registry.permissions["kubernetes"]:
            if perm["group"] in (req.get("group", ""), "*") and perm["resource"] in (resource, "*") \
                    and (verb in perm["verbs"] or "*" in perm["verbs"]):
                return ""
        name = self.registry.name or _runtime.default_name
        return (f"module {name!r} did not declare permission to {verb} {resource}; "
                f"add kopf.permit({req.get('group', '')!r}, {resource!r}, {verb!r})")

    def _store(self, req):
        verb = req["verb"]
        key = (req.get("group", ""), req["resource"], req.get("namespace", ""), req.get("name", ""))
        if verb == "list":
            items = [copy.deepcopy(o) for (g, r, ns, _), o in sorted(self.objects.items())
                     if g == key[0] and r == key[1] and (not key[2] or ns == key[2])
                     and _selects(req.get("labelSelector", ""), o)]
            return {"body": {"items": items}}
        body = copy.deepcopy(req.get("body"))
        if verb in ("create", "apply") and body is not None and not key[3]:
            meta = body.setdefault("metadata", {})
            name = meta.get("name") or (meta.get("generateName", "obj-") + str(len(self.objects)))
            meta["name"] = name
            key = key[:3] + (name,)
        if verb in ("create", "apply", "update") and body is not None and key[2]:
            body.setdefault("metadata", {})["namespace"] = key[2]
        existing = self.objects.get(key)
        if verb == "create":
            if existing is not None:
                return _error(409, "AlreadyExists", f"{key[1]} {key[3]!r} already exists")
            self.objects[key] = body
            return {"body": body}
        if verb == "apply" or (verb == "update" and existing is not None):
            self.objects[key] = body if verb == "update" or existing is None else _merge(existing, body)
            return {"body": self.objects[key]}
        if existing is None:
            return _error(404, "NotFound", f"{key[1]} {key[3]!r} not found")
        if verb == "get":
            return {"body": copy.deepcopy(existing)}
        if verb == "patch":
            if req.get("patchType") == "json":
                return _error(415, "UnsupportedMediaType", "kopf.testing's store takes merge patches only")
            self.objects[key] = _merge(existing, body)
            return {"body": copy.deepcopy(self.objects[key])}
        if verb == "delete":
            del self.objects[key]
            return {"body": {"kind": "Status", "status": "Success"}}
        return _error(405, "MethodNotAllowed", f"verb {verb!r}")


def _error(code, reason, message):
    return {"error": {"code": code, "reason": reason, "message": message, "origin": "cluster"}}


def _merge(target, patch):
    """RFC 7396 merge patch."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


def _selects(selector, obj):
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k) == v:
                return False
        elif "=" in term:
            k, v = term.replace("==", "=").split("=", 1)
            if labels.get(k) != v:
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


def _describe(f):
    if f.get("present"):
        return "present"
    if f.get("absent"):
        return "absent"
    if f.get("callback"):
        return "(a callback)"
    return json.dumps(f.get("value"), separators=(",", ":"))


def _callback_refusal(filters, field):
    """Which of a handler's guest-side filters refused (the words of the
    abi module's Filters.CallbackRefusal): the module answers for its when
    function and every callable filter at once, so this names the ones the
    manifest declares."""
    callables = []
    for what in ("labels", "annotations"):
        declared = filters.get(what) or {}
        callables += [f"{what} filter on {k}" for k in sorted(declared) if (declared[k] or {}).get("callback")]
    for what in ("value", "old", "new"):
        if (filters.get(what) or {}).get("callback"):
            callables.append(f"{what} filter on {field}")
    if not callables:
        return "its when filter returned false"
    if len(callables) == 1:
        return f"its callable {callables[0]} (or its when filter, if it has one) returned false"
    return f"one of its callable filters ({', '.join(callables)}) or its when filter, if it has one, returned false"


def declared_why_not(kind, filters, body, old=None):
    """Why the host would not call a handler of kind with filters (the
    manifest's) for body, by its declarative filters alone: every filter
    but the module's callables and when ("" when they match). The shared
    table abi/testdata/filters.json checks it against the host."""
    if kind in _registry.ACTIVITIES or kind == "convert":
        return ""
    f = filters or {}
    field = f.get("field")
    obj = body if body is not None else old
    meta = (obj or {}).get("metadata") or {}
    why = _filters.meta_mismatch("labels", f.get("labels"), meta.get("labels")) or \
        _filters.meta_mismatch("annotations", f.get("annotations"), meta.get("annotations"))
    if why:
        return why
    changing = kind in CHANGING
    before, after = (essence(old, field), essence(obj, field)) if changing else (None, None)
    if field:
        values = [_filters.lookup(after, field), _filters.lookup(before, field)] \
            if changing else [_filters.lookup(obj, field)]
        value = f.get("value")
        if not any((value is None and found) or (value is not None and _filters.check_value(value, v, found))
                   for v, found in values):
            if value is None:
                return f"its field {field} is absent"
            return f"its field {field} does not match the value filter {_describe(value)}"
    if not changing:
        return ""
    if not field:
        if kind == "update" and before == after:
            return "nothing essential changed between the old and the new object"
        return ""
    ov, of = _filters.lookup(before, field)
    nv, nf = _filters.lookup(after, field)
    if kind in ("update", "field") and of == nf and ov == nv:
        return f"its field {field} did not change"
    if f.get("old") and not _filters.check_value(f["old"], ov, of):
        return f"the old value of {field} does not match the old filter {_describe(f['old'])}"
    if f.get("new") and not _filters.check_value(f["new"], nv, nf):
        return f"the new value of {field} does not match the new filter {_describe(f['new'])}"
    return ""
