"""One episode over stdio: the process is the episode.

The episode ends at ``submit``, at a limit, or when the client goes away (stdin closes: graded
with the answer ``""`` at once, because MCP clients kill a server about two seconds after
closing its stdin). After the end the server keeps answering (every call ``invalid_state``)
until stdin closes, then returns.

SIGINT or SIGTERM ends the episode ``cancelled`` (graded and written), lets the call in flight
be answered, and returns, even while the client keeps stdin open. The episode's block runs in a
task of its own for that: cancelling it ends the episode while the server goes on answering.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
from anyio.abc import TaskStatus

from .._environment import Environment
from .._episode import Episode, open_episode
from .._faults import Faults
from .._limits import DEFAULT_LIMITS, Limits
from .._options import RunOptions, resolve_options
from .._result import RunResult
from ._lifecycle import STOP_SIGNALS, EndReport, tool_names
from ._server import EpisodeServer, check_reserved
from ._wire import StdioWire

__all__ = ["serve_stdio"]

#: Seconds a stopping server waits for the answers to calls in flight.
SETTLE_S = 5.0


async def serve_stdio(
    env: Environment,
    task_id: str,
    *,
    limits: Limits | None = None,
    max_tool_calls: int = DEFAULT_LIMITS.max_tool_calls,
    timeout: float | None = DEFAULT_LIMITS.timeout,
    token_limit: int | None = DEFAULT_LIMITS.token_limit,
    runs_dir: Path | None = None,
    reveal: Callable[[RunResult], str] | None = None,
    on_end: Callable[[RunResult], None] | None = None,
    faults: Faults | str | None = None,
    options: RunOptions | None = None,
) -> RunResult:
    """Serve one episode of ``task_id`` on this process's stdin/stdout until the client leaves.

    SIGINT or SIGTERM stops the server; the episode is then finished (``cancelled``) and
    written, and the call in flight answered, before this returns.

    Args:
        env: the environment.
        task_id: the task the episode plays.
        limits: the episode's limits, as one value (or the three keywords below).
        max_tool_calls: as for ``run``.
        timeout: seconds from the start of the episode (``None``: no limit).
        token_limit: recorded tokens that end the episode (``None``: no limit).
        runs_dir: where the run directory goes (``None``: nothing written).
        reveal: when given, ``submit`` answers ``reveal(result)`` instead of ``Submitted.``.
        on_end: called with the result as soon as the episode ends (the CLI prints the report).
        faults: faults the episode's tool calls meet (a ``silo.Faults`` or a SPEC).
        options: how the episode runs as one :class:`~silo_async.RunOptions` (instead of the
            limit keywords and ``faults``).

    Returns:
        The episode's result.

    Raises:
        SiloError: ``task_not_found``, ``task_invalid``, ``tool_name_reserved`` or
            ``faults_invalid``, before the episode starts.
        TypeError: ``limits`` beside a keyword that differs from its default (or ``options``
            beside any of the keywords it replaces).
    """
    how = resolve_options(
        options,
        limits=limits,
        max_tool_calls=max_tool_calls,
        timeout=timeout,
        token_limit=token_limit,
        faults=faults,
    )
    env.verifier_for(env.task(task_id))
    check_reserved(tool_names(env), env.name)
    report = EndReport(on_end).once()
    opened = open_episode(env, task_id, how, runs_dir=runs_dir)
    served = EpisodeServer(opened, name=env.name, reveal=reveal)
    async with StdioWire() as wire, anyio.create_task_group() as group:
        block: anyio.CancelScope = await group.start(_hold, opened, report)
        group.start_soon(_stop_on_signals, block, wire)
        server = served.server
        await server.run(wire.read, wire.write, server.create_initialization_options())
        # stdin closed (or a signal stopped the reading): graded with the answer so far.
        await opened.finish()
        group.cancel_scope.cancel()
    assert opened.result is not None
    return opened.result


async def _hold(
    opened: Episode,
    report: Callable[[RunResult | None], None],
    *,
    task_status: TaskStatus[anyio.CancelScope],
) -> None:
    """Enter the episode's block and stay in it until the episode ends (or is cancelled)."""
    with anyio.CancelScope() as scope:
        try:
            async with opened as ep:
                ep.set_output("")  # a client that leaves without an answer gave ""
                task_status.started(scope)
                report(await ep.wait_finished())
                await anyio.sleep_forever()  # leaving the block is the server's to decide
        finally:
            report(opened.result)  # also when a signal cancelled the episode


async def _stop_on_signals(block: anyio.CancelScope, wire: StdioWire) -> None:
    """At SIGINT/SIGTERM: end the episode, let the calls in flight be answered, stop reading."""
    try:
        with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
            async for _ in signals:
                break
    except (NotImplementedError, ValueError):  # no signals here (a non-main thread)
        await anyio.sleep_forever()
    block.cancel()
    await wire.settle(SETTLE_S)
    wire.stop_reading()
