"""Continuing a model agent's interrupted rollout: its recorded responses replayed, then live.

An eval that resumes reruns the rollouts a kill interrupted. A model agent's
responses are already in the interrupted attempt's trace (one ``model_step`` per response,
recorded as it arrived, with the assistant turn in ``message``), so asking the model again
would pay for them twice, and might not even give the same answers. Instead:

1. :func:`read_recording` reads the interrupted attempt's trace (a line cut short by the kill
   is left out) into its model steps, each with the results of the tool calls it asked for.
2. :func:`check_recording` plays those tool calls, in order, into a fresh world of the
   environment (a world is a pure function of its data) and compares every result with the
   recorded one. A difference means the recording cannot be continued (the environment
   changed, or is not deterministic): the rollout runs from scratch, and its trace says why.
3. :func:`resuming` wraps the agent: the shared model loop (:func:`~._loop.converse`) takes the
   recorded responses instead of asking the model, records each again as a ``model_step``
   marked ``"replayed": true`` (``run.json`` counts them in ``resumedModelSteps``), runs its
   tool calls into the rollout's own world and feeds the results to the provider adapter,
   whose conversation is thereby rebuilt exactly; then it asks the model, live.

So at most the one request in flight when the kill landed is asked again. An agent whose loop
is not :func:`~._loop.converse` (a plain Python agent) is run again from the start: its state
cannot be rebuilt, and rerunning it costs nothing real (the world is simulated).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import attrs

from .._jsonutil import json_equal
from .._runner import run
from ..runs import RunDir

if TYPE_CHECKING:
    from .._context import AgentContext
    from .._environment import Environment
    from .._tools import ToolResult

__all__ = [
    "PROVIDER_MESSAGE",
    "RESUME_EVENT",
    "RecordedStep",
    "Recording",
    "Replay",
    "can_replay",
    "check_recording",
    "continuing",
    "current_replay",
    "parse_recording",
    "read_recording",
    "replays",
    "resuming",
]

#: A ``model_step`` field holding the assistant turn exactly as the provider's API takes it
#: back, recorded only when ``message`` alone cannot rebuild it (see the adapters).
PROVIDER_MESSAGE = "providerMessage"

#: The attribute marking an agent whose loop can continue a recording.
_REPLAYS = "__silo_replays__"

#: The trace event a resumed rollout starts with (what it replays, or why it cannot).
RESUME_EVENT = "resume"


def replays(agent: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``agent`` as one whose model loop continues a recording (returns it)."""
    setattr(agent, _REPLAYS, True)
    return agent


def can_replay(agent: object) -> bool:
    """True for an agent marked with :func:`replays` (the shipped model agents)."""
    return getattr(agent, _REPLAYS, False) is True


