"""Kopf's exceptions and errors modes, and how they become ABI outcomes."""

import enum

__all__ = [
    "ErrorsMode", "TemporaryError", "PermanentError", "AdmissionError",
    "HandlerChildrenRetry", "SandboxError",
]


class ErrorsMode(enum.Enum):
    """What an arbitrary exception of a handler means (Kopf's errors=)."""

    IGNORED = "ignored"
    TEMPORARY = "temporary"
    PERMANENT = "permanent"


class TemporaryError(Exception):
    """Retry the handler after ``delay`` seconds (Kopf's kopf.TemporaryError).

    ``delay=None`` leaves the delay to the host (the handler's backoff);
    ``delay=0`` retries at once.
    """

    def __init__(self, message="", delay=60):
        super().__init__(message)
        self.delay = delay


class PermanentError(Exception):
    """Fail the handler for this cause without retries (kopf.PermanentError)."""


class AdmissionError(PermanentError):
    """Deny an admission request with an HTTP ``code`` (500 by default)."""

    def __init__(self, message="", code=500):
        super().__init__(message)
        self.code = code


class HandlerChildrenRetry(TemporaryError):
    """The handler has unfinished sub-handlers; the host calls it again.

    Not a failure: Kopf's own HandlerChildrenRetry. kopf.execute() raises
    it while some sub-handlers are unfinished.
    """

    def __init__(self, message="unfinished sub-handlers", delay=None):
        super().__init__(message, delay=delay)


class SandboxError(RuntimeError):
    """What a wasm sandbox cannot do: threads, sockets, subprocesses, ..."""


def errors_value(mode):
    """The ABI's errors mode for Kopf's ErrorsMode (or its name), or None."""
    if mode is None:
        return None
    if isinstance(mode, ErrorsMode):
        return mode.value
    if isinstance(mode, str) and mode.lower() in ("ignored", "temporary", "permanent"):
        return mode.lower()
    raise TypeError(f"errors={mode!r}: use kopf.ErrorsMode.IGNORED, TEMPORARY or PERMANENT")
