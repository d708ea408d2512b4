"""``from_spec``: an agent from a ``provider/model`` string, as ``--model`` takes it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from .._errors import SiloError
from .._origin import remember
from ._anthropic import anthropic
from ._openai import openai_chat
from ._responses import openai_responses

if TYPE_CHECKING:
    from .._context import AgentContext

__all__ = ["PROVIDERS", "ModelSpec", "from_spec", "parse_model_spec"]

#: Provider names and their factories. OpenAI-compatible servers (vLLM, SGLang, Ollama, a
#: LiteLLM proxy) are ``openai`` with a ``base_url``.
PROVIDERS: dict[str, Callable[..., Callable[[AgentContext], Any]]] = {
    "openai": openai_chat,
    "anthropic": anthropic,
    "openai-responses": openai_responses,
}

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_EXAMPLE = "e.g. openai/gpt-4.1-mini, openai-responses/gpt-4.1-mini or anthropic/claude-sonnet-4-5"


@attrs.frozen
class ModelSpec:
    """A parsed ``[LABEL=]PROVIDER/MODEL``.

    Attributes:
        provider: a key of :data:`PROVIDERS`.
        model: the model name (may hold slashes: ``openai/Qwen/Qwen3-8B``).
        label: the ``LABEL=`` part, or None.
    """

    provider: str
    model: str
    label: str | None = None

    @property
    def name(self) -> str:
        """How runs and reports name this agent: the label, else ``provider/model``."""
        return self.label or f"{self.provider}/{self.model}"


def _invalid(spec: str, why: str) -> SiloError:
    return SiloError("model_invalid", f'Model "{spec}" {why}', {"spec": spec})


def parse_model_spec(spec: str, *, allow_label: bool = False) -> ModelSpec:
    """Parse ``PROVIDER/MODEL`` (or ``LABEL=PROVIDER/MODEL`` with ``allow_label``).

    Raises:
        SiloError: ``model_invalid`` for a malformed spec or an unknown provider.
    """
    if not isinstance(spec, str):
        raise _invalid(repr(spec), f"is not a string; pass PROVIDER/MODEL ({_EXAMPLE}).")
    text, label = spec.strip(), None
    head, sep, rest = text.partition("=")
    if allow_label and sep and "/" not in head:
        if not _LABEL.match(head):
            raise _invalid(spec, "has a bad label: use letters, digits, '.', '_' and '-'.")
        label, text = head, rest.strip()
    provider, slash, model = text.partition("/")
    provider, model = provider.strip().lower(), model.strip()
    if not slash or not provider or not model:
        raise _invalid(spec, f"is not PROVIDER/MODEL ({_EXAMPLE}).")
    if provider not in PROVIDERS:
        known = ", ".join(sorted(PROVIDERS))
        raise _invalid(
            spec,
            f'names an unknown provider "{provider}"; use one of: {known} (vLLM, SGLang, '
            "Ollama and other OpenAI-compatible servers: openai/MODEL with a base URL).",
        )
    return ModelSpec(provider, model, label)


def from_spec(spec: str, **options: Any) -> Callable[[AgentContext], Any]:
    """The agent for ``"provider/model"``: ``openai_chat``, ``openai_responses`` or ``anthropic``.

    Args:
        spec: ``openai/MODEL``, ``openai-responses/MODEL`` or ``anthropic/MODEL``; the model
            part may hold slashes.
        **options: the keywords of :func:`openai_chat` (``base_url``, ``max_turns``, ...).

    Returns:
        ``async def agent(ctx)``.

    Raises:
        SiloError: ``model_invalid`` for a malformed spec, an unknown provider, a missing SDK
            (naming the ``pip install`` line) or a missing key.
        ValueError: an invalid keyword value.
    """
    parsed = parse_model_spec(spec)
    agent = PROVIDERS[parsed.provider](parsed.model, **options)
    # Sent to other processes (Ray workers) as this call, not as its SDK client.
    return remember(agent, from_spec, spec, **options)