@attrs.frozen
class RecordedStep:
    """One recorded model response and what its tool calls returned.

    Attributes:
        event: the ``model_step`` event as recorded.
        results: ``(output, is_error)`` of its tool calls that finished, in order (fewer than
            its calls when the kill landed in the middle of them).
    """

    event: dict[str, Any]
    results: tuple[tuple[Any, bool], ...] = ()

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The tool calls the response asked for (``{"id", "name", "input"}``)."""
        calls: list[dict[str, Any]] = self.event["message"]["toolCalls"]
        return calls


@attrs.frozen
class Recording:
    """What an interrupted attempt recorded of its model agent.

    Attributes:
        run_id: the interrupted attempt.
        steps: its model responses, in order, each with its tool results.
    """

    run_id: str
    steps: tuple[RecordedStep, ...] = ()

    def calls(self) -> list[tuple[str, Any, Any, bool]]:
        """Every recorded tool call that finished: ``(tool, input, output, is_error)``."""
        return [
            (str(call["name"]), call.get("input"), output, is_error)
            for step in self.steps
            for call, (output, is_error) in zip(step.calls, step.results, strict=False)
        ]


def _count(value: Any) -> bool:
    return value is None or (type(value) is int and value >= 0)


def _usable_step(event: dict[str, Any]) -> bool:
    """A ``model_step`` whose fields rebuild the response (what the adapters recorded)."""
    message, usage = event.get("message"), event.get("usage") or {}
    if not isinstance(message, dict) or not isinstance(usage, dict):
        return False
    calls, content = message.get("toolCalls"), message.get("content")
    return (
        isinstance(calls, list)
        and all(
            isinstance(c, dict) and isinstance(c.get("id"), str) and isinstance(c.get("name"), str)
            for c in calls
        )
        and (content is None or isinstance(content, str))
        and _count(usage.get("inputTokens"))
        and _count(usage.get("outputTokens"))
        and _count(event.get("attempts"))
    )


def parse_recording(run_id: str, events: Sequence[dict[str, Any]]) -> Recording:
    """The model steps of a trace's events, up to the first one that cannot be continued.

    A step's tool results are the ``tool_result`` events between it and the next step; a
    result that does not belong to its step (more results than calls, another tool's name)
    ends the recording there, as does a tool call made before any step.
    """
    steps: list[RecordedStep] = []
    current: dict[str, Any] | None = None
    results: list[tuple[Any, bool]] = []

    def close() -> None:
        if current is not None:
            steps.append(RecordedStep(current, tuple(results)))

    for event in events:
        kind = event.get("type")
        if kind == "model_step":
            if not _usable_step(event):
                break
            close()
            current, results = event, []
        elif kind == "tool_result":
            calls = current["message"]["toolCalls"] if current is not None else []
            if len(results) >= len(calls) or calls[len(results)]["name"] != event.get("tool"):
                break
            results.append((event.get("output"), bool(event.get("isError", False))))
        elif kind == "tool_call" and current is None:
            break
    close()
    return Recording(run_id, tuple(steps))


def read_recording(run_dir: str) -> Recording:
    """The model steps recorded in ``run_dir``'s trace (blocking: call it off the loop).

    Lenient: a line cut short by a kill is skipped, and what follows a damaged step is not
    used. A directory without a trace has no steps.
    """
    files = RunDir(run_dir)
    try:
        events = files.events(strict=False).events
    except (OSError, ValueError):
        return Recording(files.name)
    return parse_recording(files.name, events)


async def check_recording(recording: Recording, env: Environment, task_id: str) -> str | None:
    """Play the recorded tool calls into a fresh world; None when every result is as recorded.

    Returns:
        The first difference, in words (which call, what was recorded, what came back).
    """
    calls = recording.calls()
    if not calls:
        return None
    found: list[str] = []

    def compare(index: int, _call: object, got: ToolResult) -> None:
        tool, _, output, is_error = calls[index]
        if found or (got.is_error == is_error and json_equal(got.output, output)):
            return
        found.append(
            f"call {index + 1} ({tool}) returned a different result in a fresh world than in "
            f"run {recording.run_id}"
        )

    from ..testing._scripted import ScriptedAgent  # only when an eval resumes

    agent = ScriptedAgent([(tool, args) for tool, args, _, _ in calls], on_result=compare)
    await run(env, task_id, agent, max_tool_calls=len(calls), timeout=None)
    return found[0] if found else None


class Replay:
    """The recorded steps a resumed rollout feeds its model loop, taken in order."""

    __slots__ = ("_next", "_steps", "diverged", "run_id")

    def __init__(self, recording: Recording) -> None:
        self.run_id = recording.run_id
        self._steps = recording.steps
        self._next = 0
        self.diverged: str | None = None

    def next_step(self) -> RecordedStep | None:
        """The next recorded response, or None once every one was replayed (then: live)."""
        if self.diverged is not None or self._next >= len(self._steps):
            return None
        step = self._steps[self._next]
        self._next += 1
        return step

    def agrees(self, step: RecordedStep, results: Sequence[ToolResult]) -> bool:
        """The replayed calls returned what was recorded; if not, stop replaying (go live)."""
        for index, ((output, is_error), got) in enumerate(zip(step.results, results, strict=False)):
            if got.is_error != is_error or not json_equal(got.output, output):
                self.diverged = (
                    f"call {index + 1} of replayed response {self._next} returned a different "
                    f"result than in run {self.run_id}; the model is asked from here on"
                )
                return False
        return True


_current: contextvars.ContextVar[Replay | None] = contextvars.ContextVar(
    "silo_async_replay", default=None
)


def current_replay() -> Replay | None:
    """The replay of the rollout this agent runs in, if it resumes a recording."""
    return _current.get()


def resuming(
    agent: Callable[[AgentContext], Any], recording: Recording, mismatch: str | None
) -> Callable[[AgentContext], Any]:
    """``agent``, run as the continuation of ``recording`` (or from scratch after ``mismatch``).

    The rollout's trace starts with a ``resume`` event: the interrupted attempt's run id and
    the responses it replays, or (``mismatch``) why it runs from scratch instead.
    """

    async def resumed(ctx: AgentContext) -> Any:
        note: dict[str, Any] = {"fromRunId": recording.run_id}
        if mismatch is not None:
            note.update(modelSteps=0, mismatch=f"{mismatch}: the rollout runs from scratch.")
            ctx._note(RESUME_EVENT, note)
            return await agent(ctx)
        ctx._note(RESUME_EVENT, {**note, "modelSteps": len(recording.steps)})
        token = _current.set(Replay(recording))
        try:
            return await agent(ctx)
        finally:
            _current.reset(token)

    return resumed


async def continuing(
    agent: Callable[[AgentContext], Any], recording_dir: str, env: Environment, task_id: str
) -> Callable[[AgentContext], Any]:
    """``agent`` continuing the recording in ``recording_dir`` (checked first in a fresh world).

    What an eval's executor runs for a model agent's rollout that a kill interrupted: see the
    module docstring.
    """
    recording = await anyio.to_thread.run_sync(read_recording, recording_dir)
    mismatch = await check_recording(recording, env, task_id)
    return resuming(agent, recording, mismatch)
