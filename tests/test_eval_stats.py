"""Eval statistics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from silo_async.eval import RolloutRecord, pass_at_k, pass_hat_k, wilson_interval
from silo_async.eval._report._compare import compare
from silo_async.eval._report._stats import (
    agent_stats,
    default_ks,
    group_stats,
    mean_interval,
    t_quantile_975,
)


def rec(task: str, agent: str, passed: bool, reward: float, **kw: object) -> RolloutRecord:
    fields: dict[str, object] = {
        "task_id": task,
        "agent": agent,
        "run": 1,
        "run_id": "r",
        "run_dir": None,
        "passed": passed,
        "reward": reward,
        "termination_reason": "completed",
        "tool_calls": 2,
        "tool_errors": 0,
        "tool_faults": 0,
        "verifier_error": False,
        "error": None,
        "failed_required": [],
        "checks_passed": 1,
        "checks_total": 1,
        "duration_ms": 10.0,
    }
    fields.update(kw)
    return RolloutRecord(**fields)  # type: ignore[arg-type]


def test_pass_at_k_hand_values() -> None:
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert pass_at_k(10, 3, 3) == pytest.approx(1 - 35 / 120)  # 1 - C(7,3)/C(10,3)
    assert pass_at_k(5, 2, 4) == 1.0  # fewer than k failures: some draw must pass
    assert pass_at_k(5, 0, 5) == 0.0
    assert pass_at_k(5, 5, 1) == 1.0


def test_pass_hat_k_hand_values() -> None:
    assert pass_hat_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_hat_k(5, 2, 2) == pytest.approx(1 / 10)  # C(2,2)/C(5,2)
    assert pass_hat_k(10, 7, 3) == pytest.approx(35 / 120)  # C(7,3)/C(10,3)
    assert pass_hat_k(5, 2, 3) == 0.0
    assert pass_hat_k(4, 4, 4) == 1.0


def test_estimators_match_binomial_formulas() -> None:
    for n in range(1, 13):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert pass_at_k(n, c, k) == pytest.approx(
                    1 - math.comb(n - c, k) / math.comb(n, k)
                )
                assert pass_hat_k(n, c, k) == pytest.approx(math.comb(c, k) / math.comb(n, k))


def test_estimators_reject_impossible_counts() -> None:
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_hat_k(3, 1, 4)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 0)


def test_wilson_interval_known_values() -> None:
    zero = wilson_interval(0, 10)
    assert zero is not None
    assert (zero.low, round(zero.high, 4)) == (0.0, 0.2775)
    half = wilson_interval(5, 10)
    assert half is not None
    assert (round(half.low, 4), round(half.high, 4)) == (0.2366, 0.7634)
    assert half.method == "wilson"
    assert wilson_interval(0, 0) is None


def test_t_interval_hand_value() -> None:
    # mean 0.6, s = sqrt(0.3), n = 5, t(0.975, 4) = 2.776 -> 0.6 ± 0.680 (clipped to [0, 1])
    ci = mean_interval([0.5, 1.0, 0.5, 0.5, 0.5])
    assert ci is not None
    assert ci.method == "t"
    s = math.sqrt(sum((v - 0.6) ** 2 for v in [0.5, 1.0, 0.5, 0.5, 0.5]) / 4)
    assert ci.low == pytest.approx(0.6 - 2.776 * s / math.sqrt(5))
    assert ci.high == pytest.approx(0.6 + 2.776 * s / math.sqrt(5))
    wide = mean_interval([0.0, 1.0, 1.0, 0.0, 1.0])
    assert wide is not None and (wide.low, wide.high) == (0.0, 1.0)
    assert mean_interval([1.0]) is None


def test_t_quantiles() -> None:
    assert t_quantile_975(1) == 12.706
    assert t_quantile_975(30) == 2.042
    assert t_quantile_975(31) == pytest.approx(2.0395, abs=5e-4)
    assert t_quantile_975(60) == pytest.approx(2.0003, abs=5e-4)
    assert t_quantile_975(120) == pytest.approx(1.9799, abs=5e-4)


def test_default_ks() -> None:
    assert default_ks(1) == [1]
    assert default_ks(5) == [1, 2, 3, 4, 5]
    assert default_ks(20) == list(range(1, 21))
    assert default_ks(250) == [1, 2, 3, 4, 5, 10, 20, 50, 100, 200, 250]


def test_group_stats_counts_faulted_rollouts_as_invalid_not_as_failures() -> None:
    fault = {"reward_valid": False, "invalid_reason": "environment_fault"}
    records = [
        rec("T", "a", True, 1.0),
        rec("T", "a", False, 0.5),
        rec("T", "a", False, 0.0, tool_faults=1, termination_reason="agent_error", **fault),
        rec("T", "a", False, 0.0, verifier_error=True, **fault),
        rec("T", "a", True, 1.0, tool_faults=2, tool_calls=4, tool_errors=2, **fault),
    ]
    s = group_stats(records)
    # rates over the 2 valid rollouts only; the 3 faulted ones are counted, never as failures
    assert (s.runs, s.valid, s.invalid, s.passes, s.failures, s.faults) == (5, 2, 3, 1, 1, 3)
    assert s.passes + s.failures + s.invalid == s.runs
    assert s.invalid_reasons == {"model_error": 0, "environment_fault": 3, "worker_lost": 0}
    assert s.pass_rate == pytest.approx(0.5)
    assert s.mean_reward == pytest.approx(0.75)
    assert s.pass_rate_ci == wilson_interval(1, 2)
    assert s.tool_faults == 3 and s.verifier_errors == 1
    assert s.mean_tool_calls == pytest.approx(12 / 5)  # effort counts every rollout
    assert s.mean_tool_errors == pytest.approx(2 / 5)
    assert s.termination_reasons == {"agent_error": 1, "completed": 4}
    assert sorted(s.pass_at_k) == [1, 2]  # k up to the valid rollouts: n = 2, c = 1
    assert s.pass_at_k[2] == 1.0 and s.pass_hat_k[2] == 0.0
    d = s.to_dict()
    assert d["passRateCI"]["method"] == "wilson" and (d["valid"], d["invalid"]) == (2, 3)


def test_a_group_without_valid_rollouts_has_no_rates() -> None:
    lost = {"reward_valid": False, "invalid_reason": "model_error"}
    s = group_stats([rec("T", "a", False, 0.0, **lost), rec("T", "a", False, 0.0, **lost)])
    assert (s.runs, s.valid, s.invalid, s.failures) == (2, 0, 2, 0)
    assert s.pass_rate is None and s.mean_reward is None and not s.rated
    assert s.pass_rate_ci is None and s.reward_ci is None and s.pass_at_k == {}
    d = s.to_dict()
    assert d["passRate"] is None and d["meanReward"] is None
    assert d["invalidReasons"]["model_error"] == 2


def test_agent_pass_at_k_is_mean_over_tasks() -> None:
    t1 = [rec("T1", "a", p, float(p)) for p in (True, False, False, False)]  # c=1, n=4
    t2 = [rec("T2", "a", p, float(p)) for p in (True, True, True, False)]  # c=3, n=4
    s = agent_stats({"T1": t1, "T2": t2})
    assert s.runs == 8 and s.passes == 4
    assert s.pass_at_k[2] == pytest.approx((pass_at_k(4, 1, 2) + pass_at_k(4, 3, 2)) / 2)
    assert s.pass_hat_k[2] == pytest.approx((0.0 + 3 / 6) / 2)
    short = agent_stats({"T1": t1, "T2": t2[:2]})  # k only up to the smallest task's n
    assert sorted(short.pass_at_k) == [1, 2]


def test_compare_marks_the_better_agent_and_ranks() -> None:
    records = [
        *(rec("T1", "good", True, 1.0) for _ in range(3)),
        *(rec("T1", "bad", False, 0.3) for _ in range(3)),
        *(rec("T2", "good", True, 1.0) for _ in range(3)),
        *(rec("T2", "bad", True, 1.0) for _ in range(3)),
        *(rec("T3", "good", False, 0.2) for _ in range(3)),
        *(rec("T3", "bad", False, 0.5) for _ in range(3)),
    ]
    c = compare(records, ["T1", "T2", "T3"], ["bad", "good"])
    assert [row.best for row in c.rows] == ["good", None, "bad"]  # tie -> no mark; reward breaks
    assert c.ranking == ["good", "bad"]
    assert c.overall_best == "good"
    assert c.overall["good"].passes == 6


def test_compare_handles_missing_cells() -> None:
    c = compare([rec("T1", "a", True, 1.0)], ["T1", "T2"], ["a", "b"])
    assert c.rows[1].cells == {} and c.rows[1].best is None
    assert c.rows[0].best == "a"
    assert c.overall["b"].runs == 0 and c.overall["b"].pass_rate_ci is None
