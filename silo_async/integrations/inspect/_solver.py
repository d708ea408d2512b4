"""The solver: each sample is one episode, played by the model through its tools.

The loop asks the model (Inspect's ``generate`` without its own tool execution), records the
response as a ``model_step``, runs every tool call of the response through the episode, and
feeds the results back. It ends on a response without a tool call (its text is the answer), on
a ``submit`` call (its ``answer``), or when the episode ends itself at a limit.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessageTool, ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolCall, ToolCallError

from ..._episode import Episode, episode
from ..._result import RunResult
from .._project import Served
from ._tools import SUBMIT, tool_defs, tool_message

__all__ = ["RESULT_KEY", "play_episode", "summary"]

#: Where the solver leaves the episode's grade for the scorer (the sample's store).
RESULT_KEY = "silo_async:result"


def summary(result: RunResult) -> dict[str, Any]:
    """What the scorer needs of a result, as JSON (the store is written to Inspect's log)."""
    return {
        "runId": result.run_id,
        "reward": result.reward,
        "passed": result.passed,
        "checks": [check.to_dict() for check in result.checks],
        "output": result.output_text,
        "terminationReason": result.termination_reason,
    }


def _record(ep: Episode, output: ModelOutput) -> None:
    message = output.message
    usage = output.usage
    ep.record_model_step(
        model=output.model or None,
        input_tokens=usage.input_tokens if usage else None,
        output_tokens=usage.output_tokens if usage else None,
        stop_reason=output.stop_reason,
        message={
            "role": "assistant",
            "content": message.text or None,
            "toolCalls": [
                {"id": c.id, "name": c.function, "input": c.arguments}
                for c in message.tool_calls or []
            ],
        },
    )


def _submitted(call: ToolCall) -> str | None:
    answer = call.arguments.get("answer")
    return answer if isinstance(answer, str) else None


def _refuse_submit(call: ToolCall) -> ChatMessageTool:
    text = 'Invalid arguments for "submit": "answer" is required and must be a string.'
    return ChatMessageTool(
        content=text,
        tool_call_id=call.id,
        function=call.function,
        error=ToolCallError("parsing", text),
    )


def _over(ep: Episode) -> bool:
    # A function, not the property inline: a call may end the episode between two checks.
    return ep.ended


async def _play(ep: Episode, state: TaskState, generate: Generate) -> str | None:
    """The tool loop; returns the answer (``None`` when a limit ended the episode)."""
    while not _over(ep):
        state = await generate(state, tool_calls="none")
        _record(ep, state.output)
        message = state.output.message
        if message.text:
            ep.set_output(message.text)
        if not message.tool_calls:
            return message.text
        for call in message.tool_calls:
            if call.function == SUBMIT:
                answer = _submitted(call)
                if answer is not None:
                    state.messages.append(
                        ChatMessageTool(content="Submitted.", tool_call_id=call.id, function=SUBMIT)
                    )
                    return answer
                state.messages.append(_refuse_submit(call))
                continue
            result = await ep.call_tool(call.function, call.arguments)
            state.messages.append(tool_message(call, result))
            if _over(ep):
                break
    return None


@solver(name="silo_episode")
def play_episode(served: Served, max_tool_calls: int, timeout: float | None) -> Solver:
    """Play each sample's task as one episode of ``served``; its grade goes to the store."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        ep = episode(
            served.env,
            str(state.sample_id),
            max_tool_calls=max_tool_calls,
            timeout=timeout,
            runs_dir=served.runs_dir,
            agent_name="inspect",
        )
        try:
            async with ep:
                state.tools = tool_defs(ep, list(ep.tools))
                answer = await _play(ep, state, generate)
                if not _over(ep):
                    await ep.finish(answer)
        finally:
            if ep.result is not None:
                state.store.set(RESULT_KEY, summary(ep.result))
        return state

    return solve
