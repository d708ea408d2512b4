"""The rollout core's fast paths: only what ``benchmarks/`` shows is worth it, beside a reference.

Every ``call_tool`` is a checkpoint that also reads the clock (a call past the deadline is
refused even when the event loop was held so long that the deadline's own cancellation has not
fired yet). anyio's public :func:`anyio.lowlevel.checkpoint` and :func:`anyio.current_time`
find the running backend on every call; a rollout finds the loop's own checkpoint and clock
once instead, each by the public API of the event loop it runs on:

* on asyncio (``asyncio.get_running_loop``), ``asyncio.sleep(0)`` (what anyio's checkpoint
  awaits) and the loop's ``time()`` (what anyio's clock reads), which for the standard loop is
  ``time.monotonic()`` itself;
* on trio (``trio.lowlevel.current_trio_token`` answers), ``trio.lowlevel.checkpoint`` and
  ``trio.current_time``, the pair anyio's trio backend calls;
* on any other loop anyio may run on, the reference itself: anyio names no backend's
  functions publicly (its event-loop token is opaque), so such a loop pays for the lookup on
  every call, as the reference does.

It earns its place: ``benchmarks/bench_call_tool.py`` measures ``call_tool`` at 2.3 × a bare
checkpoint on asyncio with it and 2.85 × with the reference (the budget is 2.5 ×); on trio,
2.1 × and 2.3 ×.

:data:`REFERENCE_HOOKS` is the readable path the fast one must match: ``tests/test_fastpath.py``
runs the same calls through both and compares their results and traces.
"""

from __future__ import annotations

import asyncio
import functools
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

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

# Trio's pair, shared by its rollouts (a rollout holds no object of its own); made on the first
# rollout that runs on trio, so that importing silo_async never imports trio.
_trio_hooks: LoopHooks | None = None


def loop_hooks() -> LoopHooks:
    """The running loop's own checkpoint and clock: what the reference calls, found once."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio: trio, or another loop anyio runs on
        return _trio() or REFERENCE_HOOKS
    if type(loop).time is asyncio.BaseEventLoop.time:
        return _STANDARD_ASYNCIO
    return LoopHooks(_STANDARD_ASYNCIO.checkpoint, loop.time)  # uvloop and others


def _trio() -> LoopHooks | None:
    """Trio's checkpoint and clock when this thread runs trio, else ``None``."""
    global _trio_hooks
    trio: Any = sys.modules.get("trio")  # a trio loop has imported it; none was, none runs
    if trio is None:
        return None
    try:
        trio.lowlevel.current_trio_token()
    except RuntimeError:  # trio is imported, but this thread runs another loop
        return None
    if _trio_hooks is None:
        _trio_hooks = LoopHooks(trio.lowlevel.checkpoint, trio.current_time)
    return _trio_hooks
