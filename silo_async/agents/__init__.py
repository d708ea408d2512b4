"""Ready-made model agents: the loop everyone writes, on the official SDKs (docs/models.md).

``openai_chat`` speaks Chat Completions (OpenAI and every compatible server: vLLM, SGLang,
Ollama, a LiteLLM proxy), ``openai_responses`` OpenAI's Responses API, ``anthropic`` the
Messages API; ``from_spec("provider/model")`` picks
one. Each returns an ordinary ``async def agent(ctx)``. The SDKs are optional extras
(``pip install 'silo_async[openai]'``, ``'silo_async[anthropic]'``) imported only when a
factory is called.

Agents written as code are loaded from a spec by ``silo_async.agents._load`` (a file, a file's
attribute, or ``module:name``): the CLI's ``--agent``, and a resume rebuilding the agents its
``eval.json`` names.
"""

from __future__ import annotations

from ._anthropic import anthropic as anthropic
from ._openai import openai_chat as openai_chat
from ._responses import openai_responses as openai_responses
from ._spec import from_spec as from_spec

__all__ = ["anthropic", "from_spec", "openai_chat", "openai_responses"]
