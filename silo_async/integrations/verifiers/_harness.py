"""The harness: the model's tool loop, in-process, every model call through verifiers' endpoint.

verifiers lets a harness run its loop in-process instead of launching a program, as long as
each model call goes through the rollout's interception endpoint (which records the trace).
This one asks the model (OpenAI Chat Completions at ``endpoint``) with the episode's tools
plus ``submit``, runs each tool call through the episode, and ends on a reply without a tool
call (its text is the answer), on ``submit``, when the episode ends at a limit, or after
``max_turns`` replies.
"""

from __future__ import annotations

import json
from typing import Any

import verifiers.v1 as vf
from openai import AsyncOpenAI
from verifiers.v1.runtimes import ProgramResult

from ..._jsonutil import compact_json
from ._episodes import Session, session

__all__ = ["SiloHarness", "SiloHarnessConfig"]

_SUBMIT = {
    "type": "function",
    "function": {
        "name": "submit",
        "description": "Submit your final answer and end the episode.",
        "parameters": {
            "type": "object",
            "properties": {"answer": {"type": "string", "description": "Your final answer."}},
            "required": ["answer"],
        },
    },
}


class SiloHarnessConfig(vf.HarnessConfig):
    """The harness's config (``--env.agent.harness.*``)."""

    id: str = "silo_async_verifiers"
    max_turns: int = 50


def _tools(found: Session) -> list[dict[str, Any]]:
    specs = [
        {
            "type": "function",
            "function": {
                "name": s.name,
                "description": s.description,
                "parameters": s.input_schema,
            },
        }
        for s in found.tools
    ]
    return [*specs, _SUBMIT]


def _arguments(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {"_unparsed": raw}  # silo's validation names the problem to the model
    return value if isinstance(value, dict) else {"_unparsed": raw}


class SiloHarness(vf.Harness[SiloHarnessConfig]):
    """The model plays the episode through its tools; silo validates and records every call."""

    NEEDS_CONTAINER = False
    EXECUTES_CODE = False

    async def launch(
        self,
        ctx: Any,
        trace: Any,
        runtime: Any,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: Any,
        tool_interception_url: str | None = None,
    ) -> Any:
        """Play the rollout's episode; a synthetic program result (the loop ran here)."""
        found = session(trace.state.episode)
        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt if isinstance(prompt, str) else ""})
        client = AsyncOpenAI(base_url=endpoint, api_key=secret)
        try:
            await self._loop(client, ctx.model, found, messages)
        finally:
            await client.close()
        return ProgramResult(exit_code=0, stdout="", stderr="")

    async def _loop(
        self, client: Any, model: str, found: Session, messages: list[dict[str, Any]]
    ) -> None:
        tools = _tools(found)
        for _ in range(self.config.max_turns):
            completion = await client.chat.completions.create(
                model=model, messages=messages, tools=tools
            )
            message = completion.choices[0].message
            usage = completion.usage
            calls = message.tool_calls or []
            await found.record_model_step(
                model=completion.model,
                input_tokens=usage.prompt_tokens if usage else None,
                output_tokens=usage.completion_tokens if usage else None,
                stop_reason=completion.choices[0].finish_reason,
                message={
                    "role": "assistant",
                    "content": message.content,
                    "toolCalls": [
                        {
                            "id": c.id,
                            "name": c.function.name,
                            "input": _arguments(c.function.arguments),
                        }
                        for c in calls
                    ],
                },
            )
            messages.append(message.model_dump(exclude_none=True))
            if not calls:
                found.answer = message.content
                return
            for call in calls:
                arguments = _arguments(call.function.arguments)
                if call.function.name == "submit" and isinstance(arguments.get("answer"), str):
                    found.answer = arguments["answer"]
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": "Submitted."}
                    )
                    return
                result = await found.call_tool(call.function.name, arguments)
                text = (
                    result.output if isinstance(result.output, str) else compact_json(result.output)
                )
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
                if found.held.episode.ended:
                    return
