"""``POST /aggregate_metrics`` of ``serve --protocol nemo-gym``: a collection's metrics.

After a rollout collection, NeMo Gym sends its resources server the verify responses
(``{"verify_responses": [...]}``, each stripped of its heavy fields but keeping
``response.usage``) and logs what comes back: NeMo Gym's ``AggregateMetrics``. Its resources
servers answer with their reward profile, and so does this one:

* every numeric field of a verify response (a bool counts as 0 or 1; ``response.usage``'s
  counts too; ``_``-prefixed fields, such as the task and rollout indexes, do not) is a column;
* ``group_level_metrics``: per task (``_ng_task_index``, in order), ``mean/``, ``max/``,
  ``min/``, ``median/`` and ``std/`` (sample standard deviation) of each column, with the
  rollout counts; where no column has two values, ``std/`` is 0 for the columns every rollout
  has;
* ``agent_metrics``: the same over every rollout, and ``num_repeats``; ``key_metrics``: its
  ``mean/`` entries;
* a rollout with ``mask_sample`` set is left out of the statistics and counted in
  ``coverage/...`` entries (in both);
* when tasks ran more than once, ``repeat_level_metrics`` has one row per repeat
  (``_ng_rollout_index``: its tasks' ``mean/``, ``median/``, ``std/``, ``sem/``, ``min/``,
  ``max/``, ``p25/``, ``p75/`` of each column) and ``agent_metrics`` the spread of each
  repeat's ``mean/`` across repeats (``mean_across_repeats/mean/reward``, ``median_``,
  ``std_``, ``min_``, ``max_``, ``se_``, ``ci_low_95_``, ``ci_high_95_``).

Both carry 95% Student t intervals (``ci_low_95/``, ``ci_high_95/``; ``mean ± t·sem``, from
two values on) with the quantile silo's eval report uses (its table has three decimals, where
NeMo Gym asks scipy: the bounds agree to about 1e-4). Not computed: ``perf_summary``, and a
group's copy of its row and list of rollouts (``sample``, ``rollout_infos``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from typing import Any

from ..eval._report._stats import t_quantile_975

__all__ = ["aggregate_metrics"]

TASK_INDEX = "_ng_task_index"
ROLLOUT_INDEX = "_ng_rollout_index"
MASK = "mask_sample"
_STATS = ("mean", "max", "min", "median", "std")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and not (isinstance(value, float) and math.isnan(value)):
        return float(value)
    return None


def _columns(response: dict[str, Any]) -> dict[str, float]:
    """A verify response's numeric fields (its ``response.usage`` counts among them)."""
    inner = response.get("response")
    usage = inner.get("usage") if isinstance(inner, dict) else None
    merged = {**response, **(usage if isinstance(usage, dict) else {})}
    found = {}
    for key, value in merged.items():
        number = _number(value)
        if number is not None and not key.startswith("_") and key != MASK:
            found[key] = number
    return found


def _describe(rows: list[dict[str, float]]) -> dict[str, float]:
    """``stat/column`` for every column the rows have (a stat a column lacks is left out)."""
    names = list(dict.fromkeys(name for row in rows for name in row))
    values = {name: [row[name] for row in rows if name in row] for name in names}
    spread = {name: statistics.stdev(v) for name, v in values.items() if len(v) > 1}
    if not spread:  # no column has two values: 0 for the columns every row has
        spread = {name: 0.0 for name, v in values.items() if len(v) == len(rows)}
    found: dict[str, float] = {}
    for stat in _STATS:
        for name, v in values.items():
            if stat == "std":
                if name in spread:
                    found[f"std/{name}"] = spread[name]
                continue
            found[f"{stat}/{name}"] = _stat(stat, v)
    return found


def _stat(stat: str, values: list[float]) -> float:
    if stat == "mean":
        return statistics.fmean(values)
    if stat == "max":
        return max(values)
    if stat == "min":
        return min(values)
    return float(statistics.median(values))


def _task(response: dict[str, Any]) -> Any:
    return response.get(TASK_INDEX, 0)


def _coverage(responses: list[dict[str, Any]], scored: list[dict[str, Any]]) -> dict[str, int]:
    """How many rollouts and tasks the statistics come from, once any rollout is masked."""
    masked = len(responses) - len(scored)
    if not masked:
        return {}
    measured = {_task(r) for r in scored}
    return {
        "coverage/measured_rollouts": len(scored),
        "coverage/masked_rollouts": masked,
        "coverage/measured_tasks": len(measured),
        "coverage/fully_masked_tasks": len({_task(r) for r in responses} - measured),
    }


