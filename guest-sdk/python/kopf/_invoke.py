"""One handler call: Kopf's kwargs from an abi.Request, the function run
(plain or ``async def``), and its outcome, result, patch and memo folded
into an abi.Response."""

import contextvars
import datetime
import functools
import inspect
import time
import traceback

from . import _daemons, _errors, _filters, _host, _logging, _structs
from ._structs import dumps, plain

#: The call that is running (for kopf.register/execute, adopt, events).
current_call = contextvars.ContextVar("kopf_call", default=None)

_DEFAULT_ERRORS = {"event": "ignored", "index": "ignored", "validate": "permanent",
                   "mutate": "permanent"}


def current():
    """The running call, or a clear error outside of handlers."""
    call = current_call.get()
    if call is None:
        raise RuntimeError("kopf: this works only while a handler runs")
    return call


class Settings:
    """A stand-in for Kopf's OperatorSettings: the host's settings are its
    own (kopf-wasm run flags and host/settings), so writes here only log
    one line each."""

    def __init__(self, path="settings"):
        object.__setattr__(self, "_path", path)

    def __getattr__(self, name):
        child = Settings(f"{self._path}.{name}")
        object.__setattr__(self, name, child)
        return child

    def __setattr__(self, name, value):
        _logging.logger.warning(
            "%s.%s = %r has no effect: kopf-wasm's host has its own settings (see kopf-wasm run --help)",
            self._path, name, value)


class Call:
    """What one handler (or sub-handler) call sees and leaves behind."""

    def __init__(self, request, handler, registry, parent=None):
        self.request, self.handler, self.registry = request, handler, registry
        self.kind = request.get("kind") or handler.kind
        self.body = request.get("body") or {}
        self.parent = parent
        if parent is None:
            self.patch = _structs.Patch()
            self.memo = _structs.Memo(request.get("memo") or {})
            self.memo_was = dumps(self.memo) if self.memo else "{}"
            self.warnings = []
            self.tree = None  # sub-handlers' shared state (_subhandlers.Tree)
            self.stopped = None
        else:
            self.patch, self.memo, self.memo_was = parent.patch, parent.memo, parent.memo_was
            self.warnings, self.tree, self.stopped = parent.warnings, parent.tree, parent.stopped
        self.subs = []        # sub-handlers registered and not run yet
        self.executed = False  # kopf.execute() was called
        self.is_async = inspect.iscoroutinefunction(handler.fn)
        if self.kind in ("daemon", "timer") and self.stopped is None:
            self.stopped = (_daemons.AsyncDaemonStopped if self.is_async else _daemons.DaemonStopped)()

    # --- kwargs -----------------------------------------------------------

    def _indexes(self):
        indices = self.request.get("indices") or {}
        return {name: _structs.Index(name, indices.get(name), lookup_index)
                for name in self.registry.indexes()}

    def _resource(self):
        r = self.request.get("resource")
        if not r:
            return None
        return _structs.Resource(r.get("group", ""), r.get("version", ""), r.get("plural", ""),
                                 r.get("kind", ""), bool(r.get("namespaced")))

    def filter_kwargs(self):
        """The kwargs a filter callable gets (the handler's, less patch)."""
        kwargs = self.kwargs()
        kwargs.pop("patch", None)
        return kwargs

    def kwargs(self):
        """Kopf's kwargs for this call's kind."""
        req = self.request
        started = _structs.parse_time(req.get("started"))
        kw = {
            "logger": _logging.logger,
            "memo": self.memo,
            "param": req.get("param"),
            "retry": req.get("retry", 0),
            "started": started,
            "runtime": datetime.timedelta(seconds=req.get("runtime") or 0),
        }
        if self.kind in ("startup", "cleanup", "probe"):
            kw["activity"] = self.kind
            kw["settings"] = Settings()
            kw.update(self._indexes())
            return kw
        body = _structs.Body(self.body)
        meta = body.metadata
        kw.update(
            resource=self._resource(), patch=self.patch, body=body, spec=body.spec, meta=meta,
            status=body.status, uid=req.get("uid") or meta.uid, name=req.get("name") or meta.name,
            namespace=req.get("namespace") or meta.namespace, labels=meta.labels,
            annotations=meta.annotations,
        )
        if self.handler.changing:
            kw["reason"] = _structs.Reason(req["reason"]) if req.get("reason") else None
            kw["old"] = _structs._wrap(req.get("old"))
            kw["new"] = _structs._wrap(req.get("new"))
            kw["diff"] = _structs.Diff.from_abi(req.get("diff"))
        elif self.kind == "event":
            event = req.get("event") or {}
            kw["type"] = event.get("type") or None
            kw["event"] = {"type": event.get("type") or None,
                           "object": _structs.Body(event.get("object") or self.body)}
        elif self.kind in ("daemon", "timer"):
            kw["stopped"] = self.stopped
        elif self.kind in ("validate", "mutate"):
            adm = req.get("admission") or {}
            kw.update(
                dryrun=bool(adm.get("dryRun")), warnings=self.warnings,
                userinfo=_structs._wrap(adm.get("userInfo") or {}),
                headers=_structs._wrap(adm.get("headers") or {}), sslpeer={},
                operation=adm.get("operation"), subresource=adm.get("subresource") or None,
                old=_structs.Body(req["old"]) if req.get("old") else None,
                new=_structs.Body(req["new"]) if req.get("new") else None,
                diff=_structs.Diff.from_abi(req.get("diff")),
            )
        kw.update(self._indexes())
        return kw

    # --- running ------------------------------------------------------------

    def sleep(self, seconds):
        """How async handlers sleep: through the host for daemons and
        timers (True once stopped), else plainly."""
        if self.stopped is not None:
            return self.stopped.sleep(seconds)
        time.sleep(seconds)
        return False

    def invoke(self, fn, kwargs):
        """Calls fn with the kwargs it accepts; runs coroutines to the end."""
        token = current_call.set(self)
        try:
            result = fn(**accepted(fn, kwargs))
            if inspect.isawaitable(result):
                from . import _loop  # asyncio only when a handler is async
                result = _loop.run(_awaited(result), sleep=self.sleep, on_leftover=_leftover)
            return result
        finally:
            current_call.reset(token)

    def run(self):
        """Runs the handler (and its sub-handlers); returns (result, exc)."""
        from . import _subhandlers
        try:
            result = self.invoke(self.handler.fn, self.kwargs())
            result = _subhandlers.finish(self, result)
            return result, None
        except BaseException as exc:  # every failure is an outcome
            return None, exc

    def matches(self):
        """Answers a when call: the callable filters and when."""
        token = current_call.set(self)
        try:
            return _filters.run_callbacks(self.handler.callbacks, self)
        finally:
            current_call.reset(token)


