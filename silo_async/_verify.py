"""Verifiers: deterministic grading of the final world (and, for answers, of the output).

A verifier body ``fn(final, initial, ctx)`` returns a list of :class:`Check`. ``check`` marks a
required condition (failing one fails the task); ``optional`` adds corroborating evidence that
moves the reward but cannot fail the task. ``reward`` is the share of all checks passed, rounded
to two decimals; ``passed`` means every required check passed.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, overload

import attrs

from ._errors import DefinitionError, SiloError
from ._task import Task

__all__ = [
    "Check",
    "Verifier",
    "VerifierContext",
    "VerifierOutcome",
    "check",
    "optional",
    "score",
    "verifier",
]


@attrs.frozen
class Check:
    """One graded condition."""

    label: str
    passed: bool
    detail: str = ""
    required: bool = True

    def to_dict(self) -> dict[str, Any]:
        """``{label, passed, detail, required}`` as in ``result.json``."""
        return {
            "label": self.label,
            "passed": self.passed,
            "detail": self.detail,
            "required": self.required,
        }


def check(label: str, passed: object, detail: str = "") -> Check:
    """A required check: the task fails unless it passes."""
    return Check(label, bool(passed), str(detail), True)


def optional(label: str, passed: object, detail: str = "") -> Check:
    """An optional check: moves the reward but cannot fail the task."""
    return Check(label, bool(passed), str(detail), False)


@attrs.frozen
class VerifierContext:
    """What a verifier may know besides the two worlds.

    Attributes:
        agent_output: the text form of the agent's output (``""`` when there was none).
        task: the task being graded.
        output: the agent's raw output value.
        conversation: what the agent told the task's user and what it answered, in order:
            ``{"agentText", "reply", "ended"}`` per ``message_user`` turn (empty without a
            user). The final answer is not a turn.
        termination_reason: how the rollout ended, as ``result.json`` says it (``completed``,
            ``max_tool_calls``, ``timeout``, ``max_tokens``, ``agent_error``, ``cancelled``): a
            verifier that holds a rollout cut short to a stricter standard can tell.
        replayer: what :meth:`replay` calls (given by the rollout that grades).
    """

    agent_output: str
    task: Task
    output: Any = None
    conversation: tuple[dict[str, Any], ...] = ()
    termination_reason: str = "completed"
    replayer: Callable[[Any], Awaitable[Any]] | None = attrs.field(
        default=None, kw_only=True, repr=False, eq=False
    )

    async def replay(self, calls: Any) -> Any:
        """The world ``calls`` reach from a fresh copy of the initial world.

        ``calls`` is a list of :class:`~silo_async.Call` (or ``(tool, input)`` pairs), played
        through the environment's tools in order; any tool of its registry may be called, a
        task user's included. Compare the result with
        :func:`silo_async.world.grade.matches`.

        Raises:
            SiloError: ``replay_failed`` when a call answers an error (so the verifier fails:
                an environment fault, never a silent pass or zero), or when this context was
                not given by a rollout.
        """
        if self.replayer is None:
            raise SiloError(
                "replay_failed",
                "ctx.replay() needs the rollout's environment and initial world; this "
                "VerifierContext was made without them (a rollout's verifier gets both).",
            )
        return await self.replayer(calls)


@attrs.frozen
class VerifierOutcome:
    """A scored list of checks."""

    verifier_id: str
    task_id: str
    passed: bool
    reward: float
    required_passed: int
    required_total: int
    failed_required: list[str]
    checks: list[Check]

    @property
    def checks_passed(self) -> int:
        """How many checks passed, required or optional."""
        return sum(1 for c in self.checks if c.passed)


class NoRequiredChecksError(ValueError):
    """A verifier returned no required check: a task cannot be graded on optional evidence."""


def _round_reward(value: float) -> float:
    # Round half up at two decimals; the epsilon absorbs binary noise such as 0.285 -> 0.28499...
    return math.floor(value * 100 + 0.5 + 1e-9) / 100


def score(verifier_id: str, task_id: str, checks: Sequence[Check]) -> VerifierOutcome:
    """Score ``checks``: ``passed`` iff every required check passed; reward = share passed.

    Raises:
        NoRequiredChecksError: no check is required.
    """
    required = [c for c in checks if c.required]
    if not required:
        raise NoRequiredChecksError(
            f"{verifier_id} returned no required checks; "
            "a task cannot be graded on optional evidence alone."
        )
    failed = [c.label for c in required if not c.passed]
    passed_count = sum(1 for c in checks if c.passed)
    return VerifierOutcome(
        verifier_id=verifier_id,
        task_id=task_id,
        passed=not failed,
        reward=_round_reward(passed_count / len(checks)),
        required_passed=len(required) - len(failed),
        required_total=len(required),
        failed_required=failed,
        checks=list(checks),
    )


# ``fn(final, initial, ctx)``; bodies may also declare only ``(final, initial)``.
VerifierFn = Callable[..., Any]


@attrs.frozen(eq=False)
class Verifier:
    """A verifier definition; build one with :func:`verifier`.

    The body may be ``def`` or ``async def`` and may declare only ``(final, initial)``.
    """

    id: str
    task_id: str
    fn: VerifierFn
    name: str = ""
    _arity: int = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if not callable(self.fn):
            raise DefinitionError(f'Verifier "{self.id}" has no callable body.', {"id": self.id})
        try:
            params = inspect.signature(self.fn).parameters.values()
            positional = [
                p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
            arity = 3 if any(p.kind is p.VAR_POSITIONAL for p in params) else len(positional)
        except (TypeError, ValueError):
            arity = 3
        object.__setattr__(self, "_arity", min(arity, 3))

    async def evaluate(self, final: Any, initial: Any, ctx: VerifierContext) -> VerifierOutcome:
        """Run the body and score its checks.

        Raises:
            NoRequiredChecksError: the body returned no required check.
            TypeError: the body returned something other than a list of checks.
        """
        result = self.start(final, initial, ctx)
        if inspect.isawaitable(result):
            result = await result
        return self.outcome(result)

    def start(self, final: Any, initial: Any, ctx: VerifierContext) -> Any:
        """Call the body: its checks, or an awaitable of them for an ``async def`` body."""
        return self.fn(*(final, initial, ctx)[: self._arity])

    def outcome(self, result: Any) -> VerifierOutcome:
        """Score what the body returned.

        Raises:
            NoRequiredChecksError: no check is required.
            TypeError: ``result`` is not a list of checks.
        """
        if not isinstance(result, list | tuple) or not all(isinstance(c, Check) for c in result):
            raise TypeError(
                f"Verifier {self.id} must return a list of silo.check(...)/silo.optional(...) "
                f"results, got {type(result).__name__}."
            )
        return score(self.id, self.task_id, result)


@overload
def verifier(fn: VerifierFn, /) -> Verifier: ...
@overload
def verifier(*, id: str, task_id: str, name: str = "") -> Callable[[VerifierFn], Verifier]: ...
def verifier(
    fn: VerifierFn | None = None,
    /,
    *,
    id: str | None = None,
    task_id: str | None = None,
    name: str = "",
) -> Verifier | Callable[[VerifierFn], Verifier]:
    """Define a verifier from ``fn(final, initial, ctx) -> list[Check]``.

    Args:
        fn: the body, when used as a bare decorator (then ``id`` is required anyway).
        id: the verifier id tasks refer to (``verifierId``).
        task_id: the task this verifier grades.
        name: what the verifier proves (default: the docstring's first line).
    """

    def make(body: VerifierFn) -> Verifier:
        if not id or not task_id:
            raise DefinitionError(
                "@silo.verifier needs id=... and task_id=..., e.g. "
                '@silo.verifier(id="VER-001", task_id="TASK-001").',
                {},
            )
        doc = (inspect.getdoc(body) or "").strip().split("\n")[0]
        return Verifier(id=id, task_id=task_id, fn=body, name=name or doc)

    if fn is not None:
        return make(fn)
    return make
