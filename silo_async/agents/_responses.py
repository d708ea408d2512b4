"""``openai_responses``: the model loop on OpenAI's Responses API.

The same loop, keywords and events as :func:`~silo_async.agents.openai_chat`; only the wire
format differs. The conversation is a list of input items: the task as a user message, then
each response's output items as the server sent them (``message``, ``function_call``,
``reasoning``...) followed by one ``function_call_output`` item per call. The system prompt is
the request's ``instructions``; tools are function tools (``{"type": "function", "name",
"description", "parameters", "strict"}``). Nothing is stored server-side on silo's behalf
(``store: false``): every request carries the whole conversation, so a rollout is reproducible
and resumable from its trace alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .._jsonutil import output_text
from ._factory import model_agent
from ._loop import Call, Tokens, Turn
from ._openai import PROVIDER as CHAT_PROVIDER
from ._openai import arguments_of, arguments_text
from ._sdk import ModelSettings

if TYPE_CHECKING:
    from .._context import AgentContext
    from .._tools import ToolResult, ToolSpec

__all__ = ["openai_responses"]

#: The same SDK as ``openai_chat``; runs are labelled ``openai-responses/MODEL``.
PROVIDER = attrs.evolve(CHAT_PROVIDER, name="openai-responses", factory="openai_responses")

#: What a request asks for to get the sampled tokens' logprobs on each output text.
LOGPROBS_INCLUDE = "message.output_text.logprobs"

#: Keys of an output item that say nothing the model chose (the server's own bookkeeping).
_BOOKKEEPING = frozenset({"id", "status", "annotations", "logprobs"})


def openai_responses(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    client: Any = None,
    system: str | None = None,
    max_turns: int = 50,
    max_output_tokens: int | None = None,
    temperature: float | None = None,
    max_retries: int = 2,
    request_timeout: float = 120.0,
    strict: bool = False,
    token_ids: bool = False,
    policy_version: Any = None,
) -> Callable[[AgentContext], Any]:
    """An agent that runs ``model`` through OpenAI's Responses API (docs/responses.md).

    The keywords, the loop and the ``model_step`` events are :func:`openai_chat`'s; the spec
    is ``openai-responses/MODEL`` (``--model``, ``--user-model``).

    Args:
        model: the model name the server knows.
        base_url: the server; None uses ``OPENAI_BASE_URL`` or OpenAI's API.
        api_key: the key; None uses ``OPENAI_API_KEY`` (a ``base_url`` server needs none).
        client: an ``openai.AsyncOpenAI`` to use as-is (never closed by the agent).
        system: a system prompt, sent as the request's ``instructions``.
        max_turns: model responses before the loop stops (the last one's tool calls run).
        max_output_tokens: ``max_output_tokens`` of each request.
        temperature: sampling temperature, if any.
        max_retries: the SDK's retries of a failed request (429, 5xx, connection errors).
        request_timeout: seconds per HTTP request.
        strict: send the function tools with ``"strict": true`` and strict schemas.
        token_ids: ask for the exact tokens (``return_token_ids: true``, as vLLM's field is
            named, and the output text's logprobs through ``include``) and record every
            step's ``promptTokenIds``, ``completionTokenIds`` and ``logprobs`` as sent:
            ``prompt_token_ids`` and ``token_ids`` beside ``output``, logprobs from each
            ``output_text``'s ``logprobs``; ``null`` when the server sent none.
        policy_version: recorded on every step as ``policyVersion`` (its ``str()``).

    Returns:
        ``async def agent(ctx)``.

    Raises:
        SiloError: ``model_invalid`` when the ``openai`` SDK is missing or no key is set.
        ValueError: an invalid keyword value.
    """
    settings = ModelSettings(
        model=model,
        base_url=base_url,
        api_key=api_key,
        client=client,
        system=system,
        max_turns=max_turns,
        max_output_tokens=max_output_tokens,
        temperature=temperature,
        max_retries=max_retries,
        request_timeout=request_timeout,
        policy_version=policy_version,
    )
    return model_agent(
        PROVIDER,
        settings,
        lambda session, ctx: _ResponsesDialogue(
            session, settings, ctx, strict=strict, token_ids=token_ids
        ),
    )


def function_tool(spec: ToolSpec, *, strict: bool = False) -> dict[str, Any]:
    """A tool as the Responses API's function tool."""
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.to_dict(strict=strict)["inputSchema"],
        "strict": strict,
    }


class _ResponsesDialogue:
    """A conversation as Responses API input items."""

    __slots__ = ("_create", "_input", "_output", "_params", "_token_ids")

    def __init__(
        self,
        client: Any,
        settings: ModelSettings,
        ctx: AgentContext,
        *,
        strict: bool,
        token_ids: bool,
    ) -> None:
        self._create = client.responses.with_raw_response.create
        self._input: list[dict[str, Any]] = [{"role": "user", "content": ctx.task}]
        params: dict[str, Any] = {"model": settings.model, "store": False}
        system = settings.system_for(ctx)
        if system is not None:
            params["instructions"] = system
        if ctx.tools:
            params["tools"] = [function_tool(spec, strict=strict) for spec in ctx.tools]
        if settings.max_output_tokens is not None:
            params["max_output_tokens"] = settings.max_output_tokens
        if settings.temperature is not None:
            params["temperature"] = settings.temperature
        if token_ids:
            params["include"] = [LOGPROBS_INCLUDE]
            params["extra_body"] = {"return_token_ids": True}
        self._token_ids = token_ids
        self._params = params
        self._output: list[dict[str, Any]] = []

    async def ask(self) -> Turn:
        started = time.perf_counter()
        raw = await self._create(input=self._input, **self._params)
        response = raw.parse()
        duration_ms = round((time.perf_counter() - started) * 1000, 3)
        items = [_item_dict(item) for item in response.output or ()]
        texts, calls = _read_items(items)
        self._output = items
        usage = response.usage
        turn = Turn(
            text="\n".join(texts) if texts else None,
            calls=calls,
            input_tokens=None if usage is None else usage.input_tokens,
            output_tokens=None if usage is None else usage.output_tokens,
            stop_reason=_stop_reason(response),
            attempts=1 + raw.retries_taken,
            duration_ms=duration_ms,
            tokens=_tokens(response, items) if self._token_ids else None,
        )
        if _bare(_rebuilt(turn)) != _bare(items):  # reasoning items, several texts: as sent
            turn = attrs.evolve(turn, provider_message={"output": items})
        return turn

    def restore(self, turn: Turn) -> None:
        kept = turn.provider_message
        self._output = list(kept["output"]) if kept is not None else _rebuilt(turn)

    def answered(self, turn: Turn, results: Sequence[ToolResult]) -> None:
        self._input += self._output
        self._input += [
            {"type": "function_call_output", "call_id": call.id, "output": output_text(r.output)}
            for call, r in zip(turn.calls, results, strict=True)
        ]


def _item_dict(item: Any) -> dict[str, Any]:
    """An output item as a plain dict, as the server sent it (unset fields left out)."""
    if isinstance(item, dict):
        return item
    dumped: dict[str, Any] = item.to_dict(mode="json", exclude_unset=True)
    return dumped


def _read_items(items: Sequence[dict[str, Any]]) -> tuple[list[str], list[Call]]:
    """The texts and the function calls of a response's output, in order."""
    texts: list[str] = []
    calls: list[Call] = []
    for i, item in enumerate(items):
        kind = item.get("type")
        if kind == "message":
            texts += [
                str(part.get("text", ""))
                for part in item.get("content") or ()
                if isinstance(part, dict) and part.get("type") == "output_text"
            ]
        elif kind == "function_call":
            # A server that sends no call id (some local ones) still gets each result paired.
            call_id = item.get("call_id") or f"call_{i}"
            calls.append(Call(call_id, str(item.get("name")), arguments_of(item.get("arguments"))))
    return texts, calls


def _stop_reason(response: Any) -> str | None:
    """Why the response ended: an incomplete one's reason, else its status (``completed``)."""
    details = getattr(response, "incomplete_details", None)
    reason = getattr(details, "reason", None)
    return str(reason) if reason else getattr(response, "status", None)


def _tokens(response: Any, items: Sequence[dict[str, Any]]) -> Tokens:
    """The response's exact tokens: ids beside ``output``, logprobs of its output texts."""
    logprobs: list[float] | None = None
    for item in items:
        for part in item.get("content") or () if item.get("type") == "message" else ():
            found = part.get("logprobs") if isinstance(part, dict) else None
            if found:
                logprobs = (logprobs or []) + [entry["logprob"] for entry in found]
    return Tokens(
        prompt_token_ids=getattr(response, "prompt_token_ids", None),
        completion_token_ids=getattr(response, "token_ids", None),
        logprobs=logprobs,
    )


def _rebuilt(turn: Turn) -> list[dict[str, Any]]:
    """The output items of a turn, rebuilt from the turn alone (a message, then its calls)."""
    items: list[dict[str, Any]] = []
    if turn.text is not None:
        part = {"type": "output_text", "text": turn.text}
        items.append({"type": "message", "role": "assistant", "content": [part]})
    items += [
        {
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": arguments_text(call.input),
        }
        for call in turn.calls
    ]
    return items


def _bare(value: Any) -> Any:
    """``value`` without the server's bookkeeping keys (ids, statuses), for comparing."""
    if isinstance(value, dict):
        return {k: _bare(v) for k, v in value.items() if k not in _BOOKKEEPING}
    if isinstance(value, list):
        return [_bare(v) for v in value]
    return value
