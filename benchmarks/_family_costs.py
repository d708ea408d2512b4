"""What an instance of a task family costs next to a hand-written task's rollout (CPU time).

* ``rollout_us``: one hand-written rollout of the template with its scripted solver, end to end
  (``run_many`` over every task, no artifacts), CPU µs per rollout;
* ``build_grade_us``: building a new instance (``env.task("F#SEED")``: its world, ``vary``,
  ``sample``, the instruction) plus grading a final world against its gold the first time
  (replaying the gold calls on a fresh copy, the record-by-record comparison, the answer and
  the family's checks), CPU µs per instance, every instance new;
* ``instance_rollout_us``: one instance's rollout with the gold agent end to end, every
  instance new (so it pays ``build_grade_us`` too);
* ``again_rollout_us``: the same instances played again (kept, their gold known: K runs of one
  instance pay the build and the gold once).

Target (issue 30): ``build_grade_us`` <= 1.5 x ``rollout_us``.
"""

from __future__ import annotations

import time
from typing import Any

import silo_async as silo
from silo_async.testing import gold_agent

__all__ = ["family_costs"]


def _cpu() -> float:
    return time.process_time()


class _Capturing(silo.Environment):
    """The same environment, keeping what each instance's verifier was given (not timed)."""

    def verifier_for(self, task: silo.Task) -> silo.Verifier:
        gold = super().verifier_for(task)
        seen = CAPTURED

        def body(final: Any, initial: Any, ctx: silo.VerifierContext) -> Any:
            seen[task.id] = (final, ctx)
            return gold.fn(final, initial, ctx)

        return silo.Verifier(id=gold.id, task_id=gold.task_id, fn=body)


#: task id -> (the gold agent's final world, the verifier's context), from :class:`_Capturing`.
CAPTURED: dict[str, tuple[Any, silo.VerifierContext]] = {}


async def _build_grade(env: silo.Environment, ids: list[str]) -> float:
    """Mean CPU µs to build each instance and grade its gold final world the first time."""
    twin = _Capturing(
        name=env.name,
        create_state=env.create_state,
        bind=env.bind,
        tools=env.tools,
        families=env.families,
        vary=env.vary,
    )
    CAPTURED.clear()
    await silo.run_many(twin, ids, gold_agent, concurrency=100)  # the final worlds (not timed)
    spent = 0.0
    for task_id in ids:
        final, seen = CAPTURED[task_id]
        start = _cpu()
        task = env.task(task_id)  # built now: every id is new to this environment
        spent += _cpu() - start
        initial = env.instance(task_id).fresh_world()  # (a rollout's thaw, not the instance's)
        ctx = silo.VerifierContext(
            agent_output=seen.agent_output, task=task, output=seen.output,
            conversation=seen.conversation,
        )  # fmt: skip
        start = _cpu()
        outcome = await env.verifier_for(task).evaluate(final, initial, ctx)
        spent += _cpu() - start
        assert outcome.passed, (task_id, outcome.failed_required)
    return spent / len(ids) * 1e6


async def _rollouts(env: silo.Environment, ids: list[str], agent: Any, runs: int = 1) -> float:
    start = _cpu()
    results = await silo.run_many(env, ids, agent, runs=runs, concurrency=100)
    spent = _cpu() - start
    assert all(r.passed for r in results), [r.failed_required for r in results if not r.passed]
    return spent / len(results) * 1e6


def _fresh(env: silo.Environment) -> silo.Environment:
    """The same environment with nothing built yet (no instance, no gold kept)."""
    return silo.Environment(
        name=env.name,
        create_state=env.create_state,
        bind=env.bind,
        tools=env.tools,
        verifiers=env.verifiers,
        tasks=env.tasks,
        families=env.families,
        vary=env.vary,
    )


async def family_costs(
    env: silo.Environment, solver: Any, instances: int = 400, rollouts: int = 400
) -> dict[str, float]:
    """The figures of the module docstring for ``env`` (which has task families)."""
    tasks = [t.id for t in env.tasks]
    await _rollouts(env, tasks, solver)  # warm-up
    rollout_us = await _rollouts(env, tasks, solver, runs=max(1, rollouts // len(tasks)))
    families = [f.id for f in env.families]
    ids = [f"{families[i % len(families)]}#{10_000 + i}" for i in range(instances)]
    ids = [i for i in ids if _exists(env, i)]
    build_grade_us = await _build_grade(_fresh(env), ids)
    fresh = _fresh(env)
    instance_rollout_us = await _rollouts(fresh, ids, gold_agent)
    again_rollout_us = await _rollouts(fresh, ids, gold_agent)
    return {
        "rollout_us": round(rollout_us, 1),
        "build_grade_us": round(build_grade_us, 1),
        "instance_rollout_us": round(instance_rollout_us, 1),
        "again_rollout_us": round(again_rollout_us, 1),
        "build_grade_ratio": round(build_grade_us / rollout_us, 2),
        "instance_rollout_ratio": round(instance_rollout_us / rollout_us, 2),
    }


def _exists(env: silo.Environment, task_id: str) -> bool:
    try:
        env.task(task_id)
    except silo.SiloError as exc:
        if exc.code == "task_not_found":
            return False
        raise
    return True
