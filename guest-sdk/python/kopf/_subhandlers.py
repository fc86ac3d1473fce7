"""Sub-handlers: Kopf's @kopf.subhandler, kopf.register and kopf.execute
on the ABI's sub-handler protocol (abi/subhandlers.go).

A wasm module keeps no closures between calls, so the host calls the
parent again in every cycle of its cause until all its sub-handlers are
finished, sending their progress. In each call the parent registers its
sub-handlers anew; they run in the same call (those neither finished nor
sleeping), each with its own retry, started and runtime, and every
registration is reported to the host with its options and outcome.
Sub-handlers share the parent's patch and memo, may have sub-handlers of
their own ("parent/child/grandchild"), and take the error options, param,
labels, annotations and when.
"""

import datetime

from . import _errors, _filters, _invoke, _logging, _registry, _structs
from ._registry import error_options as _error_options

__all__ = ["subhandler", "register", "execute"]


class Tree:
    """One call's sub-handler state, shared by the parent and its subs."""

    def __init__(self, states):
        self.states = {s["id"]: s for s in states or ()}
        self.outcomes = []


class Sub:
    """One registration."""

    def __init__(self, id, handler):
        self.id, self.handler = id, handler


def register(fn, *, id=None, param=None, errors=None, timeout=None, retries=None, backoff=None,
             cooldown=None, labels=None, annotations=None, when=None, **unsupported):
    """Registers fn as a sub-handler of the running handler (kopf.register)."""
    call = _invoke.current()
    if unsupported:
        raise TypeError(f"kopf-wasm's sub-handlers take no {', '.join(sorted(unsupported))} "
                        "(only the error options, param, labels, annotations and when)")
    if call.kind not in _registry.CHANGING:
        raise RuntimeError(f"sub-handlers of {call.kind} handlers are not supported "
                           "(only of create, update, delete, resume and field handlers, as in Kopf)")
    sid = f"{call.handler.id}/{id or _registry.callable_id(fn)}"
    filters, callbacks, _ = _registry.build_filters(call.kind, labels=labels, annotations=annotations, when=when)
    options = _error_options(errors, timeout, retries, backoff, cooldown)
    if param is not None:
        options["param"] = _structs.plain(param)
    handler = _registry.Handler(call.handler.kind, fn, sid, None, filters,
                                _registry.ordered(options, _registry._OPTION_ORDER), callbacks)
    call.subs.append(Sub(sid, handler))
    return fn


def subhandler(*, id=None, param=None, errors=None, timeout=None, retries=None, backoff=None,
               cooldown=None, labels=None, annotations=None, when=None, **unsupported):
    """@kopf.subhandler: registers the decorated function as a sub-handler
    of the running handler, with the id "<parent id>/<id or fn name>"."""
    def decorator(fn):
        register(fn, id=id, param=param, errors=errors, timeout=timeout, retries=retries,
                 backoff=backoff, cooldown=cooldown, labels=labels, annotations=annotations,
                 when=when, **unsupported)
        return fn
    return decorator


class _Done:
    """What kopf.execute() returns when every sub-handler is finished: an
    awaitable, so that ``await kopf.execute(...)`` reads as in Kopf."""

    def __await__(self):
        return
        yield  # noqa: an empty generator

    def __bool__(self):
        return True


def execute(*, fns=None, handlers=None, registry=None, lifecycle=None, cause=None):
    """Runs sub-handlers here and now (Kopf's kopf.execute).

    fns is a mapping of id to function or an iterable of functions; without
    it, the sub-handlers registered so far run. It raises
    HandlerChildrenRetry (not a failure) while some are unfinished, so the
    code after it runs only in the call where all are finished. It works
    with and without await.
    """
    call = _invoke.current()
    if handlers is not None or registry is not None:
        raise TypeError("kopf.execute(handlers=|registry=) is not supported in kopf-wasm: pass fns=")
    if fns is not None:
        items = fns.items() if hasattr(fns, "items") else ((None, fn) for fn in fns)
        for id, fn in items:
            register(fn, id=id)
    return run_pending(call)


