"""Loading a provider SDK on demand, and what every SDK client of a rollout shares.

Nothing here imports ``openai`` or ``anthropic`` at module level: ``import silo_async.agents``
stays cheap, and the SDK is imported only by the factory that needs it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import math
import os
import ssl
from collections.abc import AsyncIterator, Callable
from types import ModuleType
from typing import Any

import anyio
import attrs

from .._errors import SiloError
from .._install import install_line

__all__ = [
    "PLACEHOLDER_KEY",
    "ModelSettings",
    "check_client",
    "import_sdk",
    "resolve_key",
    "rollout_client",
    "ssl_context",
]

#: Sent as the API key to a ``base_url`` server when no key is configured: the SDKs refuse to
#: send a request without one, and local servers (vLLM, Ollama, ScriptedModelServer) ignore it.
PLACEHOLDER_KEY = "silo-async-no-key"


def import_sdk(provider: str, module: str) -> ModuleType:
    """The SDK module ``module`` for ``provider``, or ``model_invalid`` naming the install line.

    Raises:
        SiloError: ``model_invalid`` when the SDK is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SiloError(
            "model_invalid",
            f'The {provider} provider needs the "{module}" SDK, which is not installed: '
            f"{install_line(module)}.",
            {"provider": provider, "missing": module},
        ) from exc


@functools.cache
def ssl_context() -> ssl.SSLContext:
    """One TLS context for every client of the process (SDK defaults: certifi, SSL_CERT_*).

    Building it is ~40 ms; a client per rollout reusing it costs ~0.1 ms, so every rollout
    can own (and close) its client without paying for the certificate store again.
    """
    import httpx2  # the SDKs' own HTTP client: present whenever an SDK is

    context: ssl.SSLContext = httpx2.create_ssl_context()
    return context


def resolve_key(
    provider: str, api_key: str | None, key_var: str, base_url: str | None, url_var: str
) -> str | None:
    """The key to give the SDK: ``api_key``, None (the SDK reads ``key_var``) or a placeholder.

    Raises:
        SiloError: ``model_invalid`` when there is no key and no ``base_url`` server.
    """
    if api_key:
        return api_key
    if os.environ.get(key_var):
        return None
    if base_url or os.environ.get(url_var):
        return PLACEHOLDER_KEY
    raise SiloError(
        "model_invalid",
        f"No API key for {provider}: set {key_var}, pass api_key=..., or point base_url "
        "(--base-url) at a server that needs none.",
        {"provider": provider, "missing": key_var},
    )


def _positive_int(name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")


@attrs.frozen
class ModelSettings:
    """The keywords every model agent takes, checked once.

    Attributes:
        model: the model name the provider knows.
        base_url: the server (None: the provider's own, or the SDK's ``*_BASE_URL`` variable).
        api_key: the key, or None for the SDK's variable (or a placeholder with ``base_url``).
        client: an SDK client to use as-is (never closed by the agent); None builds one per
            rollout.
        system: the system prompt, if any.
        max_turns: model responses before the loop stops.
        max_output_tokens: the per-response output cap sent to the provider.
        temperature: sampling temperature, if any.
        max_retries: the SDK's own retries of a failed request.
        request_timeout: seconds per HTTP request (the SDK's ``timeout``).
        policy_version: stamped as ``policyVersion`` (its ``str()``) on every model step.
    """

    model: str
    base_url: str | None = None
    api_key: str | None = None
    client: Any = None
    system: str | None = None
    max_turns: int = 50
    max_output_tokens: int | None = None
    temperature: float | None = None
    max_retries: int = 2
    request_timeout: float = 120.0
    policy_version: str | None = attrs.field(default=None, converter=attrs.converters.optional(str))

    def system_for(self, ctx: Any) -> str | None:
        """The system prompt for one rollout: the environment's policy, then ``system``.

        ``ctx.policy`` (an :class:`~silo_async.Environment`'s ``policy=``) comes first, a blank
        line, then the agent's own ``system=``; either alone is the prompt; neither is ``None``.
        """
        parts = [p for p in (getattr(ctx, "policy", None), self.system) if p]
        return "\n\n".join(parts) if parts else None

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError(f"model must be a non-empty string, got {self.model!r}.")
        _positive_int("max_turns", self.max_turns, 1)
        _positive_int("max_retries", self.max_retries, 0)
        if self.max_output_tokens is not None:
            _positive_int("max_output_tokens", self.max_output_tokens, 1)
        timeout = self.request_timeout
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"request_timeout must be a number > 0, got {timeout!r}.")
        temperature = self.temperature
        if temperature is not None and (
            isinstance(temperature, bool)
            or not isinstance(temperature, int | float)
            or not math.isfinite(temperature)
        ):
            raise ValueError(f"temperature must be a finite number, got {temperature!r}.")


#: Seconds a rollout's client gets to close its connections, even while being cancelled.
CLOSE_TIMEOUT = 5.0


@contextlib.asynccontextmanager
async def rollout_client(given: Any, build: Callable[[], Any]) -> AsyncIterator[Any]:
    """The SDK client of one rollout: ``given`` as-is, or a fresh one closed at the end.

    A client per rollout keeps connections inside the event loop that made them (a rollout
    never reuses a socket of another loop), and with the shared TLS context it is cheap.
    """
    if given is not None:
        yield given
        return
    client = build()
    try:
        yield client
    finally:
        with anyio.move_on_after(CLOSE_TIMEOUT, shield=True):
            await client.close()


def check_client(client: Any, base_url: str | None, api_key: str | None) -> None:
    """A given client carries its own server and key: refuse a second, conflicting one."""
    if client is not None and (base_url is not None or api_key is not None):
        raise ValueError(
            "client= already has its server and key; pass base_url/api_key to the client "
            "instead of the agent."
        )