async def _awaited(awaitable):
    return await awaitable


def _leftover(task):
    _logging.logger.error(
        "A background task (%s) was still running when the handler returned; it is cancelled: "
        "a sandboxed handler keeps nothing running between calls",
        task.get_coro().__qualname__ if task.get_coro() else task)


@functools.lru_cache(maxsize=None)
def _accepts(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return frozenset(p.name for p in params
                     if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY))


def accepted(fn, kwargs):
    """kwargs, or only those fn names when it takes no **kwargs."""
    try:
        names = _accepts(fn)
    except TypeError:  # unhashable callable
        return kwargs
    if names is None:
        return kwargs
    return {k: v for k, v in kwargs.items() if k in names}


def lookup_index(name, key, whole):
    """Reads an index the request did not carry, through the host."""
    request = {"index": name, "key": None if whole else _index_key_json(key)}
    if whole:
        request["all"] = True
    reply = _host.call("index_lookup", request)
    _host.raise_for(reply, f"index_lookup {name}")
    return reply.get("index") if whole else reply.get("values") or []


def _index_key_json(key):
    if key is None or isinstance(key, str):
        return key
    return _structs.index_key(key)


# --- outcomes -----------------------------------------------------------------

def errors_mode(handler):
    """The handler's errors mode, with Kopf's default for its kind."""
    return handler.options.get("errors") or _DEFAULT_ERRORS.get(handler.kind, "temporary")


def outcome(exc, handler, id):
    """The abi.Outcome of a call that raised exc (None: success). An
    arbitrary exception is logged with its traceback, as Kopf logs it."""
    if exc is None:
        return {"status": "success"}
    if isinstance(exc, _errors.HandlerChildrenRetry):
        return {"status": "children"}
    message = str(exc) or type(exc).__name__
    if isinstance(exc, _errors.AdmissionError):
        return {"status": "permanent", "message": message, "code": exc.code or 500}
    if isinstance(exc, _errors.PermanentError):
        return {"status": "permanent", "message": message}
    if isinstance(exc, _errors.TemporaryError):
        out = {"status": "temporary", "message": message}
        if exc.delay is not None:
            out["delay"] = _structs._go_numbers(max(0.0, float(exc.delay)))
        return out
    mode = errors_mode(handler)
    then = {"ignored": "Will ignore.", "permanent": "Will stop.", "temporary": "Will retry."}[mode]
    _logging.logger.error("Handler '%s' failed with an exception. %s", id, then,
                          exc_info=(type(exc), exc, exc.__traceback__))
    return {"status": "error", "message": "".join(traceback.format_exception_only(type(exc), exc)).strip()}


def encode_result(value, kind):
    """A handler's return value as JSON for Response.result (None: none).
    Index results with non-string keys (tuples, None) get the host's keys,
    and sets in their values the JSON form the Index turns back into sets."""
    if value is None:
        return None
    if kind == "index":
        if isinstance(value, dict):
            value = {_structs.index_key(k): _structs.index_value(v) for k, v in value.items()}
        else:
            value = _structs.index_value(value)
    return plain(value)


def encode_patch(call):
    """Response.patch: the merge patch and JSON-patch operations, or None."""
    merge = plain(dict(call.patch)) if call.patch else None
    ops = call.patch.as_json_patch(call.body) + [plain(op) for op in call.patch.json_patch]
    if not merge and not ops:
        return None
    out = {}
    if merge:
        out["merge"] = merge
    if ops:
        out["json"] = ops
    return out
