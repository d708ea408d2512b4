"""One rollout's trace as an OpenAI chat conversation (DESIGN §12, ``--format chat``).

The conversation opens with the task's instruction as the user message. A model agent's replies
are its ``model_step`` events' ``message`` (``{"role": "assistant", "content", "toolCalls":
[{"id", "name", "input"}]}``); the agent then runs those calls in that order through
``call_tool``, so the ``tool_call`` events that follow pair with them one by one. A call nobody
announced (a scripted agent's, or one a model agent made outside its model loop) becomes an
assistant message of its own, with one tool call whose id is derived from its ``callId``. Every
executed call is answered by a ``tool`` message with the same ``tool_call_id``.

Calls a reply announced but the rollout never executed (the refused call beyond the limit, the
calls after a deadline) are dropped from the reply: a chat transcript cannot hold a tool call
without its answer, and the world never saw them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from .._jsonutil import compact_json, output_text

__all__ = ["chat_messages", "openai_tool", "scripted_call_id"]


def openai_tool(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A tool in OpenAI's function format: ``{"type": "function", "function": {...}}``."""
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": schema},
    }


def scripted_call_id(call_id: int) -> str:
    """The tool-call id given to a call no model reply announced: stable, unique in a rollout."""
    return f"call_{call_id}"


def _text(value: Any) -> str:
    """A tool message's content or a call's arguments: a str as-is, else compact JSON."""
    return value if isinstance(value, str) else compact_json(value)


class _Turn:
    """One assistant message being rebuilt: its text, the calls it announced, those executed."""

    __slots__ = ("announced", "calls", "content")

    def __init__(self, content: Any, announced: Iterable[Any] = ()) -> None:
        self.content = content
        self.announced: deque[dict[str, Any]] = deque(c for c in announced if isinstance(c, dict))
        # (tool_call_id, tool name, arguments text, callId) of each executed call, in call order.
        self.calls: list[tuple[str, str, str, int]] = []

    def take(self, tool: str) -> dict[str, Any] | None:
        """The next announced call, if it is the one the agent executed now."""
        if self.announced and self.announced[0].get("name") == tool:
            return self.announced.popleft()
        return None


def _place_call(event: dict[str, Any], current: _Turn | None, turns: list[_Turn]) -> _Turn:
    """Add an executed call to the turn that announced it, or to a new turn of its own."""
    call_id, tool = int(event["callId"]), str(event["tool"])
    announced = current.take(tool) if current is not None else None
    if current is None or announced is None:
        # Nobody announced this call: it is a turn of its own (a scripted agent's call).
        current = _Turn(None)
        turns.append(current)
        tool_call_id, arguments = scripted_call_id(call_id), event.get("input")
    else:
        tool_call_id, arguments = str(announced.get("id")), announced.get("input")
    current.calls.append(
        (tool_call_id, tool, _text({} if arguments is None else arguments), call_id)
    )
    return current


def _turns(events: Iterable[dict[str, Any]]) -> tuple[list[_Turn], dict[int, Any]]:
    """The assistant turns of a trace, and each executed call's output by ``callId``."""
    turns: list[_Turn] = []
    outputs: dict[int, Any] = {}
    current: _Turn | None = None
    for event in events:
        kind = event.get("type")
        if kind == "model_step" and isinstance(event.get("message"), dict):
            message = event["message"]
            current = _Turn(message.get("content"), message.get("toolCalls") or ())
            turns.append(current)
        elif kind == "tool_call":
            current = _place_call(event, current, turns)
        elif kind == "tool_result":
            outputs[int(event["callId"])] = event.get("output")
    return turns, outputs


def _assistant(turn: _Turn, outputs: dict[int, Any]) -> list[dict[str, Any]]:
    """The assistant message of ``turn`` and the ``tool`` messages answering its calls."""
    done = [c for c in turn.calls if c[3] in outputs]
    if turn.content is None and not done:
        return []  # announced calls only, none executed: nothing the world saw
    message: dict[str, Any] = {"role": "assistant", "content": turn.content}
    if done:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args, _ in done
        ]
    answers = [
        {"role": "tool", "tool_call_id": cid, "content": _text(outputs[call_id])}
        for cid, _, _, call_id in done
    ]
    return [message, *answers]


def chat_messages(
    instruction: str, events: Iterable[dict[str, Any]], output: Any
) -> list[dict[str, Any]]:
    """The conversation of one rollout, as OpenAI chat messages.

    Args:
        instruction: the task's instruction (the user message).
        events: the rollout's trace events, in order.
        output: the agent's output; its text closes the conversation as an assistant message
            unless the last reply already says exactly that.

    Returns:
        ``[{"role": "user", ...}, {"role": "assistant", "content", "tool_calls"?}, {"role":
        "tool", "tool_call_id", "content"}, ...]``.
    """
    turns, outputs = _turns(events)
    messages: list[dict[str, Any]] = [{"role": "user", "content": instruction}]
    for turn in turns:
        messages.extend(_assistant(turn, outputs))
    text = output_text(output)
    last = messages[-1]
    said = last["role"] == "assistant" and "tool_calls" not in last and last["content"] == text
    if text and not said:
        messages.append({"role": "assistant", "content": text})
    return messages
