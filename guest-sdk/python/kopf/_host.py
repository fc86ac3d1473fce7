"""Calls to the host's functions (abi/hostcalls.go) through ``_kopf_host``.

In wasm, ``_kopf_host`` is the runtime's builtin module; natively,
kopf.testing installs a fake one into sys.modules.
"""

import json
import sys

from . import _structs

__all__ = ["call", "HostError"]


class HostError(Exception):
    """A host function's failure (abi.HostError): an HTTP ``code``, a
    ``reason``, and who refused (``origin``: "host" or "cluster")."""

    def __init__(self, message, code=0, reason="", origin="", call=""):
        super().__init__(message)
        self.message, self.code, self.reason, self.origin, self.call = message, code, reason, origin, call

    def __str__(self):
        status = f"{self.code} {self.reason}".strip()
        if self.origin:
            status += f" from the {self.origin}"
        where = f"{self.call}: " if self.call else ""
        return f"{where}{self.message} ({status})"


def _module():
    host = sys.modules.get("_kopf_host")
    if host is None:
        try:
            import _kopf_host as host  # the wasm runtime's builtin module
        except ImportError:
            raise RuntimeError(
                "kopf: no host to call: run the handlers through kopf.testing "
                "(natively) or as a kopf-wasm module") from None
    return host


def call(name: str, request) -> dict:
    """Calls host function ``name`` with a JSON request; returns the reply
    decoded ({} when the function has no reply)."""
    reply = _module().call(name, _structs.dumps(request).encode())
    if not reply:
        return {}
    return json.loads(reply)


def raise_for(reply: dict, what: str):
    """Raises HostError when a host reply carries an error."""
    error = reply.get("error")
    if error:
        raise HostError(error.get("message", ""), error.get("code", 0),
                        error.get("reason", ""), error.get("origin", ""), what)
