"""The ``stopped`` kwarg of daemons and timers, on the host's
sleep_until_stopped and is_stopped functions."""

import enum

from . import _host

__all__ = ["DaemonStopped", "DaemonStoppingReason"]

# Long enough to mean "until stopped"; the host ends the wait at its stop.
FOREVER = 365 * 24 * 3600.0


class DaemonStoppingReason(enum.Flag):
    """Why a daemon or timer is asked to stop (Kopf's reasons)."""

    NONE = 0
    DONE = enum.auto()
    FILTERS_MISMATCH = enum.auto()
    RESOURCE_DELETED = enum.auto()
    OPERATOR_PAUSING = enum.auto()
    OPERATOR_EXITING = enum.auto()
    DAEMON_SIGNALLED = enum.auto()
    DAEMON_CANCELLED = enum.auto()
    DAEMON_ABANDONED = enum.auto()


_REASONS = {
    "done": DaemonStoppingReason.DONE,
    "filters-mismatch": DaemonStoppingReason.FILTERS_MISMATCH,
    "deleted": DaemonStoppingReason.RESOURCE_DELETED,
    "pausing": DaemonStoppingReason.OPERATOR_PAUSING,
    "exiting": DaemonStoppingReason.OPERATOR_EXITING,
    "reloading": DaemonStoppingReason.OPERATOR_EXITING,
    "signalled": DaemonStoppingReason.DAEMON_SIGNALLED,
    "cancelled": DaemonStoppingReason.DAEMON_CANCELLED,
}


class DaemonStopped:
    """Kopf's ``stopped`` flag: truthy once the host asks the daemon (or
    timer) to stop. ``stopped.wait(t)`` sleeps up to t seconds through the
    host and returns early, True, when asked to stop."""

    def __init__(self):
        self._stopped = False
        self._reason = None

    def _note(self, reply):
        if reply.get("stopped"):
            self._stopped = True
            self._reason = reply.get("reason") or self._reason
        return self._stopped

    def is_set(self) -> bool:
        """Whether the daemon is asked to stop (asks the host)."""
        if not self._stopped:
            self._note(_host.call("is_stopped", {}))
        return self._stopped

    __bool__ = is_set

    def sleep(self, seconds) -> bool:
        """Sleeps up to seconds through the host; True when stopped."""
        if self._stopped:
            return True
        return self._note(_host.call("sleep_until_stopped", {"seconds": float(seconds)}))

    def wait(self, timeout=None) -> bool:
        """Sleeps until stopped or for timeout seconds; says whether stopped."""
        return self.sleep(FOREVER if timeout is None else timeout)

    @property
    def reason(self):
        """A DaemonStoppingReason, the host's reason text when it is not
        one of Kopf's, or None while not stopped."""
        if self._reason is None:
            return None
        return _REASONS.get(self._reason, self._reason)

    def __repr__(self):
        return f"<DaemonStopped: {'stopped' if self._stopped else 'running'}>"


class AsyncDaemonStopped(DaemonStopped):
    """``stopped`` of ``async def`` daemons: ``await stopped.wait(t)``."""

    async def wait(self, timeout=None) -> bool:
        return self.sleep(FOREVER if timeout is None else timeout)
