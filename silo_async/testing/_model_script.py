"""What a :class:`~silo_async.testing.ScriptedModelServer` says, and what it was asked.

Replies are written once, provider-neutral (:class:`Reply`, :class:`ToolCall`,
:class:`ErrorReply`), and rendered in the protocol of the request that gets them: a Chat
Completions ``chat.completion``, a Responses API ``response`` or a Messages API ``message``.
:class:`ModelRequest` reads a request of any of them the same way, so a script can follow a
conversation whichever SDK sent it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

__all__ = [
    "ErrorReply",
    "ModelRequest",
    "Reply",
    "Script",
    "SeenResult",
    "ToolCall",
    "error_body",
    "render",
]


@attrs.frozen
class ToolCall:
    """A tool call the scripted model makes.

    Attributes:
        name: the tool.
        input: its arguments (a dict). A ``str`` is sent verbatim as Chat Completions'
            ``arguments`` text, to play a model that writes broken JSON.
        id: the call id (default: a fresh ``call_<n>`` / ``toolu_<n>``).
    """

    name: str
    input: Any = attrs.field(factory=dict)
    id: str | None = None


def _calls(value: Sequence[ToolCall | tuple[str, Any]]) -> tuple[ToolCall, ...]:
    return tuple(c if isinstance(c, ToolCall) else ToolCall(*c) for c in value)


def _numbers(value: Sequence[Any] | None) -> tuple[Any, ...] | None:
    return None if value is None else tuple(value)


@attrs.frozen
class Reply:
    """A successful model response.

    Attributes:
        text: the assistant's text (None: none).
        tool_calls: the calls, in order (``ToolCall`` or ``(name, input)`` tuples).
        input_tokens: the usage reported as prompt / input tokens.
        output_tokens: the usage reported as completion / output tokens.
        stop_reason: the finish reason to report (default: ``tool_calls`` / ``tool_use`` with
            calls, else ``stop`` / ``end_turn``).
        prompt_token_ids: sent as the response's ``prompt_token_ids`` when the request asks
            (``return_token_ids: true``, as vLLM does); None: not sent.
        token_ids: sent as the choice's (or the Responses output's) ``token_ids`` when the
            request asks for token ids.
        logprobs: the sampled tokens' logprobs, sent as the choice's ``logprobs.content`` when
            the request asks (``logprobs: true``; Responses: ``include`` of
            ``message.output_text.logprobs``).
    """

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = attrs.field(default=(), converter=_calls)
    input_tokens: int = 10
    output_tokens: int = 5
    stop_reason: str | None = None
    prompt_token_ids: tuple[int, ...] | None = attrs.field(default=None, converter=_numbers)
    token_ids: tuple[int, ...] | None = attrs.field(default=None, converter=_numbers)
    logprobs: tuple[float, ...] | None = attrs.field(default=None, converter=_numbers)


@attrs.frozen
class ErrorReply:
    """An HTTP error (429, 500, 503...), to exercise the SDK's retries.

    Attributes:
        status: the HTTP status.
        message: the error message in the body.
        retry_after_ms: sent as ``retry-after-ms`` so the SDK retries at once (None: omitted,
            the SDK backs off 0.5-8 s).
        headers: more response headers (``{"x-should-retry": "false"}`` stops retries).
    """

    status: int = 429
    message: str = "Rate limited (scripted)."
    retry_after_ms: int | None = 1
    headers: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class SeenResult:
    """A tool result found in a request's conversation.

    Attributes:
        id: the call id it answers.
        content: its text.
        is_error: the Messages API's ``is_error`` (None for Chat Completions, which has none).
    """

    id: str
    content: str
    is_error: bool | None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


@attrs.frozen
class ModelRequest:
    """One request the server received.

    Attributes:
        index: 0-based arrival order over the whole server.
        protocol: ``chat`` (Chat Completions), ``responses`` (Responses API) or ``messages``
            (Messages API).
        path: the request path.
        headers: its headers, names lower-cased.
        body: the decoded JSON body.
    """

    index: int
    protocol: str
    path: str
    headers: Mapping[str, str]
    body: Any

    @property
    def model(self) -> str | None:
        """The ``model`` asked for."""
        model = self.body.get("model")
        return model if isinstance(model, str) else None

    @property
    def messages(self) -> list[Any]:
        """The conversation sent: messages (Responses: its ``input`` items)."""
        if self.protocol == "responses":
            given = self.body.get("input")
            return [{"role": "user", "content": given}] if isinstance(given, str) else given or []
        messages = self.body.get("messages")
        return messages if isinstance(messages, list) else []

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered, in either protocol's format."""
        names = []
        for tool in self.body.get("tools") or []:
            holder = tool.get("function", tool) if isinstance(tool, dict) else {}
            names.append(str(holder.get("name")))
        return names

    @property
    def turn(self) -> int:
        """How many model responses the conversation holds (0 for its first request).

        An assistant message each; in Responses input, each run of output items (messages,
        function calls, reasoning) between the user's and the tools' items.
        """
        if self.protocol != "responses":
            return sum(
                1 for m in self.messages if isinstance(m, dict) and m.get("role") == "assistant"
            )
        runs, inside = 0, False
        for item in self.messages:
            said = _is_output(item)
            runs += said and not inside
            inside = said
        return runs

    @property
    def task(self) -> str:
        """The text of the first user message (the agent's task)."""
        for message in self.messages:
            if isinstance(message, dict) and message.get("role") == "user":
                return _text(message.get("content"))
        return ""

    @property
    def tool_results(self) -> list[SeenResult]:
        """Every tool result in the conversation, in order."""
        return _results(self.messages)

    @property
    def last_results(self) -> list[SeenResult]:
        """The tool results after the last assistant message."""
        tail = self.messages
        for i in range(len(tail) - 1, -1, -1):
            if _is_output(tail[i]):
                tail = tail[i + 1 :]
                break
        return _results(tail)


