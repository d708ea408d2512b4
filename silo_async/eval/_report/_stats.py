"""Evaluation statistics: pure functions of rollout records, no I/O.

* Pass rate with a 95% **Wilson score interval** (well-behaved at 0/n and n/n, unlike the
  normal approximation).
* Mean reward with a 95% **Student t interval** (``mean ± t(0.975, n-1) · s / sqrt(n)``, sample
  standard deviation, clipped to the reward range [0, 1]); ``None`` below two rollouts.
* Unbiased ``pass@k = 1 - C(n-c, k) / C(n, k)`` (at least one of k draws passes) and
  ``pass^k = C(c, k) / C(n, k)`` (all k draws pass), for n rollouts of which c passed; over
  several tasks both are the mean of the per-task values.
* Token counts (mean and total) and, with a price table, cost.
* **Valid rollouts only**: a rollout whose reward is not evidence — the
  model API failed, the environment faulted (a tool or the verifier raised), its worker was
  lost — is counted in ``runs`` and ``invalid`` and in no rate: pass rates, mean reward, their
  intervals, pass@k and pass^k are over the valid rollouts, and a group without any has none
  (``None``). ``failures`` counts valid rollouts that did not pass, so
  ``passes + failures + invalid == runs``. Faults injected on purpose never invalidate.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from ..._result import INVALID_REASONS, TERMINATION_REASONS
from ._records import RolloutRecord

__all__ = [
    "GroupStats",
    "Interval",
    "agent_stats",
    "default_ks",
    "group_stats",
    "invalid_counts",
    "mean_interval",
    "pass_at_k",
    "pass_hat_k",
    "reason_counts",
    "t_quantile_975",
    "task_agent_stats",
    "wilson_interval",
]

#: The 97.5% standard normal quantile (two-sided 95%).
Z_975 = 1.959963984540054

# Student t 97.5% quantiles for 1..30 degrees of freedom; beyond, a Cornish-Fisher series.
_T_975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


@attrs.frozen
class Interval:
    """A two-sided 95% confidence interval.

    Attributes:
        low: lower bound.
        high: upper bound.
        method: ``"wilson"`` or ``"t"``.
    """

    low: float
    high: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        """``{"low", "high", "method", "level": 0.95}`` with bounds rounded to 4 decimals."""
        return {
            "low": round(self.low, 4),
            "high": round(self.high, 4),
            "method": self.method,
            "level": 0.95,
        }


def t_quantile_975(df: int) -> float:
    """The 97.5% quantile of Student's t distribution with ``df`` >= 1 degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}.")
    if df <= len(_T_975):
        return _T_975[df - 1]
    z = Z_975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / df + g2 / df**2 + g3 / df**3


def wilson_interval(passes: int, runs: int) -> Interval | None:
    """95% Wilson score interval for ``passes`` successes in ``runs`` trials (None if no runs)."""
    if runs <= 0:
        return None
    p = passes / runs
    z2 = Z_975 * Z_975
    denom = 1 + z2 / runs
    center = (p + z2 / (2 * runs)) / denom
    half = Z_975 * math.sqrt(p * (1 - p) / runs + z2 / (4 * runs * runs)) / denom
    return Interval(max(0.0, center - half), min(1.0, center + half), "wilson")


def mean_interval(values: Sequence[float]) -> Interval | None:
    """95% Student t interval for the mean of ``values`` (None for fewer than two values).

    Bounds are clipped to ``[0, 1]``, the range every reward lies in.
    """
    n = len(values)
    if n < 2:
        return None
    mean = math.fsum(values) / n
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = t_quantile_975(n - 1) * math.sqrt(var / n)
    return Interval(max(0.0, mean - half), min(1.0, mean + half), "t")


def _check_counts(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}.")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: ``1 - C(n-c, k) / C(n, k)``, the chance one of k draws passes.

    Computed as a running product (no huge binomials), exact to float precision.

    Raises:
        ValueError: unless ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    _check_counts(n, c, k)
    if n - c < k:
        return 1.0
    ratio = 1.0
    for i in range(k):
        ratio *= (n - c - i) / (n - i)
    return 1.0 - ratio


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k: ``C(c, k) / C(n, k)``, the chance all of k draws pass.

    Raises:
        ValueError: unless ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    _check_counts(n, c, k)
    if c < k:
        return 0.0
    ratio = 1.0
    for i in range(k):
        ratio *= (c - i) / (n - i)
    return ratio


