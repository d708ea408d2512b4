"""``silo-async serve --protocol openenv``: episodes over OpenEnv's environment-server protocol.

OpenEnv (``openenv`` on PyPI; its ``openenv.core.env_server``) keeps one environment per
WebSocket session at ``/ws``. Frames in: ``{"type": "reset", "data": {...}}``,
``{"type": "step", "data": <action>}``, ``{"type": "state"}``, ``{"type": "close"}``. Frames out:
``{"type": "observation", "data": {"observation", "reward", "done"}}``,
``{"type": "state", "data": {...}}`` and ``{"type": "error", "data": {"message", "code"}}``.
Here each session plays episodes of a silo world:

* ``reset`` ``{"task": ID}`` opens an episode on a fresh world (the one still open in the
  session is finished first); without a task, the server's ``--task``.
* ``step`` takes OpenEnv's MCP actions: ``{"type": "list_tools"}`` answers OpenEnv's
  ``Tool{name, description, input_schema}`` list with ``submit`` last;
  ``{"type": "call_tool", "tool_name", "arguments"}`` calls a tool through the episode and
  answers ``{"tool_name", "result", "error"}`` — ``result`` shaped as an MCP
  ``CallToolResult`` (``content``, ``structured_content``, ``meta``, ``data``, ``is_error``), a
  rejected call an ``is_error`` result. ``submit`` (``{"answer": str}``) finishes the episode:
  its observation has ``done: true`` and the world's ``reward``; so has every observation once
  a limit ended the episode.
* Leaving (``close``, or the socket going away) finishes the open episode with the output so
  far. ``GET /health``, ``/metadata`` and ``/schema`` answer as OpenEnv's servers do.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from .._environment import Environment
from .._episode import Episode
from .._errors import SiloError
from .._faults import Faults, resolve_faults
from .._limits import Limits, resolve_limits
from .._result import RunResult
from .._tools import ToolResult, ToolSpec
from ._asgi import json_bytes, json_text, send_json
from ._harness_common import (
    SUBMIT,
    HeldEpisodes,
    output_text,
    serve_app,
    submit,
    tool_specs,
)
from ._host import CapacityReachedError

__all__ = ["OpenEnvApp", "serve_openenv"]

#: OpenEnv's error codes (``WSErrorCode``).
INVALID_JSON = "INVALID_JSON"
UNKNOWN_TYPE = "UNKNOWN_TYPE"
VALIDATION_ERROR = "VALIDATION_ERROR"
EXECUTION_ERROR = "EXECUTION_ERROR"
CAPACITY_REACHED = "CAPACITY_REACHED"

#: silo's refusal codes, as OpenEnv's ``ToolErrorType``.
_ERROR_TYPES = {"tool_not_found": "tool_not_found", "invalid_input": "invalid_args"}

_ACTION_SCHEMA: dict[str, Any] = {
    "title": "SiloAction",
    "oneOf": [
        {
            "type": "object",
            "properties": {"type": {"const": "list_tools"}},
            "required": ["type"],
        },
        {
            "type": "object",
            "properties": {
                "type": {"const": "call_tool"},
                "tool_name": {"type": "string"},
                "arguments": {"type": "object"},
            },
            "required": ["type", "tool_name"],
        },
    ],
}
_OBSERVATION_SCHEMA: dict[str, Any] = {
    "title": "SiloObservation",
    "type": "object",
    "properties": {
        "done": {"type": "boolean"},
        "reward": {"type": ["number", "null"]},
        "metadata": {"type": "object"},
        "tools": {"type": "array"},
        "tool_name": {"type": "string"},
        "result": {},
        "error": {"type": ["object", "null"]},
    },
}
_STATE_SCHEMA: dict[str, Any] = {
    "title": "SiloState",
    "type": "object",
    "properties": {
        "episode_id": {"type": ["string", "null"]},
        "step_count": {"type": "integer"},
        "task_id": {"type": ["string", "null"]},
        "done": {"type": "boolean"},
    },
}


class _ProtocolError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _tool_entry(spec: ToolSpec) -> dict[str, Any]:
    # OpenEnv's Tool model forbids extra keys: exactly these three.
    return {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}


def _call_result(result: ToolResult) -> dict[str, Any]:
    output = result.output
    return {
        "content": [{"type": "text", "text": output_text(output)}],
        "structured_content": output if isinstance(output, dict) else None,
        "meta": None,
        "data": output,
        "is_error": result.is_error,
    }


def _call_error(result: ToolResult) -> dict[str, str] | None:
    output = result.output if isinstance(result.output, dict) else {}
    kind = _ERROR_TYPES.get(str(output.get("code")))
    if not result.is_error or kind is None:
        return None
    return {"error_type": kind, "message": str(output.get("message", ""))}


class _Session:
    """One WebSocket session: the episode it plays now, and its step count."""

    def __init__(self, app: OpenEnvApp) -> None:
        self._app = app
        self.episode: Episode | None = None
        self.steps = 0

    async def handle(self, frame: Any) -> dict[str, Any] | None:
        """The answer to one frame (``None`` for ``close``)."""
        kind = frame.get("type")
        if kind == "reset":
            return await self._reset(frame.get("data") or {})
        if kind == "step":
            return await self._step(frame.get("data"))
        if kind == "state":
            return {"type": "state", "data": self.state()}
        if kind == "close":
            return None
        raise _ProtocolError(UNKNOWN_TYPE, f"Unknown message type: {kind!r}.")

    async def _reset(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise _ProtocolError(VALIDATION_ERROR, 'reset takes {"task": "TASK-ID"}.')
        task = data.get("task", self._app.default_task)
        if not isinstance(task, str):
            raise _ProtocolError(
                VALIDATION_ERROR,
                'reset needs the task to play: {"type": "reset", "data": {"task": "TASK-ID"}}.',
            )
        await self.close()
        try:
            self.episode = await self._app.episodes.open(task)
        except SiloError as exc:
            raise _ProtocolError(VALIDATION_ERROR, f"{exc.code}: {exc.message}") from None
        except CapacityReachedError as exc:
            raise _ProtocolError(CAPACITY_REACHED, str(exc)) from None
        self.steps = 0
        observation = {"task_id": task, "instruction": self.episode.task, "metadata": {}}
        return _observation(observation, None)

    async def _step(self, action: Any) -> dict[str, Any]:
        if not isinstance(action, dict):
            raise _ProtocolError(VALIDATION_ERROR, "step takes an action object.")
        kind = action.get("type")
        if kind == "list_tools":
            # The open episode's own tools when there is one (a task may change them), else
            # the environment's: discovery needs no reset in OpenEnv.
            specs = self._app.specs if self.episode is None else self._episode_specs()
            tools = [_tool_entry(s) for s in specs]
            return _observation({"tools": tools, "metadata": {}}, self._ended())
        if kind != "call_tool":
            raise _ProtocolError(
                VALIDATION_ERROR,
                f"Unknown action type {kind!r}: this server takes list_tools and call_tool.",
            )
        name, arguments = action.get("tool_name"), action.get("arguments", {})
        if not isinstance(name, str):
            raise _ProtocolError(VALIDATION_ERROR, "call_tool needs a tool_name string.")
        ep = self.episode
        if ep is None:
            raise _ProtocolError(
                EXECUTION_ERROR, 'No episode is open: send {"type": "reset", "data": {"task"}}.'
            )
        self.steps += 1
        if name == SUBMIT:
            result, _ = await submit(ep, arguments)
        else:
            result = await ep.call_tool(name, arguments if isinstance(arguments, dict) else {})
        observation = {
            "tool_name": name,
            "result": _call_result(result),
            "error": _call_error(result),
            "metadata": {},
        }
        return _observation(observation, self._ended())

    def _episode_specs(self) -> list[ToolSpec]:
        assert self.episode is not None
        return [*self.episode.tools, self._app.specs[-1]]  # submit stays last

    def _ended(self) -> RunResult | None:
        ep = self.episode
        return ep.result if ep is not None and ep.finished else None

    def state(self) -> dict[str, Any]:
        """OpenEnv's ``State``: the episode's run id, steps taken, task, whether it ended."""
        ep = self.episode
        return {
            "episode_id": None if ep is None else ep.run_id,
            "step_count": self.steps,
            "task_id": None if ep is None else ep.task_id,
            "done": ep is not None and ep.finished,
        }

    async def close(self) -> None:
        """Finish the open episode, if any, with the output so far."""
        ep, self.episode = self.episode, None
        if ep is not None:
            await ep.finish()


def _observation(fields: dict[str, Any], ended: RunResult | None) -> dict[str, Any]:
    """An observation frame: ``reward`` and ``done`` once the episode has ended."""
    data: dict[str, Any] = {"observation": fields, "reward": None, "done": False}
    if ended is not None:
        data.update(reward=ended.reward, done=True)
        fields["metadata"] = {
            "runId": ended.run_id,
            "passed": ended.passed,
            "terminationReason": ended.termination_reason,
        }
        data["metadata"] = fields["metadata"]
    return {"type": "observation", "data": data}


def _error(code: str, message: str) -> dict[str, Any]:
    return {"type": "error", "data": {"message": message, "code": code}}


class OpenEnvApp:
    """The ASGI app of ``serve --protocol openenv`` (a class instance: ASGI servers call it).

    Args:
        episodes: where episodes are opened and held.
        specs: the tools every episode offers, ``submit`` last.
        default_task: the task a ``reset`` without one plays (``None``: reset must name one).
    """

    def __init__(
        self, episodes: HeldEpisodes, specs: list[ToolSpec], default_task: str | None
    ) -> None:
        self.episodes = episodes
        self.specs = specs
        self.default_task = default_task

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            if scope["path"] == "/ws":
                await self._session(WebSocket(scope, receive, send))
            else:
                await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            return
        answer = self._get(scope["path"]) if scope["method"] in ("GET", "HEAD") else None
        if answer is None:
            body = {"error": {"code": "not_found", "message": f"No route {scope['path']}."}}
            await send_json(send, json_bytes(body), 404)
            return
        await send_json(send, json_bytes(answer))

    def _get(self, path: str) -> dict[str, Any] | None:
        env: Environment = self.episodes.env
        if path == "/health":
            return {"status": "healthy"}
        if path == "/metadata":
            return {
                "name": env.name,
                "description": f'The silo world "{env.name}": {len(env.tasks)} tasks, graded '
                "by its verifiers. reset with {task}, then list_tools / call_tool; submit ends.",
                "readme_content": None,
                "version": None,
                "author": None,
                "documentation_url": None,
            }
        if path == "/schema":
            return {
                "action": _ACTION_SCHEMA,
                "observation": _OBSERVATION_SCHEMA,
                "state": _STATE_SCHEMA,
            }
        return None

    async def _session(self, ws: WebSocket) -> None:
        await ws.accept()
        session = _Session(self)
        try:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                raw = message.get("text")
                if raw is None:
                    raw = (message.get("bytes") or b"").decode("utf-8", "replace")
                reply, stop = await self._answer(session, raw)
                if reply is not None:
                    await ws.send_text(json_text(reply))
                if stop:
                    break
        except WebSocketDisconnect:
            pass
        finally:
            await session.close()
            with contextlib.suppress(Exception):
                await ws.close()

    async def _answer(self, session: _Session, raw: str) -> tuple[dict[str, Any] | None, bool]:
        try:
            frame = json.loads(raw)
        except RecursionError:
            return _error(INVALID_JSON, "Invalid JSON: the message nests too deeply."), False
        except ValueError as exc:
            return _error(INVALID_JSON, f"Invalid JSON: {exc}"), False
        if not isinstance(frame, dict):
            return _error(VALIDATION_ERROR, "A message is a JSON object with a type."), False
        try:
            reply = await session.handle(frame)
        except _ProtocolError as exc:
            return _error(exc.code, exc.message), False
        return reply, reply is None


async def serve_openenv(
    env: Environment,
    task_id: str | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    allow_hosts: Iterable[str] = (),
    allow_origins: Iterable[str] = (),
    limits: Limits | None = None,
    max_tool_calls: int = 100,
    timeout: float | None = 120.0,
    token_limit: int | None = None,
    runs_dir: Path | None = None,
    max_episodes: int = 1000,
    on_end: Callable[[RunResult], None] | None = None,
    on_ready: Callable[[dict[str, Any]], None] | None = None,
    faults: Faults | str | None = None,
) -> None:
    """Serve episodes of ``env`` over OpenEnv's protocol until SIGINT/SIGTERM (asyncio only).

    Args:
        env: the environment.
        task_id: the task a ``reset`` without one plays (``None``: every reset names one).
        host: address to bind (loopback by default).
        port: port to bind (0: any free port).
        token: bearer token every request must carry (required off loopback).
        allow_hosts: further ``Host`` values to accept (``--allow-host``).
        allow_origins: further ``Origin`` values to accept (``--allow-origin``).
        limits: the limits of each episode (or the keyword form below, as for ``run``).
        max_tool_calls: per episode, as for ``run``.
        timeout: seconds per episode from its reset (``None``: no limit).
        token_limit: recorded tokens that end an episode (``None``: no limit).
        runs_dir: where run directories go (``None``: nothing written).
        max_episodes: episodes open at once; a reset beyond it is ``CAPACITY_REACHED``.
        on_end: called with each episode's result when it ends.
        on_ready: called once listening, with ``{"url", "protocol", "ws", "episodes": []}``.
        faults: the faults every episode's tool calls meet (DESIGN §14; None: none).

    Raises:
        SiloError: ``serve_unprotected``, ``address_unavailable``, ``task_not_found`` or
            ``tool_name_reserved``, before serving.
        ValueError: an ``allow_hosts`` / ``allow_origins`` entry is no host or origin.
        TypeError: ``limits`` beside a keyword of the keyword form.
    """
    if task_id is not None:
        env.verifier_for(env.task(task_id))
    specs = tool_specs(env)
    resolved = resolve_limits(limits, max_tool_calls, timeout, token_limit)
    episodes = HeldEpisodes(
        env, resolved, runs_dir, "openenv", on_end, max_episodes, resolve_faults(faults)
    )

    def announce(url: str) -> dict[str, Any]:
        ws = "ws" + url.removeprefix("http") + "/ws"
        return {"url": url, "protocol": "openenv", "ws": ws, "episodes": []}

    await serve_app(
        OpenEnvApp(episodes, specs, task_id),
        episodes,
        host=host,
        port=port,
        token=token,
        allow_hosts=allow_hosts,
        allow_origins=allow_origins,
        announce=announce,
        on_ready=on_ready,
    )
