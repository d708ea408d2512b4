"""What ``openai_chat`` and ``anthropic`` share: turning settings and an adapter into an agent.

A provider says which SDK it loads and how (:class:`Provider`); its factory checks its keywords
into :class:`~silo_async.agents._sdk.ModelSettings` and says how to start its :class:`Dialogue`.
Everything else — the client of each rollout, the loop, the run's label, continuing a recording
when an eval resumes — is the same for every provider and lives here once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from ._loop import Dialogue, converse
from ._replay import replays
from ._sdk import ModelSettings, check_client, import_sdk, resolve_key, rollout_client, ssl_context

if TYPE_CHECKING:
    from .._context import AgentContext

__all__ = ["Provider", "model_agent"]


@attrs.frozen
class Provider:
    """How to reach one provider's SDK.

    Attributes:
        name: the provider as ``--model`` names it (``openai``), also the run's label prefix.
        factory: the factory's name, given to the agent function (``openai_chat``).
        module: the SDK module to import, also the extra that installs it.
        client_class: the SDK's async client class (``AsyncOpenAI``).
        key_var: the environment variable the SDK reads its key from.
        url_var: the environment variable the SDK reads its server from.
    """

    name: str
    factory: str
    module: str
    client_class: str
    key_var: str
    url_var: str


def model_agent(
    provider: Provider,
    settings: ModelSettings,
    dialogue: Callable[[Any, AgentContext], Dialogue],
) -> Callable[[AgentContext], Any]:
    """``async def agent(ctx)`` that runs ``settings.model`` through ``provider``'s SDK.

    Args:
        provider: the SDK to load (only when no client is given, and only once, here).
        settings: the factory's checked keywords.
        dialogue: starts the adapter of one rollout from its SDK client and context.

    Raises:
        SiloError: ``model_invalid`` when the SDK is missing or no key is set.
        ValueError: a client given together with ``base_url`` or ``api_key``.
    """
    given = settings.client
    check_client(given, settings.base_url, settings.api_key)
    # Load the SDK and resolve the key now, so a missing one fails when the agent is made,
    # not inside the first rollout.
    build = _builder(provider, settings) if given is None else None

    async def agent(ctx: AgentContext) -> Any:
        async with rollout_client(given, build) as session:  # type: ignore[arg-type]
            return await converse(
                ctx,
                dialogue(session, ctx),
                settings.model,
                settings.max_turns,
                settings.policy_version,
            )

    agent.__name__ = provider.factory
    agent.__qualname__ = f"{provider.name}/{settings.model}"  # the label, as --model names it
    return replays(agent)


def _builder(provider: Provider, settings: ModelSettings) -> Callable[[], Any]:
    """A function that builds a fresh SDK client for one rollout."""
    sdk = import_sdk(provider.name, provider.module)
    key = resolve_key(
        provider.name, settings.api_key, provider.key_var, settings.base_url, provider.url_var
    )
    client_class = getattr(sdk, provider.client_class)
    tls = ssl_context()

    def build() -> Any:
        return client_class(
            api_key=key,
            base_url=settings.base_url,
            max_retries=settings.max_retries,
            timeout=settings.request_timeout,
            http_client=sdk.DefaultAsyncHttpxClient(verify=tls),
        )

    return build
