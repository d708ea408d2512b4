"""``openai_chat``: the model loop on OpenAI Chat Completions (and every compatible server)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .._jsonutil import output_text
from ._factory import Provider, model_agent
from ._loop import Call, Tokens, Turn
from ._sdk import ModelSettings

if TYPE_CHECKING:
    from .._context import AgentContext
    from .._tools import ToolResult, ToolSpec

__all__ = ["PROVIDER", "arguments_of", "arguments_text", "chat_tokens", "chat_tool", "openai_chat"]

#: The SDK the agents of this module run on.
PROVIDER = Provider(
    name="openai",
    factory="openai_chat",
    module="openai",
    client_class="AsyncOpenAI",
    key_var="OPENAI_API_KEY",
    url_var="OPENAI_BASE_URL",
)


def openai_chat(
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
    """An agent that runs ``model`` through the Chat Completions API (docs/models.md).

    Any OpenAI-compatible server works through ``base_url`` (vLLM, SGLang, Ollama, a LiteLLM
    proxy): ``openai_chat("Qwen/Qwen3-8B", base_url="http://127.0.0.1:8000/v1")``.

    Args:
        model: the model name the server knows.
        base_url: the server; None uses ``OPENAI_BASE_URL`` or OpenAI's API.
        api_key: the key; None uses ``OPENAI_API_KEY`` (a ``base_url`` server needs none).
        client: an ``openai.AsyncOpenAI`` to use as-is (its own server, key, retries and
            timeout apply; the agent never closes it). None: one client per rollout.
        system: a system prompt, sent before the task.
        max_turns: model responses before the loop stops (the last one's tool calls run).
        max_output_tokens: ``max_completion_tokens`` of each request.
        temperature: sampling temperature, if any.
        max_retries: the SDK's retries of a failed request (429, 5xx, connection errors).
        request_timeout: seconds per HTTP request.
        strict: send the tools for strict function calling (``"strict": true``, each schema
            in strict form: ``ToolSpec.to_dict(strict=True)``); the model then always sends
            schema-shaped arguments, ``null`` for what it leaves out. Off by default: many
            OpenAI-compatible servers (and some models) refuse or ignore ``strict``, and the
            plain schemas keep every keyword a tool declares.
        token_ids: ask the server for the exact tokens (vLLM's ``return_token_ids: true`` and
            ``logprobs: true``; SGLang and others that follow them) and record each step's
            ``promptTokenIds``, ``completionTokenIds`` and ``logprobs`` as the server sent
            them, ``null`` when it sent none — never re-tokenised (docs/rl-tokens.md).
        policy_version: the version of the policy being served, recorded on every step as
            ``policyVersion`` (its ``str()``), so a trainer knows which weights sampled it.

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
        lambda session, ctx: _ChatDialogue(
            session, settings, ctx, strict=strict, token_ids=token_ids
        ),
    )


def chat_tool(spec: ToolSpec, *, strict: bool = False) -> dict[str, Any]:
    """A tool in Chat Completions' format (``strict``: for strict function calling)."""
    schema = spec.to_dict(strict=strict)["inputSchema"]
    function: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "parameters": schema,
    }
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def arguments_of(text: str | None) -> Any:
    """The call's arguments: a dict, or the raw text when it is not a JSON object."""
    if not text:
        return {}  # some servers send "" for a call without arguments
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) else text


