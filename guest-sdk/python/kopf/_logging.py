"""The ``logger`` kwarg: records go to the host's log function."""

import contextvars
import logging
import traceback

from . import _host

LEVELS = ((logging.ERROR, "error"), (logging.WARNING, "warning"), (logging.INFO, "info"))
HOST_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
               "error": logging.ERROR}

#: The sub-handler that is running, named in its records' fields.
subhandler_id = contextvars.ContextVar("kopf_subhandler", default=None)


def level_name(levelno: int) -> str:
    """The ABI's level of a logging level (critical is error)."""
    for threshold, name in LEVELS:
        if levelno >= threshold:
            return name
    return "debug"


class HostHandler(logging.Handler):
    """Sends each record to the host's log function, with its traceback."""

    def emit(self, record):
        try:
            message = record.getMessage()
            if record.exc_info and record.exc_info[0] is not None:
                message += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
            fields = {}
            sub = subhandler_id.get()
            if sub:
                fields["subhandler"] = sub
            extra = getattr(record, "kopf_fields", None)
            if extra:
                fields.update(extra)
            request = {"level": level_name(record.levelno), "message": message}
            if fields:
                request["fields"] = fields
            _host.call("log", request)
        except Exception:  # a log record must never fail the handler
            pass


_handler = HostHandler()
logger = logging.getLogger("kopf.objects")
logger.addHandler(_handler)
logger.propagate = False
logger.setLevel(logging.DEBUG)


def set_min_level(name):
    """Drops records below the host's level (Request.logLevel)."""
    logger.setLevel(HOST_LEVELS.get(name or "", logging.DEBUG))


def install_root(level=logging.INFO):
    """Sends the root logger's records (logging.info(...)) to the host too."""
    root = logging.getLogger()
    if _handler not in root.handlers:
        root.addHandler(_handler)
        root.setLevel(level)
