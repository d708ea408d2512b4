"""One OpenEnv session of ``serve --protocol openenv``: the episode it plays, the frames it answers.

A session is played over a WebSocket (``/ws``), over HTTP MCP (``POST /mcp`` with its
``session_id``), or both at once: OpenEnv's ``MCPToolClient`` creates a session over ``/mcp``,
attaches its WebSocket to it (``/ws?session_id=...``) to ``reset``, and calls tools over
``/mcp``. Either way the same :class:`Session` answers:

* ``reset`` ``{"task": ID}`` opens an episode on a fresh world (the one still open in the
  session is finished first); without a task, the server's ``--task``.
* ``list_tools`` answers OpenEnv's ``Tool{name, description, input_schema}`` list with
  ``submit`` last; ``call_tool`` calls a tool through the episode and answers ``{"tool_name",
  "result", "error"}`` — ``result`` shaped as an MCP ``CallToolResult`` (``content``,
  ``structured_content``, ``meta``, ``data``, ``is_error``), a rejected call an ``is_error``
  result. ``submit`` (``{"answer": str}``) finishes the episode: its observation has ``done:
  true`` and the world's ``reward``; so has every observation once a limit ended the episode.
"""

from __future__ import annotations

from typing import Any

from .._episode import Episode
from .._errors import SiloError
from .._result import RunResult
from .._tools import ToolResult, ToolSpec
from ._harness_common import SUBMIT, HeldEpisodes, output_text, submit
from ._host import CapacityReachedError

__all__ = [
    "CAPACITY_REACHED",
    "EXECUTION_ERROR",
    "INVALID_JSON",
    "SESSION_ERROR",
    "UNKNOWN_TYPE",
    "VALIDATION_ERROR",
    "ProtocolError",
    "Session",
    "error_frame",
]

#: OpenEnv's error codes (``WSErrorCode``).
INVALID_JSON = "INVALID_JSON"
UNKNOWN_TYPE = "UNKNOWN_TYPE"
VALIDATION_ERROR = "VALIDATION_ERROR"
EXECUTION_ERROR = "EXECUTION_ERROR"
CAPACITY_REACHED = "CAPACITY_REACHED"
SESSION_ERROR = "SESSION_ERROR"

#: silo's refusal codes, as OpenEnv's ``ToolErrorType``.
_ERROR_TYPES = {"tool_not_found": "tool_not_found", "invalid_input": "invalid_args"}


class ProtocolError(ValueError):
    """A frame or request the session refuses, with OpenEnv's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def error_frame(code: str, message: str) -> dict[str, Any]:
    """OpenEnv's error frame."""
    return {"type": "error", "data": {"message": message, "code": code}}


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


class Session:
    """One session: the episode it plays now, its step count, and who holds it.

    Args:
        episodes: where episodes are opened and held.
        specs: the environment's tools, ``submit`` last (what discovery lists before a reset).
        default_task: the task a ``reset`` without one plays (``None``: reset must name one).

    Attributes:
        attached: a WebSocket plays this session now (one at a time).
        closing: asked to close over ``/mcp`` while a WebSocket held it: it closes when the
            WebSocket leaves.
    """

    def __init__(
        self, episodes: HeldEpisodes, specs: list[ToolSpec], default_task: str | None
    ) -> None:
        self._episodes = episodes
        self._specs = specs
        self._default_task = default_task
        self.episode: Episode | None = None
        self.steps = 0
        self.attached = False
        self.closing = False

    async def handle(self, frame: Any) -> dict[str, Any] | None:
        """The answer to one WebSocket frame (``None`` for ``close``).

        Raises:
            ProtocolError: a frame the session refuses.
        """
        kind = frame.get("type")
        if kind == "reset":
            return await self.reset(frame.get("data") or {})
        if kind == "step":
            return await self.step(frame.get("data"))
        if kind == "state":
            return {"type": "state", "data": self.state()}
        if kind == "close":
            return None
        raise ProtocolError(UNKNOWN_TYPE, f"Unknown message type: {kind!r}.")

    async def reset(self, data: Any) -> dict[str, Any]:
        """Open an episode of ``data["task"]`` (the open one finished first); its observation."""
        if not isinstance(data, dict):
            raise ProtocolError(VALIDATION_ERROR, 'reset takes {"task": "TASK-ID"}.')
        task = data.get("task", self._default_task)
        if not isinstance(task, str):
            raise ProtocolError(
                VALIDATION_ERROR,
                'reset needs the task to play: {"type": "reset", "data": {"task": "TASK-ID"}}.',
            )
        await self.close()
        try:
            self.episode = await self._episodes.open(task)
        except SiloError as exc:
            raise ProtocolError(VALIDATION_ERROR, f"{exc.code}: {exc.message}") from None
        except CapacityReachedError as exc:
            raise ProtocolError(CAPACITY_REACHED, str(exc)) from None
        self.steps = 0
        observation = {"task_id": task, "instruction": self.episode.task, "metadata": {}}
        return _observation(observation, None)

    async def step(self, action: Any) -> dict[str, Any]:
        """The observation frame answering one action (``list_tools`` or ``call_tool``)."""
        if not isinstance(action, dict):
            raise ProtocolError(VALIDATION_ERROR, "step takes an action object.")
        kind = action.get("type")
        if kind == "list_tools":
            return _observation({"tools": self.tools(), "metadata": {}}, self._ended())
        if kind != "call_tool":
            raise ProtocolError(
                VALIDATION_ERROR,
                f"Unknown action type {kind!r}: this server takes list_tools and call_tool.",
            )
        name, arguments = action.get("tool_name"), action.get("arguments", {})
        if not isinstance(name, str):
            raise ProtocolError(VALIDATION_ERROR, "call_tool needs a tool_name string.")
        return await self._call(name, arguments)

    def tools(self) -> list[dict[str, Any]]:
        """OpenEnv's ``Tool`` entries: the open episode's own, else the environment's.

        An episode's own when there is one (a task may change them); discovery needs no reset.
        """
        specs = self._specs
        if self.episode is not None:
            specs = [*self.episode.tools, self._specs[-1]]  # submit stays last
        return [_tool_entry(s) for s in specs]

    async def _call(self, name: str, arguments: Any) -> dict[str, Any]:
        ep = self.episode
        if ep is None:
            raise ProtocolError(
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

    def _ended(self) -> RunResult | None:
        ep = self.episode
        return ep.result if ep is not None and ep.finished else None

    @property
    def played_out(self) -> bool:
        """True once the session's episode has ended: nothing is left to play in it."""
        return self.episode is not None and self.episode.ended

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
