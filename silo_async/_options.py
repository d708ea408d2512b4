"""RunOptions: how a rollout runs, beside what it runs — one value, resolved once.

What a rollout runs is its environment, its task and its agent. How it runs — its limits, the
faults injected into its calls, who plays a conversational task's user — is one frozen value,
:class:`RunOptions`, made once where a public entry point is called and handed down unchanged:
``run``, ``run_many``, ``episode``, ``evaluate`` (and so its executors and Ray workers) all put
it in the rollout's :class:`~silo_async._setup.RolloutSetup`, which the rollout core reads.

The entry points that had keywords for these (``max_tool_calls=``, ``timeout=``,
``token_limit=``, ``limits=``, ``faults=``, ``user=``) keep them as sugar; each also takes
``options=``, and :func:`resolve_options` is the one place the two forms meet.

**Adding an option** is one field of :class:`RunOptions` (with its default, its type and a line
in the docstring): every entry point passes it on through ``options=``, and the rollout reads it
as ``setup.options.<name>``. No signature changes. Only when it must be recorded (``run.json``,
``eval.json``) or given on the command line is there more to write, and that is where.
"""

from __future__ import annotations

import attrs

from ._faults import Faults, resolve_faults
from ._limits import DEFAULT_LIMITS, Limits, resolve_limits
from ._user import UserFactory

__all__ = ["DEFAULT_OPTIONS", "RunOptions", "resolve_options"]


def _limits(value: Limits) -> Limits:
    if not isinstance(value, Limits):
        raise TypeError(f"limits must be a silo.Limits, got {type(value).__name__}.")
    return value


def _version(value: object) -> str | None:
    return None if value is None else str(value)


@attrs.frozen(kw_only=True)
class RunOptions:
    """How a rollout runs: one value, passed as ``options=`` (or as the keywords it replaces).

    ``silo.run(env, task, agent, options=silo.RunOptions(limits=silo.Limits(timeout=60),
    faults="latency:p=0.1"))`` is ``silo.run(env, task, agent, timeout=60,
    faults="latency:p=0.1")``. An eval's rollouts, an episode and a served episode take the
    same value.

    Attributes:
        limits: what one rollout may spend (:class:`~silo_async.Limits`).
        faults: the faults injected into its tool calls (a :class:`~silo_async.Faults`, or a
            SPEC string read with seed 0; ``None``: none).
        user: for a task with a user, a function of the task returning a fresh
            :class:`~silo_async.User` for each rollout (``None``: the task's scripted user).
        policy_version: stamped as ``policyVersion`` (its ``str()``) on every ``model_step`` of
            the rollout that has none, a hand-written agent's included (``None``: no stamp).
        otel: export the finished rollout as OpenTelemetry GenAI spans over OTLP (the
            ``otel`` extra; ``SILO_OTEL=1`` does it for every rollout of the process).

    Raises:
        TypeError: ``limits`` is not a :class:`~silo_async.Limits`, or ``faults`` is neither a
            :class:`~silo_async.Faults` nor a string.
        SiloError: ``faults_invalid`` for a SPEC that cannot be read.
    """

    limits: Limits = attrs.field(default=DEFAULT_LIMITS, converter=_limits)
    faults: Faults | None = attrs.field(default=None, converter=resolve_faults)
    user: UserFactory | None = None
    policy_version: str | None = attrs.field(default=None, converter=_version)
    otel: bool = False


#: A rollout nobody configured.
DEFAULT_OPTIONS = RunOptions()


def resolve_options(
    options: RunOptions | None,
    *,
    limits: Limits | None = None,
    max_tool_calls: int = DEFAULT_LIMITS.max_tool_calls,
    timeout: float | None = DEFAULT_LIMITS.timeout,
    token_limit: int | None = DEFAULT_LIMITS.token_limit,
    faults: Faults | str | None = None,
    user: UserFactory | None = None,
    defaults: Limits = DEFAULT_LIMITS,
) -> RunOptions:
    """The one :class:`RunOptions` of a call that takes ``options=`` or the keyword sugar.

    Keywords left at their defaults beside ``options=`` are fine; one given beside it is
    ambiguous and refused. ``defaults`` are the limit keywords' defaults in the caller's
    signature, when they are not :data:`~silo_async._limits.DEFAULT_LIMITS`'.

    Raises:
        TypeError: ``options`` is not a :class:`RunOptions`, is given together with a keyword,
            or ``limits=`` is given together with a limit keyword.
        ValueError: a keyword limit of the wrong kind.
        SiloError: ``faults_invalid`` for a SPEC that cannot be read.
    """
    resolved = resolve_limits(limits, max_tool_calls, timeout, token_limit, defaults=defaults)
    if options is None:
        return RunOptions(limits=resolved, faults=faults, user=user)
    if not isinstance(options, RunOptions):
        raise TypeError(f"options must be a silo.RunOptions, got {type(options).__name__}.")
    given = [
        name
        for name, value in (
            ("limits", limits is not None or resolved != defaults),
            ("faults", faults is not None),
            ("user", user is not None),
        )
        if value
    ]
    if given:
        raise TypeError(
            "Give how the rollout runs either as options=silo.RunOptions(...) or as keywords, "
            f"not both (got options= and {', '.join(n + '=' for n in given)})."
        )
    return options
