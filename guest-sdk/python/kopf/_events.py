"""Kubernetes Events about objects: kopf.event, info, warn, exception."""

import sys

from . import _hierarchies, _host, _logging

__all__ = ["event", "info", "warn", "exception"]


def event(objs, *, type, reason, message=""):
    """Posts an Event of type ("Normal", "Warning", "Error") about each of
    objs (a body or bodies) through the host. A failed post is logged as a
    warning and ignored, as in Kopf."""
    for obj in [objs] if hasattr(objs, "get") else objs:
        request = {"type": type, "reason": reason, "message": str(message)}
        about = _hierarchies.build_object_reference(obj)
        if about.get("name") and about.get("kind"):
            request["about"] = about
        try:
            _host.raise_for(_host.call("post_event", request), "post_event")
        except Exception as exc:
            _logging.logger.warning("Failed to post an event (%s: %s): %s", reason, message, exc)


def info(objs, *, reason, message=""):
    """A Normal Event."""
    event(objs, type="Normal", reason=reason, message=message)


def warn(objs, *, reason, message=""):
    """A Warning Event."""
    event(objs, type="Warning", reason=reason, message=message)


def exception(objs, *, reason="", message="", exc=None):
    """An Error Event about an exception (the one being handled by default)."""
    if exc is None:
        exc = sys.exc_info()[1]
    reason = reason or (type(exc).__name__ if exc is not None else "Exception")
    text = f"{message} {exc}".strip() if exc is not None else str(message)
    event(objs, type="Error", reason=reason, message=text)
