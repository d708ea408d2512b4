"""The checks of task families: ``env validate``, ``check_environment``.

Each family is checked on its first ``instances`` distinct instances from seed 0 upward (seeds
without an instance skipped, at most 100 x ``instances`` seeds): every instance builds, every
gold call succeeds, the gold world differs from the initial one or an answer is asked, the gold
agent passes, a do-nothing agent fails, and the instructions are not all alike (at least
min(``instances``, 10) distinct). Each defect is one ``family_invalid`` finding naming the
family and the first seed showing it. An environment's ``vary`` must keep the world's shape.
"""

from __future__ import annotations

from typing import Any

from .._checks import Checker
from .._environment import Environment
from .._errors import SiloError
from .._family import TaskFamily, canonical_params
from .._goldmatch import GoldPlan
from .._instance import SCAN_FACTOR, Instance
from .._limits import Limits
from .._many import run_many
from .._play import play
from ._gold import gold_agent

__all__ = ["DEFAULT_INSTANCES", "check_families"]

#: Instances of each family ``env validate`` checks unless ``--instances`` says otherwise.
DEFAULT_INSTANCES = 50
#: Distinct instructions required among the instances checked (fewer when fewer are checked).
DISTINCT_INSTRUCTIONS = 10
CODE = "family_invalid"


async def _noop(ctx: Any) -> str:
    # What every instance must fail: an agent that looks at nothing and changes nothing.
    return ""


class _Defects:
    """One finding per kind of defect of one family, naming the first seed that shows it."""

    def __init__(self, c: Checker, family: TaskFamily) -> None:
        self.c = c
        self.family = family
        self.seen: set[str] = set()

    def error(self, kind: str, seed: int | None, message: str) -> None:
        if kind in self.seen:
            return
        self.seen.add(kind)
        where = "" if seed is None else f" (seed {seed})"
        self.c.error(CODE, f'Task family "{self.family.id}"{where}: {message}')


async def check_families(c: Checker, env: Environment, instances: int) -> None:
    """Check every family of ``env`` on ``instances`` instances (see the module docstring).

    With ``vary``, the varied worlds of the first family's instances must keep the world's
    shape: the same top-level keys, records and fields (``vary`` changes values only).
    """
    shaped = env.vary is None
    for family in env.families:
        found = await _check_family(c, env, family, instances)
        if not shaped and found:
            shaped = True
            _check_shapes(c, env, found)


def _check_shapes(c: Checker, env: Environment, found: list[Instance]) -> None:
    pristine = env.as_json(env.create_state())
    for instance in found:
        change = shape_change(pristine, env.as_json(instance.fresh_world()))
        if change is not None:
            c.error(
                CODE,
                f"vary changes the world's shape for instance {instance.task.id} (seed "
                f"{instance.seed}): {change}; vary may change values, never add or remove keys "
                "or records.",
            )
            return


def _keys(value: Any) -> list[Any] | None:
    if isinstance(value, dict):
        return list(value)
    if isinstance(value, list):
        return [
            row["id"] if isinstance(row, dict) and isinstance(row.get("id"), str) else i
            for i, row in enumerate(value)
        ]
    return None


def _rows(value: Any) -> dict[Any, Any]:
    keys = _keys(value) or []
    rows = value.values() if isinstance(value, dict) else value
    return dict(zip(keys, rows, strict=True))


def shape_change(before: Any, after: Any) -> str | None:
    """How ``after`` differs from ``before`` in shape (keys, records, fields), or ``None``."""
    top_b, top_a = _keys(before), _keys(after)
    if top_b is None or top_a is None or not isinstance(before, dict):
        return None
    if set(top_b) != set(top_a):
        return _named("key", top_b, top_a)
    for key in top_b:
        rows_b, rows_a = _keys(before[key]), _keys(after[key])
        if rows_b is None or rows_a is None:
            continue
        if set(rows_b) != set(rows_a):
            return f"{key}: " + _named("record", rows_b, rows_a)
        old, new = _rows(before[key]), _rows(after[key])
        for row in rows_b:
            was, now = old[row], new[row]
            if isinstance(was, dict) and isinstance(now, dict) and set(was) != set(now):
                return f"{key}.{row}: " + _named("field", list(was), list(now))
    return None


