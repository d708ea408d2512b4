"""The Ray worker: an async actor running rollouts in its own event loop, under its own limit.

Ray builds one per worker process and, when that process dies, builds it again by re-running
``__init__`` with the same arguments, so all setup (loading the environment and agents it was
sent) happens there. The driver talks to it with four calls:

* ``ping()``: ready? (and what could not be loaded, so the driver can refuse the eval up front);
* ``serve()``: runs for the whole eval — ``concurrency`` tasks taking plan entries from the
  worker's queue, each a :func:`~silo_async.eval._executor.run_plan_entry`;
* ``pull(work)``: queue more entries, then return the rollouts finished since the last pull —
  as soon as one is there, gathering a few more for a moment so that fast rollouts come back in
  batches (one round trip per batch, not per rollout);
* ``stop()``: cancel what is running (each rollout still writes its own run directory) and
  return the last finished ones.

The module imports no Ray: the driver wraps the class with ``ray.remote`` when it needs it.
"""

from __future__ import annotations

import os
import socket
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import attrs

from ..._options import RunOptions
from .._executor import Details, PlanEntry, RolloutJob, run_plan_entry
from .._report._records import RolloutRecord
from ._shipping import unship

__all__ = ["Finished", "RolloutWorker", "WorkerConfig"]

#: One finished rollout as it travels back: ``(slot, record, details)``.
Finished = tuple[int, RolloutRecord, Details]

#: How long a pull gathers more results once it has one.
GATHER_S = 0.02
#: The longest a pull waits with nothing finished (the driver may have new work by then).
MAX_WAIT_S = 1.0
#: How long stop() lets cancelled rollouts write their files.
STOP_GRACE_S = 30.0


@attrs.frozen
class WorkerConfig:
    """What every worker is told besides the shipped objects.

    Attributes:
        concurrency: rollouts at once on this worker.
        options: how every rollout runs, but its user factory (shipped with the environment).
        runs_dir: the eval's ``runs/`` (an absolute path every worker sees), or None.
        base: the eval directory (records name run directories relative to it), or None.
        details: keep compact details for the report.
        replays: recordings that reruns of a resumed eval continue, by plan entry.
    """

    concurrency: int
    options: RunOptions
    runs_dir: Path | None
    base: Path | None
    details: bool
    replays: Mapping[PlanEntry, str] = attrs.field(factory=dict)


class RolloutWorker:
    """One Ray worker (see the module docstring). Not thread-safe: Ray runs it on one loop."""

    def __init__(self, shipment: Mapping[str, bytes], config: WorkerConfig) -> None:
        loaded, self.problems = unship(shipment)
        self.job: RolloutJob | None = None
        if not self.problems:
            self.job = RolloutJob(
                env=loaded["environment"],
                agents={k[len("agent:") :]: v for k, v in loaded.items() if k.startswith("agent:")},
                plan=[],
                concurrency=config.concurrency,
                options=attrs.evolve(config.options, user=loaded.get("user")),
                runs_dir=config.runs_dir,
                base=config.base,
                details=config.details,
                replays=config.replays,
            )
        self.concurrency = config.concurrency
        self.queue: deque[tuple[int, PlanEntry]] = deque()
        self.outbox: list[Finished] = []
        self.unfinished = 0  # queued or running
        self.serving = False
        self.scope: anyio.CancelScope | None = None
        self._work: anyio.Event | None = None
        self._result: anyio.Event | None = None
        self._ended: anyio.Event | None = None

    async def ping(self) -> dict[str, Any]:
        """``{"pid", "host", "problems"}``: this worker is up (problems: what failed to load)."""
        return {"pid": os.getpid(), "host": socket.gethostname(), "problems": self.problems}

    async def serve(self) -> None:
        """Run queued entries, ``concurrency`` at once, until stopped."""
        if self.job is None or self.serving:
            return
        self.serving = True
        self._ended = anyio.Event()
        try:
            with anyio.CancelScope() as self.scope:
                async with anyio.create_task_group() as tg:
                    for _ in range(self.concurrency):
                        tg.start_soon(self._run_queue, self.job)
        finally:
            self._ended.set()
            self._notify_result()

    async def _run_queue(self, job: RolloutJob) -> None:
        while True:
            while not self.queue:
                self._work = self._work or anyio.Event()
                await self._work.wait()
            slot, entry = self.queue.popleft()
            record, details = await run_plan_entry(job, entry)
            self.outbox.append((slot, record, details))
            self.unfinished -= 1
            self._notify_result()

    async def pull(self, work: list[tuple[int, PlanEntry]]) -> list[Finished]:
        """Queue ``work``; return what finished since the last pull (see the module docstring)."""
        if work:
            self.queue.extend(work)
            self.unfinished += len(work)
            if self._work is not None:
                self._work.set()
                self._work = None
        with anyio.move_on_after(MAX_WAIT_S):
            while not self.outbox and self._live():
                await self._wait_result()
        if self.outbox and self.unfinished and self._live():
            # Let a few more finish before answering: one round trip per batch. A sleep, not a
            # wake-up per result: the rollouts run on meanwhile and pay nothing for it.
            await anyio.sleep(GATHER_S)
        finished, self.outbox = self.outbox, []
        return finished

    async def stop(self) -> list[Finished]:
        """Cancel the rollouts in flight, let them write their files, return the last results."""
        self.queue.clear()
        if self.scope is not None:
            self.scope.cancel()
        if self._ended is not None:
            with anyio.move_on_after(STOP_GRACE_S):
                await self._ended.wait()
        finished, self.outbox = self.outbox, []
        return finished

    def _live(self) -> bool:
        return self._ended is None or not self._ended.is_set()

    async def _wait_result(self) -> None:
        self._result = self._result or anyio.Event()
        await self._result.wait()

    def _notify_result(self) -> None:
        if self._result is not None:
            self._result.set()
            self._result = None