class _ChatDialogue:
    """A conversation as Chat Completions messages."""

    __slots__ = ("_assistant", "_create", "_messages", "_params", "_token_ids")

    def __init__(
        self,
        client: Any,
        settings: ModelSettings,
        ctx: AgentContext,
        *,
        strict: bool,
        token_ids: bool = False,
    ) -> None:
        self._create = client.chat.completions.with_raw_response.create
        messages: list[dict[str, Any]] = []
        system = settings.system_for(ctx)
        if system is not None:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": ctx.task})
        self._messages = messages
        params: dict[str, Any] = {"model": settings.model}
        if ctx.tools:  # OpenAI refuses an empty tools list
            params["tools"] = [chat_tool(spec, strict=strict) for spec in ctx.tools]
        if settings.max_output_tokens is not None:
            params["max_completion_tokens"] = settings.max_output_tokens
        if settings.temperature is not None:
            params["temperature"] = settings.temperature
        if token_ids:  # vLLM's documented fields (SGLang's OpenAI server reads the same)
            params["logprobs"] = True
            params["extra_body"] = {"return_token_ids": True}
        self._token_ids = token_ids
        self._params = params
        self._assistant: dict[str, Any] = {}

    async def ask(self) -> Turn:
        started = time.perf_counter()
        raw = await self._create(messages=self._messages, **self._params)
        completion = raw.parse()
        duration_ms = round((time.perf_counter() - started) * 1000, 3)
        if not completion.choices:
            raise ValueError(f"The model server returned no choices (response {completion.id}).")
        choice = completion.choices[0]
        message = choice.message
        tool_calls = message.tool_calls or ()
        calls = [
            # A server that sends no id (some local ones) still gets each result paired.
            Call(
                getattr(tc, "id", None) or f"call_{i}",
                tc.function.name,
                arguments_of(tc.function.arguments),
            )
            for i, tc in enumerate(tool_calls)
        ]
        self._assistant = _echo(message.content, tool_calls, calls)
        usage = completion.usage
        turn = Turn(
            text=message.content or None,
            calls=calls,
            input_tokens=None if usage is None else usage.prompt_tokens,
            output_tokens=None if usage is None else usage.completion_tokens,
            stop_reason=choice.finish_reason,
            attempts=1 + raw.retries_taken,
            duration_ms=duration_ms,
            tokens=chat_tokens(completion, choice) if self._token_ids else None,
        )
        if _rebuilt(turn) != self._assistant:  # e.g. arguments spaced otherwise: keep as sent
            turn = attrs.evolve(turn, provider_message=self._assistant)
        return turn

    def restore(self, turn: Turn) -> None:
        self._assistant = turn.provider_message or _rebuilt(turn)

    def answered(self, turn: Turn, results: Sequence[ToolResult]) -> None:
        append = self._messages.append
        append(self._assistant)
        for call, result in zip(turn.calls, results, strict=True):
            append({"role": "tool", "tool_call_id": call.id, "content": output_text(result.output)})


def chat_tokens(completion: Any, choice: Any) -> Tokens:
    """The exact tokens of a Chat Completions response, as a vLLM-style server sends them.

    ``prompt_token_ids`` beside ``choices``, each choice's ``token_ids``, and the sampled
    tokens' ``logprobs.content[].logprob``; what the server did not send is ``None``.
    """
    logprobs = getattr(choice, "logprobs", None)
    content = getattr(logprobs, "content", None)
    return Tokens(
        prompt_token_ids=getattr(completion, "prompt_token_ids", None),
        completion_token_ids=getattr(choice, "token_ids", None),
        logprobs=None if content is None else [item.logprob for item in content],
    )


def _rebuilt(turn: Turn) -> dict[str, Any]:
    """The assistant message of a turn, rebuilt from the turn alone (arguments as json.dumps)."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.text}
    if turn.calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": arguments_text(call.input)},
            }
            for call in turn.calls
        ]
    return message


def arguments_text(value: Any) -> str:
    """A call's arguments as the text a model sends: a str as-is, else ``json.dumps``."""
    return value if isinstance(value, str) else json.dumps(value)


def _echo(content: str | None, tool_calls: Sequence[Any], calls: Sequence[Call]) -> dict[str, Any]:
    """The assistant message as sent back: the model's own argument text, our call ids."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": tc.function.arguments or "{}"},
            }
            for call, tc in zip(calls, tool_calls, strict=True)
        ]
    return message
