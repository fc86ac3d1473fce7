"""Running ``async def`` handlers in a sandbox without threads or sockets.

asyncio's own loops need a self-pipe (a socket pair) that WASI lacks, so
coroutines run on SandboxLoop: asyncio's BaseEventLoop (tasks, gather,
wait_for, timeouts and asyncio.sleep behave as usual) whose "selector"
only sleeps until the next timer. In daemons and timers the sleep goes
through the host's sleep_until_stopped, and when the host says stop, the
pending ``asyncio.sleep`` calls end at once, so a loop such as
``while not stopped: await asyncio.sleep(10)`` ends promptly; a coroutine
that waits again after that is cancelled (asyncio.CancelledError at its
await), as Kopf cancels a daemon that does not exit.
"""

import asyncio
import heapq
import time
from asyncio import futures

from ._errors import SandboxError


class _Sleeper:
    """A selector with nothing to select: select(timeout) sleeps."""

    def __init__(self, loop, sleep):
        self._loop, self._sleep = loop, sleep

    def select(self, timeout):
        if timeout is None:
            raise SandboxError(
                "the handler awaits something that nothing in the sandbox can finish "
                "(no threads, sockets, subprocesses or background I/O here)")
        if timeout > 0:
            loop = self._loop
            if loop.stopped_seen:  # told to stop, and waiting again: cancel
                loop.cancel_main()
                loop.wake_sleeps()
                return []
            start = loop.time()
            if self._sleep(timeout):
                loop.stopped_seen = True
                loop.wake_sleeps()
            else:  # trust the host's clock: the time has passed
                loop.advance_to(start + timeout)
        return []

    def close(self):
        pass


class SandboxLoop(asyncio.BaseEventLoop):
    """An event loop for one handler call; see the module's doc.

    sleep(seconds) -> bool sleeps and says whether the handler is asked
    to stop (then asyncio.sleep calls end early).
    """

    def __init__(self, sleep=None):
        super().__init__()
        self._selector = _Sleeper(self, sleep or _plain_sleep)
        self._skew = 0.0
        self.stopped_seen = False
        self.main = None
        self._cancelled = False

    def cancel_main(self):
        """Cancels the handler's coroutine once (asyncio.CancelledError at
        its await), as Kopf cancels a daemon that goes on after its stop."""
        if self.main is not None and not self._cancelled:
            self._cancelled = True
            self.main.cancel()

    def time(self):
        return time.monotonic() + self._skew

    def advance_to(self, when):
        """Moves the loop's clock to when, if it is behind (a host that
        answered a sleep at once, as a test's fake host does)."""
        self._skew += max(0.0, when - self.time())

    def _process_events(self, event_list):
        pass

    def _write_to_self(self):
        pass

    def wake_sleeps(self):
        """Makes every pending asyncio.sleep due now."""
        now = self.time()
        for handle in self._scheduled:
            if handle._callback is futures._set_result_unless_cancelled:
                handle._when = now
        heapq.heapify(self._scheduled)

    def run_in_executor(self, executor, func, *args):
        """Runs func now (there are no threads) and returns its future."""
        future = self.create_future()
        try:
            future.set_result(func(*args))
        except BaseException as exc:  # delivered to whoever awaits it
            future.set_exception(exc)
        return future


def _plain_sleep(seconds):
    time.sleep(seconds)
    return False


def run(coro, sleep=None, on_leftover=None):
    """Runs coro to completion on a fresh SandboxLoop and returns its
    result. Tasks still pending when it returns are cancelled; each is
    reported through on_leftover(task) first."""
    loop = SandboxLoop(sleep)
    # A sub-handler's coroutine may start inside its parent's: the parent's
    # loop waits while the sub-handler's runs to its end (one thread only).
    outer = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    try:
        loop.main = loop.create_task(coro)
        return loop.run_until_complete(loop.main)
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            if on_leftover:
                on_leftover(task)
            task.cancel()
        if pending:
            try:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            except Exception:
                pass
        loop.close()
        asyncio.events._set_running_loop(outer)