def run_pending(call):
    """Runs the call's registered sub-handlers; raises HandlerChildrenRetry
    while some are unfinished."""
    call.executed = True
    pending = False
    subs, call.subs = call.subs, []
    for sub in subs:
        if not run_sub(call, sub):
            pending = True
    if pending:
        raise _errors.HandlerChildrenRetry()
    return _Done()


def finish(call, result):
    """Runs the sub-handlers the handler registered and did not execute
    itself, once it returned (Kopf's implicit execute)."""
    if not call.subs or call.executed:
        return result
    run_pending(call)  # raises HandlerChildrenRetry while unfinished
    return result


def _tree(call):
    root = call
    while root.parent is not None:
        root = root.parent
    if root.tree is None:
        root.tree = Tree(root.request.get("subhandlers"))
    call.tree = root.tree
    return root.tree


def run_sub(call, sub):
    """Runs one sub-handler if it is due; says whether it is finished (as
    far as the module can tell: the host decides)."""
    tree = _tree(call)
    if any(o["id"] == sub.id for o in tree.outcomes):
        return True  # registered twice: the first registration counts
    state = tree.states.get(sub.id)
    known = state is not None
    if not known:
        state = {"id": sub.id, "retry": 0,
                 "started": datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")}
    request = dict(call.request, handler=sub.id, retry=state.get("retry", 0), started=state.get("started"),
                   runtime=state.get("runtime", 0), param=sub.handler.options.get("param"))
    child = _invoke.Call(request, sub.handler, call.registry, parent=call)
    token = _logging.subhandler_id.set(sub.id)
    try:
        if not _matches(child):
            return True  # filtered out: not run, not waited for
        entry = {"id": sub.id, "parent": call.handler.id, "options": sub.handler.options}
        tree.outcomes.append(entry)
        if known and state.get("finished"):
            return True
        if known and state.get("sleeping"):
            return False
        options = sub.handler.options
        if (options.get("timeout") and state.get("runtime", 0) >= options["timeout"]) or \
                (options.get("retries") and state.get("retry", 0) >= options["retries"]):
            return True  # used up: the host fails it without a call
        result, exc = child.run()
        out = _invoke.outcome(exc, sub.handler, sub.id)
        encoded = None
        if out["status"] == "success":
            try:
                encoded = _invoke.encode_result(result, child.kind)
            except (TypeError, ValueError) as err:
                out = {"status": "error", "message": f"kopf: encode the result of {sub.id}: {err}"}
        entry["outcome"] = out  # before the result: the Go struct's order
        if encoded is not None:
            entry["result"] = encoded
        return settled(out, state, options)
    finally:
        _logging.subhandler_id.reset(token)


def _matches(call):
    f = call.handler.filters
    meta = call.body.get("metadata") or {}
    if _filters.meta_mismatch("labels", f.get("labels"), meta.get("labels")) or \
            _filters.meta_mismatch("annotations", f.get("annotations"), meta.get("annotations")):
        return False
    if not f.get("when"):
        return True
    try:
        return call.matches()
    except Exception:
        return False  # a filter that fails counts as no match


def settled(out, state, options):
    """Whether an outcome finishes a sub-handler, as the host would classify
    it with its options (a temporary error of unknown delay is unfinished)."""
    status = out["status"]
    retry, runtime = state.get("retry", 0), state.get("runtime", 0)
    retries, timeout = options.get("retries"), options.get("timeout")
    if status in ("success", "permanent"):
        return True
    if status == "error":
        if options.get("errors") in ("ignored", "permanent"):
            return True
        backoff = options.get("backoff")
        return bool((retries and retry + 1 >= retries) or (timeout and backoff and runtime + backoff >= timeout))
    if status == "temporary":
        if retries and retry + 1 >= retries:
            return True
        return bool(timeout and out.get("delay") is not None and runtime + out["delay"] >= timeout)
    return False
