"""``model_step`` events: one per model response, with its tokens, checked to be plain JSON.

A model step is what a transcript is rebuilt from (``runs export``) and what the token limit
counts, so it must hold exactly what was recorded: a field JSON cannot hold is refused at the
call rather than stored as its ``repr``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

__all__ = [
    "NOT_SENT",
    "POLICY_VERSION",
    "REPLAYED",
    "TOKEN_KEYS",
    "ModelStep",
    "ModelStepRecorder",
    "model_step_event",
]

#: Deeper than this, a field is refused rather than walked (a model message is shallow).
_MAX_DEPTH = 64

#: The extra field (``true``) of a model step replayed from a recording when an eval resumed:
#: counted in ``run.json``'s ``resumedModelSteps``, not a request made again.
REPLAYED = "replayed"

#: The keys of a step's exact tokens: the prompt's and the completion's token ids
#: and the sampled tokens' logprobs, as the model server sent them.
TOKEN_KEYS = ("promptTokenIds", "completionTokenIds", "logprobs")

#: The key of the policy (model weights) version that answered.
POLICY_VERSION = "policyVersion"


class _NotSent:
    """The type of :data:`NOT_SENT`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_SENT"


#: What a model adapter that asked its server for token ids passes for a field the server did
#: not send: recorded as ``null`` with its key, so every step of such an adapter has the three
#: :data:`TOKEN_KEYS` (``None`` means "not asked": the keys are left out unless one is given).
NOT_SENT: Any = _NotSent()


class ModelStep(NamedTuple):
    """A ``model_step`` event's fields and the tokens it adds to the rollout's count."""

    event: dict[str, Any]
    input_tokens: int
    output_tokens: int
    replayed: bool = False


class ModelStepRecorder:
    """``record_model_step``, defined once for both drivers.

    :class:`~silo_async.AgentContext` and :class:`~silo_async.Episode` each say in
    ``_record_step`` what a step that reaches the token limit does to them.
    """

    __slots__ = ()

    def record_model_step(
        self,
        *,
        model: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        stop_reason: str | None = None,
        duration_ms: float | None = None,
        attempts: int | None = None,
        message: dict[str, Any] | None = None,
        prompt_token_ids: list[int] | None = None,
        completion_token_ids: list[int] | None = None,
        logprobs: list[float] | None = None,
        policy_version: Any = None,
        **fields: Any,
    ) -> None:
        """Record one model response as a ``model_step`` trace event and count its tokens.

        Once recorded input + output tokens reach the run's ``token_limit``, the rollout stops
        (termination reason ``max_tokens``): in ``run()`` the agent's scope is cancelled, an
        episode finishes itself.

        Args:
            model: the model that answered.
            input_tokens: prompt tokens billed for the response.
            output_tokens: completion tokens billed for the response.
            stop_reason: the provider's stop reason (``tool_calls``, ``end_turn``...).
            duration_ms: wall time of the request, retries included.
            attempts: requests it took (1 + the SDK's retries).
            message: the assistant turn, ``{"role": "assistant", "content": text | None,
                "toolCalls": [{"id", "name", "input"}]}``.
            prompt_token_ids: the prompt's token ids, exactly as the model server sent them
                (``promptTokenIds``; never re-tokenised).
            completion_token_ids: the completion's token ids as sent (``completionTokenIds``).
            logprobs: the sampled tokens' logprobs as sent, one float per completion token
                (``logprobs``). Given any of the three, the step has all three keys (``null``
                for those not given).
            policy_version: the version of the policy that answered, recorded as its ``str()``
                (``policyVersion``); a run's ``policy_version`` stamps the steps without one.
            **fields: extra JSON fields, stored as given.

        Raises:
            TypeError: a field is not JSON, or a token count is not an integer.
            ValueError: a negative token count.
        """
        step = model_step_event(
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            stop_reason=stop_reason,
            duration_ms=duration_ms,
            attempts=attempts,
            message=message,
            tokens=(prompt_token_ids, completion_token_ids, logprobs),
            policy_version=policy_version,
            extra=fields,
        )
        self._record_step(step)

    def _record_step(self, step: ModelStep) -> None:
        raise NotImplementedError


