"""Kopf's API for handlers that run as a kopf-wasm module.

Write the handlers as for Kopf (decorators, kwargs, exceptions, helpers);
kopf-wasm's host watches, persists, retries and calls them in a sandbox.
See guest-sdk/python/README.md for what differs, and kopf.testing for
tests without a cluster.
"""

import logging

from . import kube, on
from ._daemons import DaemonStopped, DaemonStoppingReason
from ._errors import (AdmissionError, ErrorsMode, HandlerChildrenRetry, PermanentError,
                      SandboxError, TemporaryError)
from ._events import event, exception, info, warn
from ._filters import ABSENT, PRESENT, MetaFilterToken, all_, any_, none_, not_
from ._hierarchies import (adjust_namespace, adopt, append_owner_reference, build_object_reference,
                           build_owner_reference, harmonize_naming, label, remove_owner_reference)
from ._host import HostError
from ._registry import (OperatorRegistry, allow_hosts, get_default_registry, module, permit,
                        set_default_registry)
from ._structs import (EVERYTHING, Body, Diff, DiffItem, DiffOperation, Index, Memo, Meta, Patch,
                       Reason, Resource, Spec, Status, Store)
from ._invoke import Settings as OperatorSettings
from ._subhandlers import execute
from . import _runtime, _sandbox

__version__ = "1.44.6+wasm"

# Kopf re-exports these decorators at the top level.
daemon = on.daemon
timer = on.timer
index = on.index
subhandler = on.subhandler
register = on.register

Logger = logging.Logger


def run(*args, **kwargs):
    """Kopf's kopf.run(): not here, the host runs the module."""
    raise RuntimeError("kopf.run() is not offered in a kopf-wasm module: "
                       "build it with kopf-wasm build and run it with kopf-wasm run")


_sandbox.install()

__all__ = [
    "on", "kube", "daemon", "timer", "index", "subhandler", "register", "execute",
    "TemporaryError", "PermanentError", "AdmissionError", "HandlerChildrenRetry", "ErrorsMode",
    "SandboxError", "HostError", "PRESENT", "ABSENT", "MetaFilterToken", "all_", "any_", "none_",
    "not_", "adopt", "label", "harmonize_naming", "adjust_namespace", "append_owner_reference",
    "remove_owner_reference", "build_owner_reference", "build_object_reference", "event", "info",
    "warn", "exception", "Body", "Spec", "Meta", "Status", "Memo", "Patch", "Diff", "DiffItem",
    "DiffOperation", "Reason", "Resource", "Index", "Store", "EVERYTHING", "DaemonStopped",
    "DaemonStoppingReason", "OperatorRegistry", "get_default_registry", "set_default_registry",
    "module", "permit", "allow_hosts", "OperatorSettings", "Logger", "run",
]
