"""The model loop every provider shares, on provider-neutral turns.

A provider adapter (a :class:`Dialogue`) owns the conversation in its own wire format; the loop
only sees :class:`Turn` values: what the model said, the tool calls it asked for, and the usage
of that one response. So the loop is written once, and the trace is the same for every
provider.

A rollout an eval resumes (:mod:`._replay`) takes its first turns from the interrupted
attempt's recording instead of the model: :func:`recorded_turn` rebuilds each from its
``model_step`` event, and :meth:`Dialogue.restore` puts it back into the adapter's
conversation, exactly as the provider sent it (the step carries the provider's own form of
the turn, ``providerMessage``, whenever ``message`` alone cannot rebuild it).

A request the SDK gave up on (its own retries spent, ``retry-after`` honoured) ends the loop with
:class:`~silo_async.ModelError`: the rollout is then recorded as a model failure
(``invalidReason: "model_error"``), not as the agent's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from .._errors import ModelError, is_model_api_error
from .._modelstep import NOT_SENT, POLICY_VERSION, REPLAYED, TOKEN_KEYS
from ._replay import PROVIDER_MESSAGE, RESUME_EVENT, RecordedStep, current_replay

if TYPE_CHECKING:
    from .._context import AgentContext
    from .._tools import ToolResult

__all__ = ["Call", "Dialogue", "Tokens", "Turn", "converse", "recorded_turn"]


@attrs.frozen(slots=True)
class Call:
    """One tool call the model asked for.

    Attributes:
        id: the provider's id for the call (its result is paired with it).
        name: the tool's name.
        input: the arguments: a dict, or the model's raw text when it was not a JSON object
            (then ``call_tool`` rejects it with ``invalid_input``, which the model sees).
    """

    id: str
    name: str
    input: Any


@attrs.frozen(slots=True)
class Tokens:
    """A response's exact tokens, as the model server sent them (``None``: it sent none).

    Attributes:
        prompt_token_ids: the prompt's token ids.
        completion_token_ids: the completion's token ids.
        logprobs: the sampled tokens' logprobs, one per completion token.
    """

    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None

    def fields(self) -> dict[str, Any]:
        """The ``record_model_step`` keywords: every key kept, what was not sent as null."""
        return {
            "prompt_token_ids": _sent(self.prompt_token_ids),
            "completion_token_ids": _sent(self.completion_token_ids),
            "logprobs": _sent(self.logprobs),
        }


def _sent(value: Any) -> Any:
    return NOT_SENT if value is None else value


@attrs.frozen(slots=True)
class Turn:
    """One model response, provider-neutral.

    Attributes:
        text: the assistant's text (None when it wrote none).
        calls: the tool calls, in the order the model gave them.
        input_tokens: prompt tokens billed for this response (None if the server did not say).
        output_tokens: completion tokens billed for this response.
        stop_reason: the provider's own reason (``tool_calls``, ``end_turn``, ...).
        attempts: HTTP attempts it took: 1 + the SDK's retries.
        duration_ms: wall time of the request, retries included.
        provider_message: the turn in the provider's own form, as the conversation sends it
            back, when :meth:`Dialogue.restore` could not rebuild it from the rest (None
            otherwise): recorded with the step, so a resumed rollout rebuilds it exactly.
        tokens: its exact tokens when the adapter asked for them (None: not asked).
    """

    text: str | None
    calls: Sequence[Call]
    input_tokens: int | None
    output_tokens: int | None
    stop_reason: str | None
    attempts: int
    duration_ms: float
    provider_message: dict[str, Any] | None = None
    tokens: Tokens | None = None

    def message(self) -> dict[str, Any]:
        """The assistant turn in the trace's one shape (``model_step.message``)."""
        return {
            "role": "assistant",
            "content": self.text,
            "toolCalls": [{"id": c.id, "name": c.name, "input": c.input} for c in self.calls],
        }


