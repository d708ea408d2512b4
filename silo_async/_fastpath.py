"""The rollout core's fast paths: only what ``benchmarks/`` shows is worth it, beside a reference.

Every ``call_tool`` is a checkpoint that also reads the clock (a call past the deadline is
refused even when the event loop was held so long that the deadline's own cancellation has not
fired yet). anyio's public :func:`anyio.lowlevel.checkpoint` and :func:`anyio.current_time`
find the running backend on every call; a rollout finds the loop's own checkpoint and clock
once instead (asyncio's running loop, else anyio's public :func:`anyio.lowlevel.current_token`):

* on asyncio, ``asyncio.sleep(0)`` (what anyio's checkpoint awaits) and the loop's ``time()``
  (what anyio's clock reads), which for the standard loop is ``time.monotonic()`` itself;
* on any other backend, the backend's own pair.

It earns its place: ``benchmarks/bench_call_tool.py`` measures ``call_tool`` at 2.3 × a bare
checkpoint on asyncio with it and 2.85 × with the reference (the budget is 2.5 ×); on trio,
2.1 × and 2.3 ×.

:data:`REFERENCE_HOOKS` is the readable path the fast one must match: ``tests/test_fastpath.py``
runs the same calls through both and compares their results and traces.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel
import attrs

__all__ = ["REFERENCE_HOOKS", "LoopHooks", "loop_hooks"]


@attrs.frozen
class LoopHooks:
    """The event loop's checkpoint and clock, as a rollout calls them.

    Attributes:
        checkpoint: ``await checkpoint()`` checks for cancellation and lets other tasks run.
        time: the loop's clock, in seconds (the clock its deadlines are set on).
    """

    checkpoint: Callable[[], Awaitable[None]]
    time: Callable[[], float]


#: The reference path: anyio's public functions, which find the backend on every call.
REFERENCE_HOOKS = LoopHooks(anyio.lowlevel.checkpoint, anyio.current_time)

#: The standard asyncio loop: its ``time()`` is ``time.monotonic()``, called directly here.
_STANDARD_ASYNCIO = LoopHooks(functools.partial(asyncio.sleep, 0), time.monotonic)

# One LoopHooks per backend, shared by its rollouts: a rollout holds no object of its own.
_by_backend: dict[type, LoopHooks] = {}


def loop_hooks() -> LoopHooks:
    """The running loop's own checkpoint and clock: what the reference calls, found once."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio: trio, or another backend anyio runs on
        backend = anyio.lowlevel.current_token().backend_class
        hooks = _by_backend.get(backend)
        if hooks is None:
            hooks = _by_backend[backend] = LoopHooks(backend.checkpoint, backend.current_time)
        return hooks
    if type(loop).time is asyncio.BaseEventLoop.time:
        return _STANDARD_ASYNCIO
    return LoopHooks(_STANDARD_ASYNCIO.checkpoint, loop.time)  # uvloop and others
