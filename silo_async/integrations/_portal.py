"""A sync facade over the async core: one event loop on a background thread, per process.

Synchronous callers (a trainer's rollout loop, its worker threads) reach episodes through an
anyio blocking portal: ``portal().call(coro_fn, ...)`` runs on the loop and blocks the calling
thread until it returns, and is safe from any number of threads at once. The loop starts on
first use and stops at interpreter exit.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal

__all__ = ["portal"]

_lock = threading.Lock()
_running: tuple[contextlib.AbstractContextManager[BlockingPortal], BlockingPortal] | None = None


def portal() -> BlockingPortal:
    """The process's background event loop (started on first call)."""
    global _running
    with _lock:
        if _running is None:
            manager = start_blocking_portal()
            _running = (manager, manager.__enter__())
            atexit.register(_stop)
        return _running[1]


def _stop() -> None:
    """Stop the loop: episodes still open end ``cancelled`` (and are written) first."""
    global _running
    with _lock:
        running, _running = _running, None
    if running is None:
        return
    manager, loop = running
    with contextlib.suppress(Exception):
        # Cancel the episodes' owner tasks (each writes its artifacts under a bounded shield);
        # the portal would otherwise wait for episodes nobody will finish.
        loop.call(loop.stop, True)
    with contextlib.suppress(Exception):
        manager.__exit__(None, None, None)


def call(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` (a coroutine function) on the background loop; blocks until it returns."""
    return portal().call(fn, *args)
