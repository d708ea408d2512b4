"""AgentContext: everything an agent gets — the task, the tools, ``call_tool`` and its budget."""

from __future__ import annotations

import difflib
import math
import time
from collections.abc import Callable
from typing import Any

import anyio
from anyio.lowlevel import checkpoint

from ._jsonutil import compact_json
from ._tools import BoundTool, ToolResult, ToolSpec
from ._trace import TraceRecorder

__all__ = ["AgentContext", "ToolCallLimitExceeded"]


class ToolCallLimitExceeded(Exception):
    """Raised by ``call_tool`` beyond the limit if the agent shielded itself from cancellation.

    Normally the refused call cancels the agent's scope and never returns.
    """


class _Budget:
    """Mutable counters of one rollout, shared by the context and the runner."""

    __slots__ = ("calls", "errors", "faults", "limit_hit", "max_calls")

    def __init__(self, max_calls: int) -> None:
        self.max_calls = max_calls
        self.calls = 0
        self.errors = 0
        self.faults = 0
        self.limit_hit = False


_UNSET: Any = object()


class AgentContext:
    """What ``async def agent(ctx)`` receives.

    Attributes:
        task: the task's instruction — the only text the agent is given.
        tools: the tools it may call, as :class:`ToolSpec` (``.to_dict()`` feeds a model).
        cancel_scope: the anyio cancel scope the limits cancel (Silo's abort signal).
    """

    __slots__ = ("_budget", "_by_name", "_partial", "_trace", "cancel_scope", "task", "tools")

    def __init__(
        self,
        task: str,
        tools: list[BoundTool],
        budget: _Budget,
        trace: TraceRecorder,
        cancel_scope: anyio.CancelScope,
    ) -> None:
        self.task = task
        self.tools: list[ToolSpec] = [t.spec for t in tools]
        self.cancel_scope = cancel_scope
        self._by_name = {t.name: t for t in tools}
        self._budget = budget
        self._trace = trace
        self._partial: Any = _UNSET

    @property
    def cancelled(self) -> bool:
        """True once a limit (or anyone) cancelled the agent's scope."""
        return self.cancel_scope.cancel_called

    @property
    def tool_calls(self) -> int:
        """Tool calls executed so far."""
        return self._budget.calls

    @property
    def remaining_tool_calls(self) -> int:
        """How many more tool calls will be executed before the limit stops the agent."""
        return max(0, self._budget.max_calls - self._budget.calls)

    @property
    def remaining_time(self) -> float:
        """Seconds left before the time limit (``inf`` when there is none)."""
        deadline = self.cancel_scope.deadline
        if math.isinf(deadline):
            return math.inf
        return max(0.0, deadline - anyio.current_time())

    @property
    def output(self) -> Any:
        """The partial output left with :meth:`set_output` (``None`` if none)."""
        return None if self._partial is _UNSET else self._partial

    @property
    def has_output(self) -> bool:
        """True once :meth:`set_output` was called."""
        return self._partial is not _UNSET

    def set_output(self, value: Any) -> None:
        """Leave a partial answer, graded if the agent is stopped before it returns.

        The agent's return value wins when it returns one (anything but ``None``).
        """
        self._partial = value

    def record_model_step(
        self,
        *,
        model: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        **fields: Any,
    ) -> None:
        """Record a model turn as a ``model_step`` trace event (with token usage when known).

        Extra keyword fields (e.g. ``stop_reason="tool_use"``) are stored as given.
        """
        event: dict[str, Any] = {"model": model}
        if input_tokens is not None or output_tokens is not None:
            event["usage"] = {"inputTokens": input_tokens, "outputTokens": output_tokens}
        event.update(fields)
        self._trace.emit("model_step", event)

    async def call_tool(self, name: str, input: dict[str, Any] | None = None) -> ToolResult:
        """Call a tool by name. Always a checkpoint; rejected calls come back as values.

        Beyond the tool-call limit the call is neither executed nor recorded: it cancels the
        agent's scope, so this never returns.
        """
        await checkpoint()
        budget = self._budget
        if budget.calls >= budget.max_calls:
            await self._refuse()
        budget.calls += 1
        call_id = budget.calls
        trace = self._trace
        tool = self._by_name.get(name)
        tool_json = tool.name_json if tool is not None else compact_json(name)
        trace.tool_call(call_id, tool_json, input)
        started = time.perf_counter()
        if tool is None:
            result, fault = self._unknown(name), None
        elif tool.is_async:
            result, fault = await tool.invoke(input)
        else:
            result, fault = tool.invoke_sync(input)
        duration_ms = round((time.perf_counter() - started) * 1000, 3)
        if result.is_error:
            if fault is None:
                budget.errors += 1
            else:
                budget.faults += 1
        trace.tool_result(call_id, tool_json, result, duration_ms, fault)
        return result

    async def _refuse(self) -> None:
        self._budget.limit_hit = True
        self.cancel_scope.cancel()
        await checkpoint()
        raise ToolCallLimitExceeded(
            f"Tool call limit exceeded ({self._budget.max_calls}); the agent's scope is cancelled."
        )

    def _unknown(self, name: str) -> ToolResult:
        names = list(self._by_name)
        close = _closest(name, names)
        hint = (
            f" Closest tools: {', '.join(close)}." if close else " This environment has no tools."
        )
        output = {
            "code": "tool_not_found",
            "message": f'Unknown tool "{name}".{hint}',
            "details": {"tool": name, "suggestions": close},
        }
        return ToolResult(output, is_error=True)


def _closest(name: str, names: list[str], count: int = 3) -> list[str]:
    """The real tool names most like ``name`` (never empty when tools exist)."""
    if not names:
        return []
    key: Callable[[str], str] = str.lower
    close = difflib.get_close_matches(key(str(name)), [key(n) for n in names], count, 0.5)
    by_lower = {key(n): n for n in names}
    found = [by_lower[c] for c in close]
    if not found:
        ranked = sorted(
            names, key=lambda n: -difflib.SequenceMatcher(None, key(str(name)), key(n)).ratio()
        )
        found = ranked[:count]
    return found