def default_ks(runs: int) -> list[int]:
    """The k values reported for ``runs`` rollouts per task.

    Every k from 1 to ``runs`` up to 20 runs; beyond, a 1-2-5 ladder (1, 2, 3, 4, 5, 10, 20,
    50, 100, ...) plus ``runs`` itself, so summaries stay small at thousands of runs.
    """
    if runs <= 20:
        return list(range(1, runs + 1))
    ks = {1, 2, 3, 4, 5, runs}
    step = 10
    while step < runs:
        ks.update(x for x in (step, 2 * step, 5 * step) if x < runs)
        step *= 10
    return sorted(ks)


@attrs.frozen
class GroupStats:
    """Statistics of a group of rollouts (one task and agent, or one agent over all tasks).

    Attributes:
        runs: rollouts in the group, valid or not.
        passes: valid rollouts that passed.
        failures: valid rollouts that failed (the agent's failures).
        faults: rollouts with an environment fault (a tool raised, the verifier failed, the
            worker was lost); all of them are invalid.
        pass_rate: ``passes / valid`` (None when no rollout is valid).
        pass_rate_ci: 95% Wilson interval of the pass rate (None without valid rollouts).
        mean_reward: mean reward of the valid rollouts (None when there are none).
        reward_ci: 95% t interval of the mean reward (None below two valid rollouts).
        pass_at_k: ``{k: pass@k}`` over the valid rollouts.
        pass_hat_k: ``{k: pass^k}`` over the valid rollouts.
        mean_tool_calls: mean tool calls per rollout.
        mean_tool_errors: mean rejected calls per rollout.
        tool_faults: tool faults summed over the group.
        verifier_errors: rollouts whose verifier failed.
        termination_reasons: ``{reason: count}``, sorted by reason.
        mean_duration_ms: mean rollout wall time.
        mean_model_steps: mean model responses per rollout.
        mean_input_tokens: mean input tokens per rollout.
        mean_output_tokens: mean output tokens per rollout.
        total_input_tokens: input tokens over the group.
        total_output_tokens: output tokens over the group.
        total_cost: what the group's model steps cost (None without a price table).
        unpriced_tokens: tokens of models the price table does not price.
        invalid: rollouts whose reward is not evidence (in no rate).
        invalid_reasons: ``{reason: count}`` of the invalid ones (every reason, 0 included).
        injected_faults: faults injected on purpose, summed.
        recovered_faults: injected faults the agents recovered from, summed.
    """

    runs: int
    passes: int
    failures: int
    faults: int
    pass_rate: float | None
    pass_rate_ci: Interval | None
    mean_reward: float | None
    reward_ci: Interval | None
    pass_at_k: dict[int, float]
    pass_hat_k: dict[int, float]
    mean_tool_calls: float
    mean_tool_errors: float
    tool_faults: int
    verifier_errors: int
    termination_reasons: dict[str, int]
    mean_duration_ms: float
    mean_model_steps: float = 0.0
    mean_input_tokens: float = 0.0
    mean_output_tokens: float = 0.0
    total_input_tokens: int = 0
    total_output_tokens: int = 0
    total_cost: float | None = None
    unpriced_tokens: int = 0
    invalid: int = 0
    invalid_reasons: dict[str, int] = attrs.field(factory=dict)
    injected_faults: int = 0
    recovered_faults: int = 0

    @property
    def valid(self) -> int:
        """Rollouts whose reward is evidence: the ones every rate is computed from."""
        return self.runs - self.invalid

    @property
    def rated(self) -> bool:
        """The group has rates (some valid rollout)."""
        return self.pass_rate is not None

    @property
    def recovery_rate(self) -> float | None:
        """Injected faults recovered from, per injected fault (None when none was injected)."""
        return self.recovered_faults / self.injected_faults if self.injected_faults else None

    @property
    def mean_cost(self) -> float | None:
        """Mean cost per rollout (None without a price table)."""
        if self.total_cost is None:
            return None
        return self.total_cost / self.runs if self.runs else 0.0

    def sort_key(self) -> tuple[float, float]:
        """Higher is better: pass rate, then mean reward (a group without rates ranks last)."""
        if self.pass_rate is None or self.mean_reward is None:
            return (-1.0, -1.0)
        return (self.pass_rate, self.mean_reward)

    @property
    def ended_early(self) -> dict[str, int]:
        """``{reason: count}`` of rollouts that did not complete (crashes, timeouts, limits)."""
        return {r: n for r, n in self.termination_reasons.items() if r != "completed" and n}

    def to_dict(self) -> dict[str, Any]:
        """JSON form (camelCase keys; k as string keys; floats rounded to 4 decimals)."""
        return {
            "runs": self.runs,
            "passes": self.passes,
            "failures": self.failures,
            "faults": self.faults,
            "valid": self.valid,
            "invalid": self.invalid,
            "invalidReasons": dict(self.invalid_reasons),
            "passRate": _round(self.pass_rate, 4),
            "passRateCI": self.pass_rate_ci.to_dict() if self.pass_rate_ci else None,
            "meanReward": _round(self.mean_reward, 4),
            "rewardCI": self.reward_ci.to_dict() if self.reward_ci else None,
            "passAtK": {str(k): round(v, 4) for k, v in self.pass_at_k.items()},
            "passHatK": {str(k): round(v, 4) for k, v in self.pass_hat_k.items()},
            "meanToolCalls": round(self.mean_tool_calls, 4),
            "meanToolErrors": round(self.mean_tool_errors, 4),
            "toolFaults": self.tool_faults,
            "injectedFaults": self.injected_faults,
            "recoveredFaults": self.recovered_faults,
            "verifierErrors": self.verifier_errors,
            "terminationReasons": reason_counts(self.termination_reasons),
            "meanDurationMs": round(self.mean_duration_ms, 3),
            "meanModelSteps": round(self.mean_model_steps, 4),
            "meanInputTokens": round(self.mean_input_tokens, 2),
            "meanOutputTokens": round(self.mean_output_tokens, 2),
            "totalInputTokens": self.total_input_tokens,
            "totalOutputTokens": self.total_output_tokens,
            "cost": self._cost_dict(),
        }

    def _cost_dict(self) -> dict[str, Any] | None:
        if self.total_cost is None:
            return None
        return {
            "total": round(self.total_cost, 6),
            "mean": round(self.mean_cost or 0.0, 6),
            "unpricedTokens": self.unpriced_tokens,
        }


