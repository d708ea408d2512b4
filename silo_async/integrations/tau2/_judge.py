"""tau2's judge of natural-language assertions, on a model silo's adapters speak.

tau2 asks a fixed model (through LiteLLM) whether a trajectory meets each of a task's
assertions in natural language. Here tau2's own evaluator runs — its prompt, its parsing of the
verdicts — with its one model call routed to the judge model given to ``import tau2
--judge-model PROVIDER/MODEL``: an OpenAI-compatible server (``--judge-base-url``) or
Anthropic, like any silo model agent. The evaluator is synchronous; it runs in a worker thread
and its call comes back to the event loop for the model.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Sequence
from typing import Any, cast

import anyio
import anyio.from_thread
import anyio.to_thread

from ..._context import AgentContext
from ..._tools import ToolResult, ToolSpec

__all__ = ["ModelJudge"]

_CURRENT: contextvars.ContextVar[ModelJudge | None] = contextvars.ContextVar(
    "tau2_judge", default=None
)
_ROUTED = threading.Lock()
_routed = False


class _Prompt:
    """What a model agent's loop reads, for one judging call: no tools, one answer."""

    __slots__ = ("output", "policy", "task", "tools")

    def __init__(self, system: str | None, text: str) -> None:
        self.policy = system
        self.task = text
        self.tools: list[ToolSpec] = []
        self.output: Any = None

    async def call_tool(self, name: str, input: Any = None) -> ToolResult:
        return ToolResult({"code": "tool_not_found", "message": "No tools."}, is_error=True)

    def set_output(self, value: Any) -> None:
        self.output = value

    def record_model_step(self, **_: Any) -> None:
        return None


class _Said:
    """The one field of tau2's assistant message its evaluator reads."""

    def __init__(self, content: str) -> None:
        self.content = content


class ModelJudge:
    """tau2's judge of natural-language assertions, played by ``spec`` (``PROVIDER/MODEL``).

    Args:
        spec: the judge model, as ``--judge-model`` takes it.
        base_url: its server (``--judge-base-url``), if not the provider's own.
    """

    def __init__(self, spec: str, base_url: str | None = None) -> None:
        from ...agents import from_spec  # the adapters import an SDK: only for a judge

        self.spec = spec
        self.base_url = base_url
        self._agent = from_spec(spec, base_url=base_url, max_turns=1)

    async def verdicts(
        self, messages: Sequence[Any], assertions: Sequence[str]
    ) -> list[tuple[str, bool, str]]:
        """``(assertion, met, reasoning)`` for each assertion, as tau2's evaluator reads them."""
        _route()
        checks = await anyio.to_thread.run_sync(_evaluate, self, list(messages), list(assertions))
        return [(str(c.nl_assertion), bool(c.met), str(c.justification)) for c in checks]

    async def answer(self, system: str | None, text: str) -> str:
        """The judge model's reply to one prompt."""
        prompt = _Prompt(system, text)
        said = await self._agent(cast("AgentContext", prompt))
        if not isinstance(said, str):
            said = prompt.output if isinstance(prompt.output, str) else ""
        return said


def _evaluate(judge: ModelJudge, messages: list[Any], assertions: list[str]) -> Any:
    """tau2's evaluator, in a worker thread whose one model call goes to ``judge``."""
    from tau2.evaluator.evaluator_nl_assertions import NLAssertionsEvaluator

    token = _CURRENT.set(judge)
    try:
        return NLAssertionsEvaluator.evaluate_nl_assertions(messages, assertions)
    finally:
        _CURRENT.reset(token)


def _route() -> None:
    """Send tau2's judging call to the judge of the current grading (once per process).

    Outside a silo grading (no judge set) tau2's own call runs as tau2 wrote it.
    """
    global _routed
    with _ROUTED:
        if _routed:
            return
        from tau2.evaluator import evaluator_nl_assertions as module

        original = module.generate

        def generate(*args: Any, **kwargs: Any) -> Any:
            judge = _CURRENT.get()
            if judge is None:
                return original(*args, **kwargs)
            messages = kwargs.get("messages", args[1] if len(args) > 1 else [])
            system = next((m.content for m in messages if m.role == "system"), None)
            text = "\n\n".join(m.content for m in messages if m.role != "system" and m.content)
            return _Said(anyio.from_thread.run(judge.answer, system, text))

        module.generate = generate
        _routed = True