def _named(kind: str, before: list[Any], after: list[Any]) -> str:
    added = [str(k) for k in after if k not in before]
    removed = [str(k) for k in before if k not in after]
    parts = []
    if added:
        parts.append(f"adds the {kind}{'s' if len(added) > 1 else ''} {', '.join(added[:5])}")
    if removed:
        parts.append(
            f"removes the {kind}{'s' if len(removed) > 1 else ''} {', '.join(removed[:5])}"
        )
    return " and ".join(parts)


def _instances(env: Environment, family: TaskFamily, n: int, d: _Defects) -> list[Instance]:
    """The first ``n`` distinct instances from seed 0 (fewer when the family fails to build)."""
    found: list[Instance] = []
    seen: set[bytes] = set()
    for seed in range(SCAN_FACTOR * n):
        try:
            instance = env.instance(f"{family.id}#{seed}")
        except SiloError as exc:
            if exc.code == "task_not_found" and "reason" in exc.details:
                continue  # NoInstance: this seed has none
            d.error("build", seed, f"the instance does not build: {exc.message}")
            return found
        key = canonical_params(instance.params)
        if key not in seen:
            seen.add(key)
            found.append(instance)
            if len(found) == n:
                return found
    d.c.warning(
        CODE,
        f'Task family "{family.id}" has {len(found)} distinct instances among seeds 0 to '
        f"{SCAN_FACTOR * n - 1}, fewer than the {n} checked (--instances).",
    )
    return found


async def _gold_reaches(env: Environment, instance: Instance, d: _Defects) -> bool:
    """The gold calls succeed, and change the world or come with an answer to state."""
    try:
        calls = instance.gold_calls()
        world = await play(env.runtime_tools, instance.fresh_world(), calls)
    except SiloError as exc:
        what = "a gold call fails" if exc.code == "replay_failed" else "gold() fails"
        d.error("gold", instance.seed, f"{what}: {exc.message}")
        return False
    initial = env.as_json(instance.fresh_world())
    plan = GoldPlan.of(env.as_json(world), initial, instance.family.ignore)
    if not plan.changes_world and instance.family.answer is None:
        d.error(
            "unchanged",
            instance.seed,
            "the gold solution changes nothing the comparison reads and no answer is asked, so "
            "an agent that does nothing passes; change the world or give answer=.",
        )
        return False
    return True


def _check_instructions(found: list[Instance], d: _Defects) -> None:
    # What the agent is given: with a user, the instruction and the user's opening (a
    # conversational family may word its instruction alike and vary what the user says).
    wanted = min(len(found), DISTINCT_INSTRUCTIONS)
    first: dict[str, int] = {}
    repeat: tuple[int, int] | None = None
    for instance in found:
        earlier = first.setdefault(instance.task.prompt, instance.seed)
        if earlier != instance.seed and repeat is None:
            repeat = (instance.seed, earlier)
    if len(first) < wanted and repeat is not None:
        d.error(
            "alike",
            repeat[0],
            f"the instructions are alike: {len(first)} distinct among {len(found)} instances "
            f"(at least {wanted} needed); seed {repeat[0]} is worded as seed {repeat[1]}.",
        )


async def _check_family(c: Checker, env: Environment, family: TaskFamily, n: int) -> list[Instance]:
    """Check one family; the instances it was checked on."""
    d = _Defects(c, family)
    found = _instances(env, family, n, d)
    playable = [i for i in found if await _gold_reaches(env, i, d)]
    ids = [i.task.id for i in playable]
    if ids:
        gold = await run_many(env, ids, gold_agent, agent_name="gold_agent")
        for instance, result in zip(playable, gold, strict=True):
            if not result.passed:
                why = result.error or "failed: " + ", ".join(result.failed_required)
                d.error("gold_agent", instance.seed, f"the gold agent does not pass it ({why}).")
        limits = Limits(max_tool_calls=0, timeout=30.0)
        idle = await run_many(env, ids, _noop, limits=limits, agent_name="noop")
        for instance, result in zip(playable, idle, strict=True):
            if result.passed:
                d.error(
                    "noop", instance.seed, "an agent that does nothing passes it (reward "
                    f"{result.reward:.2f}); the instance must ask for a change or an answer.",
                )  # fmt: skip
    _check_instructions(found, d)
    return found