def reason_counts(counts: Mapping[str, int]) -> dict[str, int]:
    """Every termination reason with its count (0 included), in ``TERMINATION_REASONS`` order.

    A reader can then ask for ``["agent_error"]`` without guarding; a reason this version does
    not know (read from an older or newer index) is kept after the known ones.
    """
    known = {r: counts.get(r, 0) for r in TERMINATION_REASONS}
    return {**known, **{r: n for r, n in sorted(counts.items()) if r not in known}}


def invalid_counts(records: Iterable[RolloutRecord]) -> dict[str, int]:
    """Every invalid reason with its count (0 included), in ``INVALID_REASONS`` order."""
    counts = Counter(r.invalid_reason or "" for r in records if not r.reward_valid)
    known = {reason: counts.pop(reason, 0) for reason in INVALID_REASONS}
    return {**known, **{r or "unknown": n for r, n in sorted(counts.items())}}


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _mean(values: Iterable[float], n: int) -> float:
    return math.fsum(values) / n if n else 0.0


def _base(
    records: Sequence[RolloutRecord], pass_at: dict[int, float], pass_hat: dict[int, float]
) -> GroupStats:
    n = len(records)
    valid = [r for r in records if r.reward_valid]
    v = len(valid)
    passes = sum(1 for r in valid if r.passed)
    rewards = [r.reward for r in valid]
    return GroupStats(
        runs=n,
        passes=passes,
        failures=v - passes,
        faults=sum(1 for r in records if r.env_fault),
        pass_rate=passes / v if v else None,
        pass_rate_ci=wilson_interval(passes, v),
        mean_reward=math.fsum(rewards) / v if v else None,
        reward_ci=mean_interval(rewards),
        pass_at_k=pass_at,
        pass_hat_k=pass_hat,
        mean_tool_calls=_mean((r.tool_calls for r in records), n),
        mean_tool_errors=_mean((r.tool_errors for r in records), n),
        tool_faults=sum(r.tool_faults for r in records),
        verifier_errors=sum(1 for r in records if r.verifier_error),
        termination_reasons=dict(sorted(Counter(r.termination_reason for r in records).items())),
        mean_duration_ms=_mean((r.duration_ms for r in records), n),
        mean_model_steps=_mean((r.model_steps for r in records), n),
        mean_input_tokens=_mean((r.input_tokens for r in records), n),
        mean_output_tokens=_mean((r.output_tokens for r in records), n),
        total_input_tokens=sum(r.input_tokens for r in records),
        total_output_tokens=sum(r.output_tokens for r in records),
        total_cost=_total_cost(records),
        unpriced_tokens=sum(r.unpriced_tokens for r in records),
        invalid=n - v,
        invalid_reasons=invalid_counts(records),
        injected_faults=sum(r.injected_faults for r in records),
        recovered_faults=sum(r.recovered_faults for r in records),
    )