def model_step_event(
    *,
    model: str | None,
    input_tokens: int | None,
    output_tokens: int | None,
    stop_reason: str | None,
    duration_ms: float | None,
    attempts: int | None,
    message: dict[str, Any] | None,
    extra: dict[str, Any],
    tokens: tuple[Any, Any, Any] = (None, None, None),
    policy_version: Any = None,
) -> ModelStep:
    """Build and check the fields of a ``model_step`` event.

    ``tokens`` are the prompt token ids, completion token ids and logprobs (each ``None``: not
    given, or :data:`NOT_SENT`); the three :data:`TOKEN_KEYS` are recorded when any is given.

    Raises:
        TypeError: a field is not JSON (or a token count is not an integer, a token id list
            not a list of ints, logprobs not a list of numbers).
        ValueError: a token count or ``attempts`` is negative.
    """
    event: dict[str, Any] = {
        "model": model,
        "usage": {
            "inputTokens": _tokens("input_tokens", input_tokens),
            "outputTokens": _tokens("output_tokens", output_tokens),
        },
        "stopReason": stop_reason,
        "durationMs": duration_ms,
        "attempts": None if attempts is None else _tokens("attempts", attempts),
        "message": message,
    }
    if any(value is not None for value in tokens):
        for key, value, check in zip(TOKEN_KEYS, tokens, _TOKEN_CHECKS, strict=True):
            event[key] = None if value is None or value is NOT_SENT else check(key, value)
    if policy_version is not None:
        event[POLICY_VERSION] = str(policy_version)
    for key, value in extra.items():
        if key in event or key in ("seq", "type", "at"):
            raise TypeError(f"record_model_step: {key!r} is not an extra field (it is reserved).")
        event[key] = value
    for key, value in event.items():
        check_json(value, key)
    replayed = extra.get(REPLAYED) is True
    return ModelStep(event, input_tokens or 0, output_tokens or 0, replayed)


def _ids(key: str, value: Any) -> list[int]:
    """Token ids as a list of ints (a tuple is taken as a list), else TypeError."""
    if not isinstance(value, list | tuple) or any(
        isinstance(i, bool) or not isinstance(i, int) for i in value
    ):
        raise TypeError(f"record_model_step: {key} must be a list of ints.")
    return list(value)


def _logprobs(key: str, value: Any) -> list[float]:
    """Logprobs as a list of numbers (kept as sent: ints stay ints), else TypeError."""
    if not isinstance(value, list | tuple) or any(
        isinstance(v, bool) or not isinstance(v, int | float) for v in value
    ):
        raise TypeError(f"record_model_step: {key} must be a list of numbers.")
    return list(value)


_TOKEN_CHECKS = (_ids, _ids, _logprobs)


def _tokens(name: str, value: int | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"record_model_step: {name} must be an int, got {type(value).__name__}.")
    if value < 0:
        raise ValueError(f"record_model_step: {name} must be >= 0, got {value}.")
    return value


def check_json(value: Any, where: str, depth: int = 0) -> None:
    """Raise TypeError unless ``value`` is plain JSON (str keys, finite numbers, no cycles)."""
    kind = type(value)
    if value is None or kind in (str, bool, int):
        return
    if kind is float:
        if not math.isfinite(value):
            raise TypeError(f"record_model_step: {where} is {value!r}, which JSON cannot hold.")
        return
    if depth >= _MAX_DEPTH:
        raise TypeError(f"record_model_step: {where} is nested deeper than {_MAX_DEPTH} levels.")
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise TypeError(f"record_model_step: {where} has a non-string key {key!r}.")
            check_json(item, f"{where}.{key}", depth + 1)
        return
    if kind is list or kind is tuple:
        for index, item in enumerate(value):
            check_json(item, f"{where}[{index}]", depth + 1)
        return
    raise TypeError(
        f"record_model_step: {where} is a {kind.__name__}, which is not JSON; pass str, int, "
        "float, bool, None, lists and dicts with str keys."
    )
