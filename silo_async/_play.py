"""Replaying tool calls on a world: how a gold solution reaches its gold world.

The calls go through the environment's tools as an agent's would (schema checks, the tool's
rules), on a world nobody else holds; a call answering an error raises :class:`SiloError`
``replay_failed`` naming the call and the answer, so a verifier that replays cannot pass or
zero on a gold solution that does not work: its failure is an environment fault.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from ._errors import SiloError
from ._family import Call
from ._jsonutil import Packed, compact_json, thaw
from ._tools import BoundTool

__all__ = ["Replayer", "RuntimeTools", "as_calls", "play", "play_sync", "replayer"]

#: ``runtime_tools(state) -> tools by name``: :meth:`Environment.runtime_tools`.
RuntimeTools = Callable[[Any], Mapping[str, BoundTool]]
#: ``await replay(calls) -> world``: what ``VerifierContext.replay`` calls.
Replayer = Callable[[Iterable[Any]], Awaitable[Any]]


def as_calls(calls: Iterable[Any]) -> list[Call]:
    """``calls`` as :class:`Call` values (``Call`` or ``(tool, input)`` pairs).

    Raises:
        TypeError: an entry is neither.
    """
    if isinstance(calls, Call | str | bytes | Mapping):
        raise TypeError(
            "Replay takes a list of silo.Call(tool, input); got one "
            f"{type(calls).__name__}. Wrap it in a list."
        )
    out = []
    for call in calls:
        if isinstance(call, Call):
            out.append(call)
        elif isinstance(call, tuple | list) and len(call) == 2:
            out.append(Call(*call))
        else:
            raise TypeError(
                f"Replay takes silo.Call(tool, input) values; got {type(call).__name__}."
            )
    return out


def _tool(by_name: Mapping[str, BoundTool], call: Call, index: int, total: int) -> BoundTool:
    tool = by_name.get(call.tool)
    if tool is None:
        raise SiloError(
            "replay_failed",
            f'Replayed call {index + 1} of {total} names tool "{call.tool}", which the '
            f"environment does not have. Known: {', '.join(sorted(by_name)) or 'none'}.",
            {"index": index, "tool": call.tool},
        )
    return tool


def _failed(call: Call, index: int, total: int, output: Any) -> SiloError:
    code = output.get("code") if isinstance(output, Mapping) else None
    message = output.get("message") if isinstance(output, Mapping) else None
    said = f"{code}: {message}" if code else compact_json(output)[:300]
    return SiloError(
        "replay_failed",
        f"Replayed call {index + 1} of {total}, {call.tool} {compact_json(call.input)[:200]}, "
        f"answered an error: {said}",
        {"index": index, "tool": call.tool, "input": call.input, "output": output},
    )


def play_sync(runtime_tools: RuntimeTools, state: Any, calls: Sequence[Call]) -> bool:
    """Play ``calls`` on ``state`` when every tool they name is a ``def`` tool.

    Returns:
        True once played; False (nothing played) when one is ``async def``: use :func:`play`.

    Raises:
        SiloError: ``replay_failed`` for an unknown tool or a call answering an error.
    """
    by_name = runtime_tools(state)
    total = len(calls)
    tools = [_tool(by_name, call, i, total) for i, call in enumerate(calls)]
    if any(t.is_async for t in tools):
        return False
    for index, (tool, call) in enumerate(zip(tools, calls, strict=True)):
        result, _ = tool.invoke_sync(call.input)
        if result.is_error:
            raise _failed(call, index, total, result.output)
    return True


async def play(runtime_tools: RuntimeTools, state: Any, calls: Sequence[Call]) -> Any:
    """Play ``calls`` on ``state`` through the tools (``async def`` ones awaited); the world.

    Raises:
        SiloError: ``replay_failed`` for an unknown tool or a call answering an error.
    """
    by_name = runtime_tools(state)
    total = len(calls)
    for index, call in enumerate(calls):
        tool = _tool(by_name, call, index, total)
        result, _ = await tool.invoke(call.input)
        if result.is_error:
            raise _failed(call, index, total, result.output)
    return state


class _Replayable(Protocol):
    """What :func:`replayer` needs of an environment (``Environment`` has it)."""

    @property
    def snapshot(self) -> Any: ...  # pragma: no cover

    def runtime_tools(self, state: Any, /) -> Mapping[str, BoundTool]: ...  # pragma: no cover

    def initial_world(self, task: Any, /) -> Any: ...  # pragma: no cover


def replayer(env: _Replayable, task: Any, snapshot: Packed | None) -> Replayer:
    """``await replay(calls)``: ``calls`` played on a fresh copy of ``task``'s initial world.

    The copy is thawed from the rollout's ``snapshot`` when the world is JSON; else a new
    initial world is built. Any tool of ``env``'s registry may be called, a task user's
    included. The world reached is returned as the verifier's ``final`` is: live.
    """

    async def replay(calls: Iterable[Any]) -> Any:
        fresh = snapshot is not None and env.snapshot is None
        world = thaw(snapshot) if fresh else env.initial_world(task)  # type: ignore[arg-type]
        return await play(env.runtime_tools, world, as_calls(calls))

    return replay