def _total_cost(records: Sequence[RolloutRecord]) -> float | None:
    costs = [r.cost for r in records if r.cost is not None]
    return math.fsum(costs) if costs else None


def group_stats(records: Sequence[RolloutRecord], ks: Iterable[int] | None = None) -> GroupStats:
    """Statistics of the rollouts of **one task** (pass@k over its valid rollouts).

    Args:
        records: the task's rollouts (one agent).
        ks: the k values for pass@k / pass^k (default: :func:`default_ks`); values above the
            number of valid rollouts are skipped.
    """
    valid = [r for r in records if r.reward_valid]
    n = len(valid)
    c = sum(1 for r in valid if r.passed)
    wanted = default_ks(n) if ks is None else [k for k in ks if 1 <= k <= n]
    return _base(
        records,
        {k: pass_at_k(n, c, k) for k in wanted},
        {k: pass_hat_k(n, c, k) for k in wanted},
    )


def agent_stats(
    by_task: Mapping[str, Sequence[RolloutRecord]], ks: Iterable[int] | None = None
) -> GroupStats:
    """Statistics of one agent over several tasks.

    Rates, rewards and counts pool every rollout (rates: every valid one); pass@k and pass^k
    are the mean of the per-task values, for the k values every task with valid rollouts has
    enough valid rollouts for.
    """
    pooled = [r for rs in by_task.values() for r in rs]
    groups = [v for rs in by_task.values() if (v := [r for r in rs if r.reward_valid])]
    if not groups:
        return _base(pooled, {}, {})
    min_n = min(len(rs) for rs in groups)
    wanted = default_ks(min_n) if ks is None else [k for k in ks if 1 <= k <= min_n]
    per_task = [(len(rs), sum(1 for r in rs if r.passed)) for rs in groups]
    pass_at = {
        k: math.fsum(pass_at_k(n, c, k) for n, c in per_task) / len(per_task) for k in wanted
    }
    pass_hat = {
        k: math.fsum(pass_hat_k(n, c, k) for n, c in per_task) / len(per_task) for k in wanted
    }
    return _base(pooled, pass_at, pass_hat)


def task_agent_stats(
    records: Iterable[RolloutRecord], ks: Iterable[int] | None = None
) -> dict[tuple[str, str], GroupStats]:
    """``{(task_id, agent): GroupStats}`` for every pair that has rollouts."""
    groups: dict[tuple[str, str], list[RolloutRecord]] = {}
    for r in records:
        groups.setdefault((r.task_id, r.agent), []).append(r)
    wanted = None if ks is None else list(ks)
    return {key: group_stats(rs, wanted) for key, rs in groups.items()}
