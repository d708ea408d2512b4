"""One rollout's trace as an OpenAI chat conversation (``--format chat``).

The conversation opens with the task's instruction as the user message. A model agent's replies
are its ``model_step`` events' ``message`` (``{"role": "assistant", "content", "toolCalls":
[{"id", "name", "input"}]}``); the agent then runs those calls in that order through
``call_tool``, so the ``tool_call`` events that follow pair with them one by one. A call nobody
announced (a scripted agent's, or one a model agent made outside its model loop) becomes an
assistant message of its own, with one tool call whose id is derived from its ``callId``. Every
executed call is answered by a ``tool`` message with the same ``tool_call_id``.

A reply whose model step recorded its exact tokens carries them: ``tokenIds`` (the
completion's token ids) and ``logprobs``, each only when recorded (not null).

Calls a reply announced but the rollout never executed (the refused call beyond the limit, the
calls after a deadline) are dropped from the reply: a chat transcript cannot hold a tool call
without its answer, and the world never saw them.

A conversational task: the first user message is the instruction with the
opening (the caller gives it); each ``message_user`` turn (a ``user_turn`` event) stays an
assistant tool call, answered by a ``tool`` message holding the reply as the agent saw it
(``{"reply": ...}``, with ``"ended": true`` when the user ended the conversation). The user's
own tool calls (``"actor": "user"``) and a model user's messages are not the agent's
trajectory: they are left out. A refused ``message_user`` (malformed, or after the
conversation was over) is not in the trace, so it is dropped like any call never executed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from .._jsonutil import compact_json, output_text
from .._taskuser import MESSAGE_USER

__all__ = [
    "AssistantTurn",
    "CallKey",
    "arguments_text",
    "assistant_turns",
    "chat_messages",
    "openai_tool",
    "scripted_call_id",
]

#: How a call is keyed while rebuilding: the agent's ``callId``, or ``"t<n>"`` for turn n.
CallKey = int | str


def openai_tool(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A tool in OpenAI's function format: ``{"type": "function", "function": {...}}``."""
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": schema},
    }


def scripted_call_id(call_id: int | str) -> str:
    """The tool-call id given to a call no model reply announced: stable, unique in a rollout.

    ``call_<callId>`` for a tool call, ``call_t<n>`` for the n-th ``message_user`` turn.
    """
    return f"call_{call_id}"


def arguments_text(value: Any) -> str:
    """A tool message's content or a call's arguments: a str as-is, else compact JSON."""
    return value if isinstance(value, str) else compact_json(value)


class AssistantTurn:
    """One assistant message being rebuilt: its text, the calls it announced, those executed.

    Attributes:
        step: the ``model_step`` event it comes from (``None``: calls no reply announced).
        content: the assistant's text.
        tokens: ``tokenIds`` / ``logprobs`` of the message, those the model step recorded.
        calls: ``(tool_call_id, tool name, arguments text, key)`` of each executed call.
        at: when it happened: the model step's time, else its first call's.
    """

    __slots__ = ("announced", "at", "calls", "content", "step", "tokens")

    def __init__(self, step: dict[str, Any] | None = None, at: str | None = None) -> None:
        self.step = step
        message = step["message"] if step is not None else {}
        self.content = message.get("content")
        self.tokens = _tokens(step) if step is not None else {}
        announced = message.get("toolCalls") or ()
        self.announced: deque[dict[str, Any]] = deque(c for c in announced if isinstance(c, dict))
        self.calls: list[tuple[str, str, str, CallKey]] = []
        self.at = step.get("at") if step is not None else at

    def take(self, tool: str, said: Any = None) -> dict[str, Any] | None:
        """The next announced call, if it is the one the agent executed now.

        A ``message_user`` announced but refused (never traced) is skipped on the way: one
        that is not the call executed now, or (``said``: a turn's arguments) that said
        something else.
        """
        announced = self.announced
        while announced:
            first = announced[0]
            if first.get("name") == tool and (said is None or first.get("input") == said):
                return announced.popleft()
            if first.get("name") != MESSAGE_USER:
                return None
            announced.popleft()
        return None


