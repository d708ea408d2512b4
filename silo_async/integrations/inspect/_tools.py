"""Tools for Inspect: an episode's tools as ``ToolDef`` objects, and tool results as messages.

Inspect validates a call against its own reduced schema only when its tool loop runs the call;
the solver here runs every call through the episode instead, so silo's validation (the full
JSON Schema, Silo's messages) decides. The ``ToolDef`` callables still work for Inspect's own
loops (``react()``, ``generate(tool_calls="loop")``): they call the same episode.
"""

from __future__ import annotations

from typing import Any, Literal

from inspect_ai.model import ChatMessageTool
from inspect_ai.tool import ToolCall, ToolCallError, ToolDef, ToolError, ToolParams
from pydantic import ValidationError

from ..._episode import Episode
from ..._jsonutil import compact_json
from ..._tools import ToolResult, ToolSpec

__all__ = ["SUBMIT", "as_text", "tool_defs", "tool_message"]

#: The tool that ends an episode with an answer, as over MCP.
SUBMIT = "submit"
_SUBMIT_PARAMS = {
    "type": "object",
    "properties": {"answer": {"type": "string", "description": "Your final answer."}},
    "required": ["answer"],
}


def as_text(value: Any) -> str:
    """A tool output as the model reads it: a str as-is, anything else compact JSON."""
    return value if isinstance(value, str) else compact_json(value)


def _params(schema: dict[str, Any]) -> ToolParams:
    """Inspect's view of a schema: the keywords it knows, every parameter described."""
    try:
        params = ToolParams.model_validate(schema)
    except ValidationError:
        # A shape Inspect cannot model (a type list it rejects, a boolean schema...): show
        # the parameters untyped; silo's validation still checks every call.
        props = schema.get("properties")
        names = list(props) if isinstance(props, dict) else []
        params = ToolParams.model_validate(
            {"properties": {n: {} for n in names}, "required": schema.get("required") or []}
        )
    for name, param in params.properties.items():
        param.description = param.description or name
    return params


def _callable(ep: Episode, name: str) -> Any:
    async def execute(**kwargs: Any) -> str:
        result = await ep.call_tool(name, kwargs)
        if result.is_error:
            raise ToolError(as_text(result.output))
        return as_text(result.output)

    return execute


def tool_defs(ep: Episode, specs: list[ToolSpec]) -> list[ToolDef]:
    """The episode's tools, then ``submit`` (``{"answer": string}``) last."""
    defs = [
        ToolDef(
            _callable(ep, spec.name),
            name=spec.name,
            description=spec.description or spec.name,
            parameters=_params(spec.input_schema),
        )
        for spec in specs
    ]

    async def submit(answer: str) -> str:
        await ep.finish(answer)
        return "Submitted."

    defs.append(
        ToolDef(
            submit,
            name=SUBMIT,
            description="Submit your final answer; this ends the task.",
            parameters=ToolParams.model_validate(_SUBMIT_PARAMS),
        )
    )
    return defs


def tool_message(call: ToolCall, result: ToolResult) -> ChatMessageTool:
    """The tool message answering ``call``: the output, or a rejected call's error document."""
    text = as_text(result.output)
    error = None
    if result.is_error:
        output = result.output if isinstance(result.output, dict) else {}
        kind: Literal["parsing", "unknown"] = (
            "parsing" if output.get("code") in ("invalid_input", "tool_not_found") else "unknown"
        )
        error = ToolCallError(kind, text)
    return ChatMessageTool(content=text, tool_call_id=call.id, function=call.function, error=error)
