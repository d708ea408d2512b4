"""Ctrl-C for the long commands (``run``, ``eval``): the first stops cleanly, the second at once.

* The first Ctrl-C cancels the work: rollouts in flight are graded and written, what finished is
  summarised, and the command exits 130.
* A second Ctrl-C stops faster: the command waits at most :data:`STOP_WAIT_S` more for that
  summary, then exits 130 at once, saying what is on disk (or plainly that the summary could
  not be written). A third does not wait at all.
* No Ctrl-C ever raises ``KeyboardInterrupt`` inside the event loop (where it would print a
  traceback or leave the loop half shut down, waiting forever on a worker thread): the signal
  handler only writes a byte to a socket that a task of the loop watches. Before the loop
  starts, Ctrl-C interrupts as usual (``error: cancelled``); once the loop is gone, it exits.

Every file on disk is written whole (temporary file + rename) or appended line by line, so
stopping the process at any point leaves no half-written artifact.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Awaitable, Callable
from types import FrameType, TracebackType
from typing import TypeVar

import anyio
import anyio.abc
import click

from ._errors import EXIT_INTERRUPTED

__all__ = ["EXIT_INTERRUPTED", "STOP_WAIT_S", "Interrupts"]

T = TypeVar("T")

#: After the second Ctrl-C: how long the summary of what finished may still take.
STOP_WAIT_S = 2.0


class Interrupts:
    """SIGINT handling for one command, installed for the whole command (not only the loop).

    Args:
        stopping: the line printed on stderr at the first Ctrl-C.
        last_words: called at a hard stop; returns the line to print (what is on disk) before
            the process exits with :data:`EXIT_INTERRUPTED`.
    """

    def __init__(self, stopping: str, last_words: Callable[[], str]) -> None:
        self.count = 0
        self._stopping = stopping
        self._last_words = last_words
        self._phase = "before"  # "before" the loop watches, "watching", "after"
        self._wake: socket.socket | None = None
        self._watch: socket.socket | None = None
        self._previous: object = None

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            self._watch, self._wake = socket.socketpair()
            self._watch.setblocking(False)
            self._wake.setblocking(False)
            self._previous = signal.signal(signal.SIGINT, self._on_signal)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._wake is None or self._watch is None:
            return
        self._wake.close()
        self._watch.close()
        if not self.interrupted:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]
            return
        # Interrupted, the command now only reports and exits 130: a Ctrl-C from here on
        # exits at once (also while the interpreter joins threads), saying what is on disk —
        # it may come before the command's own report — and one arriving in the last moments
        # of shutdown, when Python resets handlers, is ignored rather than killing the process
        # with a status other than 130.
        signal.signal(signal.SIGINT, self._stop_now_on_signal)
        atexit.register(signal.signal, signal.SIGINT, signal.SIG_IGN)

    @property
    def interrupted(self) -> bool:
        """True once Ctrl-C was pressed."""
        return self.count > 0

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        # Runs on the main thread between two bytecodes, possibly inside the event loop's own
        # code: it only counts and wakes the watcher, which acts from a task of the loop.
        self.count += 1
        if self._phase == "watching" and self._wake is not None:
            with contextlib.suppress(OSError):  # the socket buffer is full: already woken
                self._wake.send(b"\0")
        elif self._phase == "before":
            raise KeyboardInterrupt
        else:
            self.stop_now()

    async def run(self, work: Callable[[], Awaitable[T]]) -> T | None:
        """``await work()``, cancelled by the first Ctrl-C; None when it was cancelled."""
        result: T | None = None
        if self._watch is not None:
            # Watching from now on, not from when the watcher first runs: the work may well
            # run first (trio orders a batch of new tasks at random) and a Ctrl-C in between
            # must not raise KeyboardInterrupt in the loop. The watcher reads ``count`` first.
            self._phase = "watching"
        async with anyio.create_task_group() as tg:
            scope = anyio.CancelScope()
            tg.start_soon(self.watch, scope)  # outside ``scope``: it outlives the first Ctrl-C
            with scope:
                result = await work()
            tg.cancel_scope.cancel()
        return result

    async def watch(self, scope: anyio.CancelScope) -> None:
        """Act on Ctrl-C while the work runs in ``scope`` (start this in the work's task group).

        Cancel the group when the work is done: leaving this task ends the watching, and a
        Ctrl-C after that stops the process at once.
        """
        watched = self._watch
        if watched is None:  # not the main thread: no signals to watch
            await anyio.sleep_forever()
            return
        self._phase = "watching"
        handled = 0
        try:
            async with anyio.create_task_group() as tg:
                while True:
                    while handled < self.count:
                        handled += 1
                        self._act(handled, scope, tg)
                    await anyio.wait_readable(watched)
                    with contextlib.suppress(BlockingIOError):
                        watched.recv(64)
        finally:
            self._phase = "after"

    def _act(self, nth: int, scope: anyio.CancelScope, tg: anyio.abc.TaskGroup) -> None:
        if nth == 1:
            scope.cancel()
            click.echo(f"{self._stopping} Press Ctrl-C again to stop at once.", err=True)
        elif nth == 2:
            click.echo(f"Stopping: waiting at most {STOP_WAIT_S:g} s more.", err=True)
            tg.start_soon(self._stop_after, STOP_WAIT_S)
        else:
            self.stop_now()

    async def _stop_after(self, seconds: float) -> None:
        await anyio.sleep(seconds)
        self.stop_now()

    def _stop_now_on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.stop_now()

    def stop_now(self) -> None:
        """Print what is on disk and exit the process with status 130, now."""
        try:
            line = self._last_words()
        except Exception as exc:  # never let a report of the stop keep the process alive
            line = f"error: cancelled: stopped at once ({type(exc).__name__}: {exc})."
        _say(line)
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os._exit(EXIT_INTERRUPTED)


def _say(line: str) -> None:
    """One line on stderr, straight to the descriptor.

    Safe in a signal handler, where the interrupted code may be half-way through a write to
    ``sys.stderr`` itself.
    """
    data = (line + "\n").encode("utf-8", "backslashreplace")
    with contextlib.suppress(OSError):
        os.write(sys.stderr.fileno(), data)
