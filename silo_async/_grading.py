"""Grading a finished rollout: its output as text, its verifier, and what it changed.

The verifier always runs, also after a limit, a crash or a cancellation; a verifier that
raises (or times out) gives a failed outcome carrying the error, never a lost run. Everything
here is a plain function of the rollout's final values; :meth:`Rollout.finish` calls them.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import Any

import anyio

from ._diff import pack_diff, state_diff, unpack_diff
from ._jsonutil import Packed, changes, compact_json, output_text, text_form
from ._verify import Verifier, VerifierContext, VerifierOutcome

__all__ = [
    "FINISH_GRACE_S",
    "Graded",
    "finish_grading",
    "outcome_of",
    "rendered_output",
    "start_grading",
    "verifier_event",
    "world_diff",
]

#: A verifier's outcome, or the error that replaced it.
Graded = tuple[VerifierOutcome | None, str | None]

#: How long grading and artifact writing may take once the rollout is over.
FINISH_GRACE_S = 30.0

#: A packed diff larger than this is computed at once rather than kept (memory per result).
PACKED_DIFF_MAX_BYTES = 16_384


def rendered_output(output: Any) -> tuple[str, Any, str | None]:
    """``(text, output, problem)``: the output's text form, and the output graded.

    An output JSON cannot hold (circular, or nested too deeply) is kept as its ``str()``, and
    ``problem`` says so; otherwise ``problem`` is ``None``.
    """
    try:
        return output_text(output), output, None
    except ValueError as exc:
        text = text_form(output)
        problem = f"The agent's output cannot be written as JSON ({exc}); kept as its str()."
        return text, text, problem


def start_grading(
    verifier: Verifier, final: Any, initial: Any, ctx: VerifierContext
) -> Graded | Awaitable[Any]:
    """Call the verifier: a sync body is graded at once, an async one is returned to await."""
    try:
        checks = verifier.start(final, initial, ctx)
        if inspect.isawaitable(checks):
            return checks
        return verifier.outcome(checks), None
    except Exception as exc:
        return None, _failure(verifier, exc)


async def finish_grading(verifier: Verifier, pending: Awaitable[Any]) -> Graded:
    """Await an async verifier body under its own time bound."""
    try:
        with anyio.fail_after(FINISH_GRACE_S):
            checks = await pending
        return verifier.outcome(checks), None
    except TimeoutError:
        return None, f"Verifier {verifier.id} did not finish within {FINISH_GRACE_S:g} s."
    except Exception as exc:
        return None, _failure(verifier, exc)


def _failure(verifier: Verifier, exc: Exception) -> str:
    return f"Verifier {verifier.id} failed: {type(exc).__name__}: {exc}"


def outcome_of(verifier: Verifier, task_id: str, graded: Graded) -> VerifierOutcome:
    """The outcome graded; a verifier that failed counts as nothing passed."""
    outcome, _ = graded
    if outcome is None:
        return VerifierOutcome(verifier.id, task_id, False, 0.0, 0, 0, [], [])
    return outcome


def verifier_event(
    verifier: Verifier, outcome: VerifierOutcome, error: str | None
) -> dict[str, Any]:
    """The fields of the ``verifier_result`` event."""
    fields: dict[str, Any] = {
        "verifierId": verifier.id,
        "passed": outcome.passed,
        "reward": outcome.reward,
        "requiredPassed": outcome.required_passed,
        "requiredTotal": outcome.required_total,
        "failedRequired": list(outcome.failed_required),
    }
    if error is not None:
        fields["error"] = error
    return fields


def world_diff(snapshot: Packed | None, final: Any, initial: Any) -> str | bytes:
    """The state diff, or the packed collections it is computed from when first read.

    Top-level collections whose bytes are unchanged are left out either way. Packed, a diff
    costs nothing until someone reads it (an RL loop reading only rewards never does) and is
    computed from the snapshot taken before the agent acted.
    """
    found = changes(snapshot, final) if snapshot is not None else None
    if found is None:  # not a dict world of plain data: compared the slow way, now
        return compact_json(state_diff(initial, final))
    packed = pack_diff(*found)
    return packed if len(packed) <= PACKED_DIFF_MAX_BYTES else unpack_diff(packed)
