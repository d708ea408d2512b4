"""One episode over stdio: the process is the episode.

The episode ends at ``submit``, at a limit, or when the client goes away (stdin closes): it is
graded and written at once, because MCP clients kill a server about two seconds after closing
its stdin. After the end the server keeps answering (every call ``invalid_state``) until stdin
closes, then returns.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
from mcp.server.stdio import stdio_server

from .. import Episode, episode
from .._environment import Environment
from .._result import RunResult
from ._lifecycle import EndReport, cancel_on_signals, tool_names
from ._server import EpisodeServer, check_reserved

__all__ = ["serve_stdio"]


async def serve_stdio(
    env: Environment,
    task_id: str,
    *,
    max_tool_calls: int = 100,
    timeout: float | None = 120.0,
    runs_dir: Path | None = None,
    reveal: Callable[[RunResult], str] | None = None,
    on_end: Callable[[RunResult], None] | None = None,
) -> RunResult:
    """Serve one episode of ``task_id`` on this process's stdin/stdout until the client leaves.

    SIGINT or SIGTERM stops the server; the episode is then finished (``cancelled``) and
    written before this returns.

    Args:
        env: the environment.
        task_id: the task the episode plays.
        max_tool_calls: as for ``run``.
        timeout: seconds from the start of the episode (``None``: no limit).
        runs_dir: where the run directory goes (``None``: nothing written).
        reveal: when given, ``submit`` answers ``reveal(result)`` instead of ``Submitted.``.
        on_end: called with the result as soon as the episode ends (the CLI prints the report).

    Returns:
        The episode's result.

    Raises:
        SiloError: ``task_not_found``, ``task_invalid`` or ``tool_name_reserved``, before the
            episode starts.
    """
    env.verifier_for(env.task(task_id))
    check_reserved(tool_names(env), env.name)
    report = EndReport(on_end)
    opened = episode(
        env, task_id, max_tool_calls=max_tool_calls, timeout=timeout, runs_dir=runs_dir
    )
    async with anyio.create_task_group() as outer:
        await outer.start(cancel_on_signals, outer.cancel_scope)
        try:
            async with opened as ep, anyio.create_task_group() as tg:
                tg.start_soon(_report_at_end, ep, report)
                await _serve(EpisodeServer(ep, name=env.name, reveal=reveal))
                # stdin closed: the client went away. Graded with the output so far.
                await ep.finish()
        finally:
            report(opened.result)  # also when a signal cancelled the episode
        outer.cancel_scope.cancel()
    assert opened.result is not None
    return opened.result


async def _serve(served: EpisodeServer) -> None:
    async with stdio_server() as (read, write):
        await served.server.run(read, write, served.server.create_initialization_options())


async def _report_at_end(ep: Episode, report: EndReport) -> None:
    report(await ep.wait_finished())
