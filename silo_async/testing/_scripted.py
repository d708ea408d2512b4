"""``ScriptedAgent``: an agent that makes a fixed list of tool calls, then answers.

The test double every world needs: it drives a rollout through the real runner (limits, trace,
grading) without a model, so a test says *what* is called instead of hand-writing an agent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from .._context import AgentContext
from .._jsonutil import clone_json
from .._tools import ToolResult

__all__ = ["ScriptedAgent", "ScriptedCall"]


@attrs.frozen
class ScriptedCall:
    """One call of a script.

    Attributes:
        tool: the tool name.
        input: the arguments (a private copy is sent on every run; replaying a recording may
            need a malformed one, so anything is accepted).
    """

    tool: str
    input: Any = attrs.field(factory=dict)


#: ``on_result(index, call, result)``: told about each call's result as it arrives.
OnResult = Callable[[int, ScriptedCall, ToolResult], None]
#: An answer, or ``answer(results)`` computing it from the results of the calls.
Answer = object | Callable[[list[ToolResult]], object]
CallLike = ScriptedCall | tuple[str, Any] | str


def _as_call(item: CallLike) -> ScriptedCall:
    if isinstance(item, ScriptedCall):
        return item
    if isinstance(item, str):
        return ScriptedCall(item)
    name, args = item
    return ScriptedCall(name, args)


class ScriptedAgent:
    """Make ``calls`` in order, then return ``answer``.

    Rejected calls come back as values and do not stop the script unless ``stop_on_error``. One
    instance may run many rollouts at once: it keeps no state between runs.

    Args:
        calls: the calls, as :class:`ScriptedCall`, ``(tool, input)`` pairs or bare tool names.
        answer: the final answer (``None`` -> ``""``), or ``answer(results)`` computing it.
        on_result: called with ``(index, call, result)`` after each call.
        stop_on_error: stop calling at the first rejected call (then answer as usual).

    Example::

        agent = ScriptedAgent(
            [("get_vendor", {"vendorId": "VEN-002"}),
             ("block_vendor", {"vendorId": "VEN-002", "reason": "fraud", "actorId": "USR-003"})],
            answer="Blocked VEN-002.",
        )
        result = await silo.run(env, "TASK-002", agent)
    """

    def __init__(
        self,
        calls: Iterable[CallLike] = (),
        answer: Answer = None,
        *,
        on_result: OnResult | None = None,
        stop_on_error: bool = False,
    ) -> None:
        self.calls = tuple(_as_call(item) for item in calls)
        self.answer = answer
        self.on_result = on_result
        self.stop_on_error = stop_on_error

    def __repr__(self) -> str:
        return f"ScriptedAgent({len(self.calls)} calls)"

    async def play(self, ctx: AgentContext) -> list[ToolResult]:
        """Make the calls on ``ctx`` in order and return their results."""
        results: list[ToolResult] = []
        for index, call in enumerate(self.calls):
            result = await ctx.call_tool(call.tool, clone_json(call.input))
            results.append(result)
            if self.on_result is not None:
                self.on_result(index, call, result)
            if result.is_error and self.stop_on_error:
                break
        return results

    async def __call__(self, ctx: AgentContext) -> object:
        """Play the script, then answer."""
        results = await self.play(ctx)
        if callable(self.answer):
            return self.answer(results)
        return self.answer
