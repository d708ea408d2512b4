"""The solver's rollout, recorded: its calls in order, which changed the world, and that world.

The audit plays the solver and its mutants on the environment as it is, but with every tool
watched: while one of them plays (a context variable holds its :class:`Sink`), each call
notes the world it ran on and, for the solver, whether it changed it (the world compared
before and after), so a call that changed the world is known by what it did, not guessed
from its name. The watch wraps the rollout's own tools, so the agent meets the same world,
validation, limits, users and grading as anywhere, and its ``result.json`` is the one it
would write without the audit. The watch ends with the agent: the verifier's own work (a
family's gold replay) is not watched.

The recording is the solver's *steps*: its world-tool calls and its ``message_user`` turns, in
order. A turn changed the world when the user's own tool calls during it did.
"""

from __future__ import annotations

import contextvars
import copy
import marshal
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from .._environment import Environment
from .._jsonutil import json_equal
from .._result import RunResult
from .._runner import Agent
from .._taskuser import MESSAGE_USER
from .._tools import BoundTool, ToolOutcome

__all__ = ["Sink", "Step", "Worlds", "steps_of", "watched"]


@attrs.define
class Sink:
    """What the watched tools note while one agent plays.

    Attributes:
        log: ``(tool, changed the world)`` per executed call, in order (``None``: not kept).
        world: the world the calls ran on (``None`` until a call ran).
    """

    log: list[tuple[str, bool]] | None = None
    world: Any = None


_SINK: contextvars.ContextVar[Sink | None] = contextvars.ContextVar("silo_audit", default=None)


@attrs.frozen
class Step:
    """One call of the solver: a world-tool call or a ``message_user`` turn.

    Attributes:
        index: 0-based among the solver's calls (turns included).
        tool: the tool name (``message_user`` for a turn).
        input: the arguments as sent.
        changed: the world changed (for a turn: the user's own calls during it changed it).
        position: where the call is in the trace (its ``tool_call`` or ``user_turn`` event).
    """

    index: int
    tool: str
    input: Any
    changed: bool
    position: int

    @property
    def turn(self) -> bool:
        """A ``message_user`` turn."""
        return self.tool == MESSAGE_USER


#: The marshal format that notes no shared objects (see :class:`Worlds`).
_FORMAT = 2


class _Frozen:
    """A deep copy of a world that marshal cannot hold."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Worlds:
    """Compares worlds (through the environment's snapshot, when it has one).

    ``marshal`` bytes that are equal prove two worlds equal at C speed. Format 2, because
    later formats note which objects are shared, so the same world read at two moments (a
    read-only call in between) gives other bytes; bytes that differ all the same (a string
    interned meanwhile) send the worlds to a comparison value by value.
    """

    def __init__(self, env: Environment) -> None:
        snapshot = getattr(env, "snapshot", None)
        self._view: Callable[[Any], Any] = snapshot if callable(snapshot) else (lambda s: s)

    def freeze(self, state: Any) -> object:
        """The world as it is now (a copy that later calls do not change)."""
        value = self._view(state)
        try:
            return marshal.dumps(value, _FORMAT)
        except ValueError:  # not plain data
            return _Frozen(copy.deepcopy(value))

    def changed(self, frozen: object, state: Any) -> bool:
        """Whether the world differs from what :meth:`freeze` kept."""
        value = self._view(state)
        if isinstance(frozen, _Frozen):
            return bool(frozen.value != value)
        assert isinstance(frozen, bytes)
        try:
            if marshal.dumps(value, _FORMAT) == frozen:
                return False
        except ValueError:
            return True
        return not json_equal(marshal.loads(frozen), value)

    def same(self, a: Any, b: Any) -> bool:
        """Whether two live worlds are equal."""
        return not self.changed(self.freeze(a), b)


class _Watched(BoundTool):
    """A runtime tool that notes, while a watched agent plays, what each call did."""

    __slots__ = ("_inner", "_worlds")

    def __init__(self, inner: BoundTool, worlds: Worlds) -> None:
        super().__init__(inner.tool, inner.world)
        self._inner = inner
        self._worlds = worlds

    async def invoke(self, input: Any) -> ToolOutcome:
        """The inner tool's call, noted while a watched agent plays."""
        sink = _SINK.get()
        if sink is None:
            return await self._inner.invoke(input)
        sink.world = self.world
        if sink.log is None:
            return await self._inner.invoke(input)
        before = self._worlds.freeze(self.world)
        try:
            return await self._inner.invoke(input)
        finally:
            sink.log.append((self.name, self._worlds.changed(before, self.world)))

    def invoke_sync(self, input: Any) -> ToolOutcome:
        """:meth:`invoke` for a ``def`` body."""
        sink = _SINK.get()
        if sink is None:
            return self._inner.invoke_sync(input)
        sink.world = self.world
        if sink.log is None:
            return self._inner.invoke_sync(input)
        before = self._worlds.freeze(self.world)
        try:
            return self._inner.invoke_sync(input)
        finally:
            sink.log.append((self.name, self._worlds.changed(before, self.world)))


def watched(env: Environment, worlds: Worlds) -> Environment:
    """``env`` with every runtime tool watched (everything else, families included, kept)."""

    def bind(state: Any) -> list[BoundTool]:
        return [_Watched(t, worlds) for t in env.runtime_tools(state).values()]

    return attrs.evolve(env, tools=(), bind=bind)


def watching(agent: Agent, sink: Sink) -> Agent:
    """``agent``, its calls noted in ``sink`` while it plays (on a :func:`watched` world)."""

    async def watched_agent(ctx: Any) -> Any:
        token = _SINK.set(sink)
        try:
            return await agent(ctx)
        finally:
            _SINK.reset(token)

    return watched_agent


def _not_run(event: dict[str, Any]) -> bool:
    """A call no tool ran: an unknown tool's name."""
    output = event.get("output")
    return bool(
        event.get("isError") and isinstance(output, dict) and output.get("code") == "tool_not_found"
    )


def steps_of(result: RunResult, log: Sequence[tuple[str, bool]]) -> list[Step]:
    """The solver's steps, from its trace and the watch's log of what changed the world."""
    steps: list[Step] = []
    calls: dict[Any, tuple[int, dict[str, Any]]] = {}
    pending = iter(log)
    upcoming = next(pending, None)
    user_changed = False
    for position, event in enumerate(result.trace):
        kind = event.get("type")
        if kind == "tool_call":
            calls[(event.get("actor"), event.get("callId"))] = (position, event)
        elif kind == "tool_result":
            at, call = calls.pop((event.get("actor"), event.get("callId")), (position, event))
            changed = False
            if upcoming is not None and upcoming[0] == call.get("tool") and not _not_run(event):
                changed = upcoming[1]
                upcoming = next(pending, None)
            if event.get("actor", "agent") == "user":
                user_changed = user_changed or changed
            else:
                steps.append(Step(len(steps), str(call["tool"]), call.get("input"), changed, at))
        elif kind == "user_turn":
            text = {"text": event.get("agentText", "")}
            steps.append(Step(len(steps), MESSAGE_USER, text, user_changed, position))
            user_changed = False
    return steps
