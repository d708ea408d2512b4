"""``anthropic``: the model loop on Anthropic's Messages API."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .._jsonutil import output_text
from ._factory import Provider, model_agent
from ._loop import Call, Turn
from ._sdk import ModelSettings

if TYPE_CHECKING:
    from .._context import AgentContext
    from .._tools import ToolResult, ToolSpec

__all__ = ["DEFAULT_MAX_TOKENS", "anthropic"]

#: The SDK the agents of this module run on.
PROVIDER = Provider(
    name="anthropic",
    factory="anthropic",
    module="anthropic",
    client_class="AsyncAnthropic",
    key_var="ANTHROPIC_API_KEY",
    url_var="ANTHROPIC_BASE_URL",
)

#: ``max_tokens`` of each request when ``max_output_tokens`` is not given (the API needs one).
DEFAULT_MAX_TOKENS = 4096


def anthropic(
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
    policy_version: Any = None,
) -> Callable[[AgentContext], Any]:
    """An agent that runs ``model`` through Anthropic's Messages API (docs/models.md).

    Args:
        model: the model name, e.g. ``claude-sonnet-4-5``.
        base_url: the server; None uses ``ANTHROPIC_BASE_URL`` or Anthropic's API.
        api_key: the key; None uses ``ANTHROPIC_API_KEY`` (a ``base_url`` server needs none).
        client: an ``anthropic.AsyncAnthropic`` to use as-is (its own server, key, retries and
            timeout apply; the agent never closes it). None: one client per rollout.
        system: the system prompt.
        max_turns: model responses before the loop stops (the last one's tool calls run).
        max_output_tokens: ``max_tokens`` of each request (default
            :data:`DEFAULT_MAX_TOKENS`).
        temperature: sampling temperature, if any (sent in the body when the installed SDK no
            longer has the parameter).
        max_retries: the SDK's retries of a failed request (429, 5xx, connection errors).
        request_timeout: seconds per HTTP request.
        policy_version: recorded on every step as ``policyVersion`` (its ``str()``).

    Returns:
        ``async def agent(ctx)``.

    Raises:
        SiloError: ``model_invalid`` when the ``anthropic`` SDK is missing or no key is set.
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
        PROVIDER, settings, lambda session, ctx: _MessagesDialogue(session, settings, ctx)
    )


def messages_tool(spec: ToolSpec) -> dict[str, Any]:
    """A tool in the Messages API's format."""
    return {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}


def _sampling(create: Any, temperature: float | None) -> dict[str, Any]:
    if temperature is None:
        return {}
    try:
        accepted = "temperature" in inspect.signature(create).parameters
    except (TypeError, ValueError):  # no signature to read: trust the keyword
        accepted = True
    sampling = {"temperature": temperature}
    return sampling if accepted else {"extra_body": sampling}


class _MessagesDialogue:
    """A conversation as Messages API messages."""

    __slots__ = ("_assistant", "_create", "_messages", "_params")

    def __init__(self, client: Any, settings: ModelSettings, ctx: AgentContext) -> None:
        messages = client.messages
        self._create = messages.with_raw_response.create
        self._messages: list[dict[str, Any]] = [{"role": "user", "content": ctx.task}]
        params: dict[str, Any] = {
            "model": settings.model,
            "max_tokens": settings.max_output_tokens or DEFAULT_MAX_TOKENS,
        }
        system = settings.system_for(ctx)
        if system is not None:
            params["system"] = system
        if ctx.tools:
            params["tools"] = [messages_tool(spec) for spec in ctx.tools]
        params.update(_sampling(messages.create, settings.temperature))
        self._params = params
        self._assistant: dict[str, Any] = {}

    async def ask(self) -> Turn:
        started = time.perf_counter()
        raw = await self._create(messages=self._messages, **self._params)
        message = raw.parse()
        if inspect.isawaitable(message):  # AsyncAPIResponse.parse is a coroutine
            message = await message
        duration_ms = round((time.perf_counter() - started) * 1000, 3)
        texts, calls, content = _read_blocks(message.content)
        self._assistant = {"role": "assistant", "content": content}
        turn = Turn(
            text="\n".join(texts) or None,
            calls=calls,
            input_tokens=_input_tokens(message.usage),
            output_tokens=message.usage.output_tokens,
            stop_reason=message.stop_reason,
            attempts=1 + raw.retries_taken,
            duration_ms=duration_ms,
        )
        if _rebuilt(turn) != self._assistant:  # thinking blocks, several texts: keep as sent
            turn = attrs.evolve(turn, provider_message=self._assistant)
        return turn

    def restore(self, turn: Turn) -> None:
        self._assistant = turn.provider_message or _rebuilt(turn)

    def answered(self, turn: Turn, results: Sequence[ToolResult]) -> None:
        blocks: list[dict[str, Any]] = []
        for call, result in zip(turn.calls, results, strict=True):
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": call.id,
                "content": output_text(result.output),
            }
            if result.is_error:
                block["is_error"] = True
            blocks.append(block)
        # Every result of one response goes back in one user message, as the API requires.
        self._messages += (self._assistant, {"role": "user", "content": blocks})


def _rebuilt(turn: Turn) -> dict[str, Any]:
    """The assistant message of a turn, rebuilt from the turn alone (its text, then its calls)."""
    content: list[dict[str, Any]] = []
    if turn.text is not None:
        content.append({"type": "text", "text": turn.text})
    content += [
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}
        for call in turn.calls
    ]
    return {"role": "assistant", "content": content}


def _read_blocks(blocks: Sequence[Any]) -> tuple[list[str], list[Call], list[dict[str, Any]]]:
    """A response's texts, its tool calls, and its content as sent back next turn."""
    texts: list[str] = []
    calls: list[Call] = []
    content: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.type
        if kind == "text":
            texts.append(block.text)
            content.append({"type": "text", "text": block.text})
        elif kind == "tool_use":
            calls.append(Call(block.id, block.name, block.input))
            content.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
        else:  # thinking and the like go back as received, as the API requires
            content.append(block.to_dict())
    return texts, calls, content


def _input_tokens(usage: Any) -> int:
    """All input tokens of a response, cached ones included (as OpenAI's prompt_tokens)."""
    cached = (getattr(usage, "cache_creation_input_tokens", None) or 0) + (
        getattr(usage, "cache_read_input_tokens", None) or 0
    )
    return int(usage.input_tokens) + cached