def _is_output(item: Any) -> bool:
    """An assistant message, or a Responses output item sent back (a call, reasoning...)."""
    if not isinstance(item, dict):
        return False
    return item.get("role") == "assistant" or item.get("type") in ("function_call", "reasoning")


def _results(messages: list[Any]) -> list[SeenResult]:
    seen = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        if m.get("type") == "function_call_output":
            seen.append(SeenResult(str(m.get("call_id")), _text(m.get("output")), None))
        elif m.get("role") == "tool":
            seen.append(SeenResult(str(m.get("tool_call_id")), _text(m.get("content")), None))
        elif m.get("role") == "user" and isinstance(m.get("content"), list):
            for block in m["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    content = _text(block.get("content"))
                    error = bool(block.get("is_error", False))
                    seen.append(SeenResult(str(block.get("tool_use_id")), content, error))
    return seen


#: What a script entry may be: a reply, an error, a bare text answer, or a raw JSON body.
Step = Reply | ErrorReply | str | dict[str, Any]
#: A script: replies in order, or a function of the request.
Script = Sequence[Step] | Callable[[ModelRequest], Step]


def render(reply: Reply, request: ModelRequest, number: int) -> dict[str, Any]:
    """``reply`` as a response body of ``request``'s protocol; ``number`` makes ids unique."""
    if request.protocol == "chat":
        return _chat(reply, request, number)
    if request.protocol == "responses":
        return _response(reply, request, number)
    return _message(reply, request, number)


def _chat(reply: Reply, request: ModelRequest, number: int) -> dict[str, Any]:
    calls = [
        {
            "id": call.id or f"call_{number}_{i}",
            "type": "function",
            "function": {
                "name": call.name,
                "arguments": call.input if isinstance(call.input, str) else json.dumps(call.input),
            },
        }
        for i, call in enumerate(reply.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if calls:
        message["tool_calls"] = calls
    usage = {"prompt_tokens": reply.input_tokens, "completion_tokens": reply.output_tokens}
    usage["total_tokens"] = reply.input_tokens + reply.output_tokens
    finish = reply.stop_reason or ("tool_calls" if calls else "stop")
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
    choice["logprobs"] = _chat_logprobs(reply) if request.body.get("logprobs") is True else None
    body: dict[str, Any] = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": request.model or "scripted",
        "choices": [choice],
        "usage": usage,
    }
    if request.body.get("return_token_ids") is True:  # vLLM's extension, where vLLM puts it
        body["prompt_token_ids"] = _listed(reply.prompt_token_ids)
        choice["token_ids"] = _listed(reply.token_ids)
    return body


def _listed(value: tuple[Any, ...] | None) -> list[Any] | None:
    return None if value is None else list(value)


def sampled_logprobs(reply: Reply) -> list[dict[str, Any]] | None:
    """The reply's logprobs as OpenAI's per-token entries (token text ``token_id:<id>``)."""
    if reply.logprobs is None:
        return None
    ids = reply.token_ids or ()
    return [
        {
            "token": f"token_id:{ids[i]}" if i < len(ids) else "",
            "logprob": logprob,
            "bytes": None,
            "top_logprobs": [],
        }
        for i, logprob in enumerate(reply.logprobs)
    ]


def _chat_logprobs(reply: Reply) -> dict[str, Any] | None:
    entries = sampled_logprobs(reply)
    return None if entries is None else {"content": entries, "refusal": None}


def _response(reply: Reply, request: ModelRequest, number: int) -> dict[str, Any]:
    """A Responses API ``response``: a message item (its text), then one item per call."""
    body = request.body
    output: list[dict[str, Any]] = []
    if reply.text is not None:
        part: dict[str, Any] = {"type": "output_text", "text": reply.text, "annotations": []}
        if LOGPROBS_INCLUDE in (body.get("include") or ()):
            part["logprobs"] = sampled_logprobs(reply) or []
        output.append(
            {
                "type": "message",
                "id": f"msg_{number}",
                "status": "completed",
                "role": "assistant",
                "content": [part],
            }
        )
    for i, call in enumerate(reply.tool_calls):
        arguments = call.input if isinstance(call.input, str) else json.dumps(call.input)
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{number}_{i}",
                "call_id": call.id or f"call_{number}_{i}",
                "name": call.name,
                "arguments": arguments,
                "status": "completed",
            }
        )
    total = reply.input_tokens + reply.output_tokens
    response: dict[str, Any] = {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": 0,
        "status": reply.stop_reason or "completed",
        "model": request.model or "scripted",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": reply.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": reply.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": total,
        },
    }
    if body.get("return_token_ids") is True:  # beside output, as the chat extension does
        response["prompt_token_ids"] = _listed(reply.prompt_token_ids)
        response["token_ids"] = _listed(reply.token_ids)
    return response


#: What a Responses request lists in ``include`` to get its output texts' logprobs.
LOGPROBS_INCLUDE = "message.output_text.logprobs"


def _message(reply: Reply, request: ModelRequest, number: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text is not None:
        content.append({"type": "text", "text": reply.text})
    for i, call in enumerate(reply.tool_calls):
        block_id = call.id or f"toolu_{number}_{i}"
        content.append({"type": "tool_use", "id": block_id, "name": call.name, "input": call.input})
    stop = reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": request.model or "scripted",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
    }


def error_body(protocol: str, status: int, message: str) -> dict[str, Any]:
    """An error body in the shape each SDK reads its message from."""
    kind = "rate_limit_error" if status == 429 else "api_error"
    if protocol == "messages":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": None}}
