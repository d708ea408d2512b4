"""Episodes of verifiers rollouts: an environment loaded once per process, sessions by key.

A verifiers ``State`` travels as JSON (tool servers sync it over HTTP), so a rollout's state
names its episode by a random key; the episode itself is held here, on the process's
background loop (:class:`~silo_async.integrations._held.HeldEpisode`).
"""

from __future__ import annotations

import secrets
import threading
from typing import Any

import anyio.to_thread

from ..._result import RunResult
from ..._tools import ToolResult
from .._held import HeldEpisode
from .._project import Served, load_served

__all__ = ["Session", "close", "open_session", "served", "session"]

_lock = threading.Lock()
_served: dict[tuple[str, str], Served] = {}
_sessions: dict[str, Session] = {}


def served(project: str, env: str) -> Served:
    """The environment ``env`` of ``project``, loaded once per process."""
    key = (project, env)
    with _lock:
        found = _served.get(key)
    if found is None:
        found = load_served(project, env)
        with _lock:
            found = _served.setdefault(key, found)
    return found


class Session:
    """One rollout's episode, and the answer its harness settled on."""

    def __init__(self, held: HeldEpisode) -> None:
        self.held = held
        self.answer: str | None = None

    @property
    def tools(self) -> list[Any]:
        """The episode's tools (``ToolSpec``)."""
        return list(self.held.episode.tools)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """A tool call, made on the episode's loop from a worker thread."""
        return await anyio.to_thread.run_sync(self.held.call_tool, name, arguments)

    async def record_model_step(self, **fields: Any) -> None:
        """Record a model response on the episode."""
        await anyio.to_thread.run_sync(lambda: self.held.record_model_step(**fields))


async def open_session(project: str, env: str, task_id: str, options: dict[str, Any]) -> str:
    """Open an episode of ``task_id`` and return its key."""
    environment = served(project, env).env
    runs_dir = served(project, env).runs_dir
    held = await anyio.to_thread.run_sync(
        lambda: HeldEpisode(
            environment, task_id, {**options, "runs_dir": runs_dir, "agent_name": "verifiers"}
        )
    )
    key = secrets.token_hex(16)
    with _lock:
        _sessions[key] = Session(held)
    return key


def session(key: str) -> Session:
    """The open session ``key``.

    Raises:
        KeyError: no such session in this process.
    """
    with _lock:
        return _sessions[key]


async def close(key: str, answer: str | None) -> RunResult:
    """Finish session ``key`` with ``answer`` (its harness's, when it settled on one)."""
    with _lock:
        found = _sessions.pop(key)
    final = found.answer if found.answer is not None else answer
    return await anyio.to_thread.run_sync(found.held.close, final)
