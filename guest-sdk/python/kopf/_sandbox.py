"""One clear line for what a wasm sandbox cannot do.

In wasm (sys.platform "wasi") starting a thread, opening a socket or
running a subprocess fails deep inside the standard library with an
obscure error; these guards fail at once with SandboxError saying why.
"""

import sys

from ._errors import SandboxError


def _refuse(what, instead):
    def refuse(*args, **kwargs):
        raise SandboxError(f"kopf-wasm: {what} are not available in the sandbox; {instead}")
    return refuse


def install(force=False):
    """Installs the guards (in wasm, or anywhere with force=True); returns a
    function that removes them."""
    if sys.platform != "wasi" and not force:
        return lambda: None
    undo = []

    def guard(owner, attr, refusal):
        undo.append((owner, attr, owner.__dict__[attr]))
        setattr(owner, attr, refusal)

    try:
        import threading
        guard(threading.Thread, "start", _refuse(
            "threads", "run the work in the handler itself (a daemon for long-running work)"))
    except ImportError:
        pass
    try:
        import socket
        guard(socket.socket, "__init__", _refuse(
            "sockets", "reach the cluster through kopf.kube or the kubernetes client"))
    except ImportError:
        pass
    try:
        import subprocess
        guard(subprocess.Popen, "__init__", _refuse(
            "subprocesses", "do the work in Python, or through the Kubernetes API"))
    except ImportError:
        pass

    def remove():
        for owner, attr, original in reversed(undo):
            setattr(owner, attr, original)
    return remove