def _place_call(
    key: CallKey,
    tool: str,
    arguments: Any,
    current: AssistantTurn | None,
    turns: list[AssistantTurn],
    at: str | None = None,
) -> AssistantTurn:
    """Add an executed call to the turn that announced it, or to a new turn of its own."""
    said = arguments if tool == MESSAGE_USER else None
    announced = current.take(tool, said) if current is not None else None
    if current is None or announced is None:
        # Nobody announced this call: it is a turn of its own (a scripted agent's call).
        current = AssistantTurn(None, at)
        turns.append(current)
        tool_call_id = scripted_call_id(key)
    else:
        tool_call_id = str(announced.get("id"))
        if tool != MESSAGE_USER:  # what the model sent (a turn's text is the one it said)
            arguments = announced.get("input")
    current.calls.append(
        (tool_call_id, tool, arguments_text({} if arguments is None else arguments), key)
    )
    return current


def _turn_output(event: dict[str, Any]) -> Any:
    """What ``message_user`` answered the agent, rebuilt from its ``user_turn``/``user_fault``."""
    if event.get("type") == "user_fault":
        error = event.get("error") or {}
        message = f"The user could not answer ({error.get('type')}: {error.get('message')})."
        return {"code": "internal_error", "message": message}
    if event.get("ended"):
        return {"reply": event.get("reply"), "ended": True}
    return {"reply": event.get("reply")}


def assistant_turns(
    events: Iterable[dict[str, Any]],
) -> tuple[list[AssistantTurn], dict[CallKey, Any]]:
    """The assistant turns of a trace, and each executed call's output by its key."""
    turns: list[AssistantTurn] = []
    outputs: dict[CallKey, Any] = {}
    current: AssistantTurn | None = None
    said = 0
    for event in events:
        kind = event.get("type")
        if kind == "model_step" and isinstance(event.get("message"), dict):
            current = AssistantTurn(event)
            turns.append(current)
        elif "actor" in event:  # the user's own tool calls: not the agent's trajectory
            continue
        elif kind == "tool_call":
            key = int(event["callId"])
            tool, arguments, at = str(event["tool"]), event.get("input"), event.get("at")
            current = _place_call(key, tool, arguments, current, turns, at)
        elif kind == "tool_result":
            outputs[int(event["callId"])] = event.get("output")
        elif kind in ("user_turn", "user_fault"):
            said += 1
            text = {"text": event.get("agentText")}
            current = _place_call(f"t{said}", MESSAGE_USER, text, current, turns, event.get("at"))
            outputs[f"t{said}"] = _turn_output(event)
    return turns, outputs


def _tokens(step: dict[str, Any]) -> dict[str, Any]:
    """A model step's exact tokens, as an assistant message carries them (those recorded)."""
    found = {"tokenIds": step.get("completionTokenIds"), "logprobs": step.get("logprobs")}
    return {key: value for key, value in found.items() if value is not None}


def _assistant(turn: AssistantTurn, outputs: dict[CallKey, Any]) -> list[dict[str, Any]]:
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
    message.update(turn.tokens)
    answers = [
        {"role": "tool", "tool_call_id": cid, "content": arguments_text(outputs[call_id])}
        for cid, _, _, call_id in done
    ]
    return [message, *answers]


def chat_messages(
    instruction: str, events: Iterable[dict[str, Any]], output: Any
) -> list[dict[str, Any]]:
    """The conversation of one rollout, as OpenAI chat messages.

    Args:
        instruction: the task's instruction (the user message; with a user, its opening too).
        events: the rollout's trace events, in order.
        output: the agent's output; its text closes the conversation as an assistant message
            unless the last reply already says exactly that.

    Returns:
        ``[{"role": "user", ...}, {"role": "assistant", "content", "tool_calls"?}, {"role":
        "tool", "tool_call_id", "content"}, ...]``.
    """
    turns, outputs = assistant_turns(events)
    messages: list[dict[str, Any]] = [{"role": "user", "content": instruction}]
    for turn in turns:
        messages.extend(_assistant(turn, outputs))
    text = output_text(output)
    last = messages[-1]
    said = last["role"] == "assistant" and "tool_calls" not in last and last["content"] == text
    if text and not said:
        messages.append({"role": "assistant", "content": text})
    return messages
