"""What both transports share: signals that stop the server, the once-only end report."""

from __future__ import annotations

import signal
from collections.abc import Callable

import anyio
from anyio.abc import TaskStatus

from .._environment import Environment
from .._result import RunResult

__all__ = ["EndReport", "cancel_on_signals", "tool_names"]

#: Ctrl-C, and what a client (or a process manager) sends to stop a server.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


async def cancel_on_signals(
    scope: anyio.CancelScope, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    """Cancel ``scope`` at the first SIGINT or SIGTERM: open episodes then finish on the way out.

    Without this a signal would kill the process (SIGTERM) or raise KeyboardInterrupt out of
    the event loop (SIGINT), and no open episode would be graded or written.
    """
    try:
        with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
            task_status.started()
            async for _ in signals:
                scope.cancel()
                return
    except (NotImplementedError, ValueError):  # no signals here (Windows, a non-main thread)
        task_status.started()
        await anyio.sleep_forever()


def tool_names(env: Environment) -> list[str]:
    """The names of the tools an episode of ``env`` offers (binds them to a throwaway world)."""
    return [t.name for t in env.bind_tools(env.create_state())]


class EndReport:
    """Calls ``on_end`` with each episode's result, once per episode.

    Each episode takes its own reporter (:meth:`once`), which reports the first result it is
    given and ignores the rest: an owner may report on the way out too, whichever way the
    episode ended. Nothing is kept across episodes, so a server that ends millions stays small.
    """

    def __init__(self, on_end: Callable[[RunResult], None] | None) -> None:
        self._on_end = on_end

    def once(self) -> Callable[[RunResult | None], None]:
        """A reporter for one episode: the first result it is given (``None`` is ignored)."""
        done = False

        def report(result: RunResult | None) -> None:
            nonlocal done
            if result is None or done:
                return
            done = True
            if self._on_end is not None:
                self._on_end(result)

        return report