class Dialogue(Protocol):
    """A conversation in one provider's wire format."""

    async def ask(self) -> Turn:
        """Send the conversation so far; the model's next response."""
        ...

    def answered(self, turn: Turn, results: Sequence[ToolResult]) -> None:
        """Append ``turn`` and the results of its calls (same order) to the conversation."""
        ...

    def restore(self, turn: Turn) -> None:
        """Take ``turn`` (a recorded response) as the model's next one, instead of asking.

        ``answered`` then appends it as if :meth:`ask` had returned it.
        """
        ...


def recorded_turn(step: RecordedStep) -> Turn:
    """The :class:`Turn` a recorded ``model_step`` event stands for."""
    event = step.event
    message, usage = event["message"], event.get("usage") or {}
    return Turn(
        text=message.get("content"),
        calls=[Call(c["id"], c["name"], c.get("input")) for c in message["toolCalls"]],
        input_tokens=usage.get("inputTokens"),
        output_tokens=usage.get("outputTokens"),
        stop_reason=event.get("stopReason"),
        attempts=event.get("attempts") or 1,
        duration_ms=event.get("durationMs") or 0.0,
        provider_message=event.get(PROVIDER_MESSAGE),
        tokens=Tokens(*(event.get(key) for key in TOKEN_KEYS)) if TOKEN_KEYS[1] in event else None,
    )


async def converse(
    ctx: AgentContext,
    dialogue: Dialogue,
    model: str,
    max_turns: int,
    policy_version: str | None = None,
) -> Any:
    """Run the model agents' loop and return the output.

    Each response is recorded as a ``model_step`` before its tool calls run (so a token limit
    stops the agent before it acts on a response over budget). The loop ends at a response
    without tool calls (its text is the output) or after ``max_turns`` responses, whose tool
    calls still run; then the last text so far is the output, kept current with
    ``set_output`` so a stopped rollout is graded on it too.

    In a rollout that resumes a recording (:func:`~._replay.current_replay`), the recorded
    responses come first, each going through the same steps (recorded again, marked
    ``"replayed": true``; its tool calls run into this rollout's world); a replayed call that
    returns something else than recorded ends the replay, and the model is asked from there.

    Each step carries the response's exact tokens when the adapter asked for them
    (:class:`Tokens`) and ``policy_version`` when given (a replayed step: as recorded).
    """
    replay = current_replay()
    last_text: str | None = None
    for _ in range(max_turns):
        recorded = replay.next_step() if replay is not None else None
        extra: dict[str, Any] = {}
        if recorded is None:
            turn = await ask(dialogue, model)
        else:
            turn = recorded_turn(recorded)
            dialogue.restore(turn)
            extra[REPLAYED] = True
        if turn.provider_message is not None:
            extra[PROVIDER_MESSAGE] = turn.provider_message
        if turn.tokens is not None:
            extra.update(turn.tokens.fields())
        version = policy_version if recorded is None else recorded.event.get(POLICY_VERSION)
        ctx.record_model_step(
            model=model if recorded is None else recorded.event.get("model") or model,
            input_tokens=turn.input_tokens,
            output_tokens=turn.output_tokens,
            stop_reason=turn.stop_reason,
            duration_ms=turn.duration_ms,
            attempts=turn.attempts,
            message=turn.message(),
            policy_version=version,
            **extra,
        )
        if turn.text is not None:
            last_text = turn.text
            ctx.set_output(last_text)
        if not turn.calls:
            return turn.text
        results = [await ctx.call_tool(call.name, call.input) for call in turn.calls]
        if recorded is not None and replay is not None and not replay.agrees(recorded, results):
            ctx._note(RESUME_EVENT, {"fromRunId": replay.run_id, "diverged": replay.diverged})
        dialogue.answered(turn, results)
    return last_text


async def ask(dialogue: Dialogue, model: str) -> Turn:
    """The model's next response; an API error the SDK gave up on becomes a ModelError."""
    try:
        return await dialogue.ask()
    except Exception as exc:
        if not is_model_api_error(exc) or isinstance(exc, ModelError):
            raise
        status = getattr(exc, "status_code", None)
        raise ModelError(
            f"{type(exc).__name__}: {exc} (the model API failed after the SDK's retries)",
            {"model": model, "type": type(exc).__name__, "status": status},
        ) from exc
