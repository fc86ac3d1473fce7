"""The two entry points the wasm runtime calls: manifest() and handle().

handle() never raises: a request it cannot read, a handler that is not
there, and every failure of a handler become an abi.Response.
"""

import json
import os
import random
import sys

from . import _invoke, _logging, _registry, _structs

#: The module's name when the author did not call kopf.module(); the
#: runtime's boot sets it from its build configuration.
default_name = "python"

_reseeded = False


def manifest() -> bytes:
    """The abi.Manifest of the registered handlers, as JSON."""
    return _structs.dumps(_registry.get_default_registry().manifest(default_name)).encode()


def handle(request: bytes) -> bytes:
    """Runs one abi.Request; returns the abi.Response as JSON."""
    global _reseeded
    if not _reseeded:
        # A memory snapshot froze random's state: every instance made from
        # it would draw the same numbers. os.urandom is the host's entropy.
        random.seed(os.urandom(32))
        _reseeded = True
    try:
        response = respond(json.loads(request))
    except BaseException as exc:  # the module must answer, whatever happened
        response = {"outcome": {"status": "error", "message": f"kopf: {type(exc).__name__}: {exc}"}}
    try:
        return _structs.dumps(response).encode()
    except BaseException as exc:
        return _structs.dumps({"outcome": {"status": "error",
                                           "message": f"kopf: the response is not JSON: {exc}"}}).encode()


def respond(req: dict, registry=None) -> dict:
    """The abi.Response (a dict) to an abi.Request (a dict)."""
    registry = registry or _registry.get_default_registry()
    handler = registry.find(req.get("handler"), req.get("kind"))
    if handler is None:
        return {"outcome": {"status": "error", "message":
                f"module {registry.name or default_name!r} has no handler {req.get('handler')!r}; "
                "rebuild or reload the module"}}
    _logging.set_min_level(req.get("logLevel"))
    call = _invoke.Call(req, handler, registry)
    if req.get("call") == "when":
        try:
            matched = bool(call.matches())
        except BaseException as exc:
            return {"outcome": _invoke.outcome(exc, handler, handler.id)}
        return {"outcome": {"status": "success"}, "matched": matched}
    result, exc = call.run()
    asyncio = sys.modules.get("asyncio")
    if asyncio and isinstance(exc, asyncio.CancelledError) and call.stopped is not None and call.stopped._stopped:
        exc = None  # cancelled after its stop (see _loop): the daemon ended as asked
    response = {}
    try:
        result = _invoke.encode_result(result, handler.kind) if exc is None else None
    except (TypeError, ValueError) as err:
        exc, result = err, None
    try:
        patch = _invoke.encode_patch(call) if handler.kind != "index" else None
    except Exception as err:
        exc, patch = exc or err, None
    out = _invoke.outcome(exc, handler, handler.id)
    response["outcome"] = out
    if out["status"] == "success" and result is not None:
        response["result"] = result
    if patch:
        response["patch"] = patch
    memo = _changed_memo(call)
    if memo is not None:
        response["memo"] = memo
    if handler.kind in ("validate", "mutate"):
        response["admission"] = _verdict(out, call.warnings)
    if call.tree is not None and call.tree.outcomes:
        response["subhandlers"] = call.tree.outcomes
    return response


def _changed_memo(call):
    """The memo when the call changed it (None otherwise). Values that are
    not JSON cannot be kept between calls: they are dropped, with a line."""
    if not call.memo and call.memo_was == "{}":
        return None
    try:
        text = _structs.dumps(call.memo)
    except (TypeError, ValueError):
        kept, dropped = {}, []
        for key, value in call.memo.items():
            try:
                _structs.dumps(value)
                kept[key] = value
            except (TypeError, ValueError):
                dropped.append(key)
        _logging.logger.warning(
            "memo keys %s are not JSON and are not kept: kopf-wasm keeps the memo as JSON between calls",
            ", ".join(map(str, dropped)))
        text = _structs.dumps(kept)
    return None if text == call.memo_was else json.loads(text)


def _verdict(outcome, warnings):
    """A webhook's abi.AdmissionResponse: allowed on success, else denied
    with the AdmissionError's code or 500, as Kopf does."""
    verdict = {"allowed": outcome["status"] == "success"}
    if not verdict["allowed"]:
        verdict["code"] = outcome.get("code") or 500
        verdict["message"] = outcome.get("message", "")
    if warnings:
        verdict["warnings"] = [str(w) for w in warnings]
    return verdict
