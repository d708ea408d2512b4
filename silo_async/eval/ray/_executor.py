"""``silo.RayExecutor``: an eval's rollouts on a pool of async Ray actors.

One event loop uses one core. This executor starts (or joins) Ray, creates ``workers`` async
actors (:mod:`._worker`), each running rollouts in its own loop under its own limit, and feeds
them from the eval's plan as they report results (:mod:`._dispatch`). The eval's books stay
in the caller's loop: records, progress, Ctrl-C and the files are those of the local executor,
and every rollout writes its own run directory into the eval directory, which every worker must
see (on one machine, the same disk).

Nothing here imports Ray until an eval (or :meth:`RayExecutor.start`) needs it.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import attrs

from ..._errors import SiloError
from .._executor import Books, ExecutorReport, RolloutJob
from ._dispatch import Dispatcher
from ._session import RaySession, import_ray, parse_address, require_ray, resolve_join
from ._shipping import load_problem, ship
from ._worker import RolloutWorker, WorkerConfig

__all__ = ["RayExecutor"]

#: How long the workers may take to start and load the environment and agents.
WORKERS_START_S = 180.0
#: Restarts Ray may make of one worker over an eval (each death is handled by the dispatcher).
MAX_RESTARTS = 64
#: How long the end of an eval may take to kill the workers and shut Ray down.
CLEANUP_S = 60.0


def _count(name: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SiloError(
            "executor_invalid", f"{name} must be an integer >= 1 (or None), got {value!r}."
        )
    return value


class RayExecutor:
    """Run an eval's rollouts on a pool of async Ray actors, for ``silo.evaluate(executor=...)``.

    Each worker is one Ray actor with its own event loop, running at most ``concurrency``
    rollouts at once and pulling more as it finishes them; ``evaluate``'s own ``concurrency``
    stays the limit over all workers. Results, progress, Ctrl-C and every file are those of
    the local executor. A worker that dies loses nothing: its unfinished rollouts run again
    elsewhere (``infraRetries`` in the summary).

    Ray starts when an eval needs it and stops at its end, unless :meth:`start` was called
    (then it stays until :meth:`shutdown`). A process that already called ``ray.init`` keeps
    its own Ray, as it is.

    Args:
        address: None starts a fresh local Ray on this machine's cores (never an ambient or
            stale cluster; loopback only, token auth, no dashboard); ``"HOST:PORT"`` joins that
            cluster; ``"auto"`` joins the one ``RAY_ADDRESS`` names.
        workers: actors to run (default: every CPU of the cluster, one actor per CPU).
        concurrency: rollouts at once per worker (default: the eval's concurrency shared out).

    Raises:
        SiloError: ``executor_invalid`` for an address or count that cannot work.
    """

    def __init__(
        self, address: str | None = None, workers: int | None = None, concurrency: int | None = None
    ) -> None:
        self.address = parse_address(address)
        self.workers = _count("workers", workers)
        self.concurrency = _count("concurrency", concurrency)
        self._session: RaySession | None = None

    def __repr__(self) -> str:
        return (
            f"RayExecutor(address={self.address!r}, workers={self.workers!r}, "
            f"concurrency={self.concurrency!r})"
        )

    @property
    def ray_address(self) -> str | None:
        """The GCS address of the Ray started by :meth:`start` (for ``--ray-address``)."""
        return self._session.address if self._session is not None else None

    def start(self) -> RayExecutor:
        """Start (or join) Ray now, blocking, and keep it for every eval until :meth:`shutdown`.

        Returns:
            This executor.

        Raises:
            SiloError: ``executor_unavailable`` (Ray missing, unreachable, failing to start) or
                ``executor_invalid`` (``auto`` without ``RAY_ADDRESS``).
        """
        if self._session is None:
            self._session = _acquire(self.address, self.workers)
        return self

    def shutdown(self) -> None:
        """Stop the Ray that :meth:`start` started (blocking; a no-op otherwise)."""
        session, self._session = self._session, None
        if session is not None:
            session.close()

    def __enter__(self) -> RayExecutor:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def prepare(self, job: RolloutJob) -> _RayRun:
        """Check that Ray is there and that everything can be sent to the workers.

        Raises:
            SiloError: ``executor_unavailable`` without Ray; ``executor_invalid`` naming what
                cannot be sent (see :func:`~silo_async.eval.ray._shipping.ship`).
        """
        require_ray()  # not imported yet: a local session sets Ray's environment first
        if self._session is None and RaySession.existing() is None:
            resolve_join(self.address)  # auto without RAY_ADDRESS: refused before any file
        names = {"environment": f'environment "{job.env.name}"'}
        names.update({f"agent:{label}": f'agent "{label}"' for label in job.agents})
        objects: dict[str, object] = {"environment": job.env}
        objects.update({f"agent:{label}": agent for label, agent in job.agents.items()})
        if job.options.user is not None:  # the users of conversational tasks (user=)
            names["user"] = "user factory (user=)"
            objects["user"] = job.options.user
        shipment = {key: ship(names[key], obj) for key, obj in objects.items()}
        return _RayRun(self, job, shipment, names)


def _acquire(address: str | None, workers: int | None) -> RaySession:
    return RaySession.existing() or RaySession.start(address, workers)


@attrs.define
class _Starting:
    """A session start that a cancellation may abandon (then it is closed once it exists)."""

    address: str | None
    workers: int | None
    lock: threading.Lock = attrs.Factory(threading.Lock)
    session: RaySession | None = None
    abandoned: bool = False

    def run(self) -> RaySession:
        session = _acquire(self.address, self.workers)
        with self.lock:
            self.session = session
            if self.abandoned:
                session.close()
        return session

    def abandon(self) -> None:
        with self.lock:
            self.abandoned = True
            if self.session is not None:
                threading.Thread(target=self.session.close, daemon=True).start()


@attrs.define
class _RayRun:
    executor: RayExecutor
    job: RolloutJob
    shipment: dict[str, bytes]
    names: dict[str, str]

    async def run(self, books: Books, report: ExecutorReport) -> None:
        clock0 = time.perf_counter()
        owned: RaySession | None = None
        session = self.executor._session
        if session is None:
            starting = _Starting(self.executor.address, self.executor.workers)
            try:
                session = owned = await anyio.to_thread.run_sync(
                    starting.run, abandon_on_cancel=True
                )
            except anyio.get_cancelled_exc_class():
                starting.abandon()
                raise
            except SiloError:
                _remove_if_empty(self.job)
                raise
        try:
            await self._run_on(session, books, report, clock0)
        finally:
            if owned is not None:
                with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_S):
                    await anyio.to_thread.run_sync(owned.close)

    async def _run_on(
        self, session: RaySession, books: Books, report: ExecutorReport, clock0: float
    ) -> None:
        ray = import_ray()
        try:
            workers, per_worker = self._sizes(ray)
            handles = await anyio.to_thread.run_sync(self._start_workers, ray, workers, per_worker)
        except SiloError:
            _remove_if_empty(self.job)
            raise
        report.config = {"executor": "ray", "workers": workers, "workerConcurrency": per_worker}
        report.start_ms = (time.perf_counter() - clock0) * 1000
        stop = threading.Event()
        dispatcher = Dispatcher(
            ray,
            handles,
            self.job.plan,
            concurrency=self.job.concurrency,
            per_worker=per_worker,
            books=books,
            report=report,
            stop=stop,
            names=self.names,
        )
        try:
            await _dispatch(dispatcher, stop)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_S):
                cancelled = dispatcher.left > 0
                await anyio.to_thread.run_sync(
                    _finish, ray, handles, dispatcher, self.job, cancelled
                )

    def _sizes(self, ray: Any) -> tuple[int, int]:
        """Workers (checked against the cluster's CPUs) and each one's concurrency."""
        cpus = int(ray.cluster_resources().get("CPU", 0))
        workers = self.executor.workers or max(1, cpus)
        if workers > cpus:
            raise SiloError(
                "executor_invalid",
                f"{workers} Ray workers need {workers} CPUs (one each), but the Ray cluster has "
                f"{cpus}; use --workers {max(1, cpus)} or fewer, or add nodes to the cluster.",
            )
        per_worker = self.executor.concurrency or math.ceil(self.job.concurrency / workers)
        return workers, per_worker

    def _start_workers(self, ray: Any, workers: int, per_worker: int) -> list[Any]:
        """Create the actors and wait until each has loaded everything (or refuse the eval)."""
        job = self.job
        config = WorkerConfig(
            concurrency=per_worker,
            # By value; the user factory is shipped with the environment and agents instead.
            options=attrs.evolve(job.options, user=None),
            runs_dir=job.runs_dir.absolute() if job.runs_dir is not None else None,
            base=job.base.absolute() if job.base is not None else None,
            details=job.details,
            replays=dict(job.replays),
        )
        actor = ray.remote(RolloutWorker).options(
            num_cpus=1, max_restarts=MAX_RESTARTS, max_task_retries=0
        )
        # By value, not ray.put: Ray keeps an actor's own arguments for its restarts.
        handles = [actor.remote(self.shipment, config) for _ in range(workers)]
        try:
            infos = ray.get([h.ping.remote() for h in handles], timeout=WORKERS_START_S)
        except Exception as exc:
            _kill(ray, handles)
            raise SiloError(
                "executor_unavailable",
                f"The Ray workers did not start ({type(exc).__name__}: {exc}); check `ray status` "
                "and that silo_async is installed on every node.",
            ) from None
        for info in infos:
            problems: dict[str, str] = info["problems"]
            if problems:
                _kill(ray, handles)
                key, problem = next(iter(problems.items()))
                raise load_problem(self.names.get(key, key), problem, str(info["host"]))
        return handles


async def _dispatch(dispatcher: Dispatcher, stop: threading.Event) -> None:
    """Run the dispatcher in a thread; a cancellation of the caller becomes ``stop``."""

    async def watch() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            stop.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch)
        # Not abandoned on cancel: the thread stops the workers and delivers the last results,
        # then returns, and only then does the cancellation go on (from the checkpoint).
        await anyio.to_thread.run_sync(dispatcher.run)
        await anyio.lowlevel.checkpoint()
        tg.cancel_scope.cancel()


def _finish(
    ray: Any, handles: list[Any], dispatcher: Dispatcher, job: RolloutJob, cancelled: bool
) -> None:
    _kill(ray, handles)
    dispatcher.remove_dead_attempts(job.runs_dir, cancelled, job.keep)


def _kill(ray: Any, handles: list[Any]) -> None:
    for handle in handles:
        try:
            ray.kill(handle, no_restart=True)
        except Exception:  # already gone: nothing to stop
            continue


def _remove_if_empty(job: RolloutJob) -> None:
    """Undo the eval directory evaluate() made, when the eval was refused before any rollout."""
    for directory in (job.runs_dir, job.base):
        if directory is not None:
            try:
                directory.rmdir()
            except OSError:  # not empty, or not there: leave it
                return