def _groups(scored: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    by_task: dict[Any, list[dict[str, float]]] = {}
    for response in scored:
        by_task.setdefault(_task(response), []).append(_columns(response))
    groups = []
    for task in sorted(by_task):
        rows = by_task[task]
        groups.append(
            {
                TASK_INDEX: task,
                **_describe(rows),
                "num_rollouts": len(rows),
                "expected_num_rollouts": len(rows),
                "missing_num_rollouts": 0,
                "reward_profile_completion_pct": 100.0,
            }
        )
    return groups


def aggregate_metrics(verify_responses: list[Any]) -> dict[str, Any]:
    """NeMo Gym's ``AggregateMetrics`` for these verify responses (see the module)."""
    responses = [r for r in verify_responses if isinstance(r, dict)]
    answer: dict[str, Any] = {
        "group_level_metrics": [],
        "agent_metrics": {},
        "key_metrics": {},
        "perf_summary": None,
        "repeat_level_metrics": [],
    }
    if not responses:
        return answer
    scored = [r for r in responses if not r.get(MASK)]
    coverage = _coverage(responses, scored)
    if not scored:  # every rollout masked: no statistic to publish
        return {**answer, "agent_metrics": dict(coverage), "key_metrics": dict(coverage)}
    repeats = _repeats(scored)
    agent = {**_describe([_columns(r) for r in scored]), **_across(repeats), **coverage}
    agent["num_repeats"] = len({r.get(ROLLOUT_INDEX, 0) for r in responses})
    key = {k: v for k, v in agent.items() if k.startswith("mean/")}
    return {
        **answer,
        "group_level_metrics": _groups(scored),
        "agent_metrics": agent,
        "key_metrics": {**key, **coverage},
        "repeat_level_metrics": repeats,
    }


def _quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile, interpolated linearly between the closest ranks."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (position - low) * (ordered[high] - ordered[low])


def _spread(values: list[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def _interval(prefix: str, name: str, values: list[float], sem: float) -> dict[str, float]:
    """The 95% t interval of the values' mean (none from one value; a point if sem is 0)."""
    if len(values) < 2:
        return {}
    mean = statistics.fmean(values)
    half = sem * t_quantile_975(len(values) - 1)
    return {f"ci_low_95{prefix}/{name}": mean - half, f"ci_high_95{prefix}/{name}": mean + half}


def _repeats(scored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per repeat (rollout index) once tasks ran more than once, else none."""
    by_repeat: dict[Any, list[dict[str, Any]]] = {}
    for response in scored:
        by_repeat.setdefault(response.get(ROLLOUT_INDEX, 0), []).append(response)
    if len(by_repeat) < 2:
        return []
    tasks = len({_task(r) for r in scored})
    rows = []
    for repeat in sorted(by_repeat):
        found = by_repeat[repeat]
        row: dict[str, Any] = {
            ROLLOUT_INDEX: repeat,
            "sample_count": len({_task(r) for r in found}),
            "missing_count": tasks - len({_task(r) for r in found}),
        }
        columns = [_columns(r) for r in found]
        for name in sorted({name for c in columns for name in c}):
            values = [c[name] for c in columns if name in c]
            sem = _spread(values) / math.sqrt(len(values))
            row |= {
                f"mean/{name}": statistics.fmean(values),
                f"median/{name}": float(statistics.median(values)),
                f"std/{name}": _spread(values),
                f"sem/{name}": sem,
                f"min/{name}": min(values),
                f"max/{name}": max(values),
                f"p25/{name}": _quantile(values, 0.25),
                f"p75/{name}": _quantile(values, 0.75),
                **_interval("", name, values, sem),
            }
        rows.append(row)
    return rows


def _across(repeats: list[dict[str, Any]]) -> dict[str, float]:
    """Each repeat's ``mean/`` entries summarised across repeats."""
    names = sorted({k for row in repeats for k in row if k.startswith("mean/")})
    found: dict[str, float] = {}
    for name in names:
        values = [row[name] for row in repeats if name in row]
        se = _spread(values) / math.sqrt(len(values))
        found |= {
            f"mean_across_repeats/{name}": statistics.fmean(values),
            f"median_across_repeats/{name}": float(statistics.median(values)),
            f"std_across_repeats/{name}": _spread(values),
            f"min_across_repeats/{name}": min(values),
            f"max_across_repeats/{name}": max(values),
            f"se_across_repeats/{name}": se,
            **_interval("_across_repeats", name, values, se),
        }
    return found
