"""``silo_task``: the Inspect task (dataset, solver, scorer) of a silo environment."""

from __future__ import annotations

import os
from collections.abc import Sequence

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from ..._environment import Environment
from ..._limits import Limits
from .._project import Served, load_served
from ._solver import RESULT_KEY, play_episode

__all__ = ["silo_reward", "silo_task"]


@scorer(metrics=[mean(), stderr()], name="silo_reward")
def silo_reward() -> Scorer:
    """The world's reward for the episode a sample played (metadata: passed, checks, runId)."""

    async def score(state: TaskState, target: Target) -> Score:
        result = state.store.get(RESULT_KEY)
        if result is None:
            return Score(value=0.0, explanation="No episode was graded for this sample.")
        failed = [c["label"] for c in result["checks"] if c["required"] and not c["passed"]]
        verdict = "PASS" if result["passed"] else "FAIL"
        explanation = verdict + (f" — failed: {'; '.join(failed)}" if failed else "")
        return Score(
            value=result["reward"],
            answer=result["output"],
            explanation=explanation,
            metadata={
                "passed": result["passed"],
                "checks": result["checks"],
                "runId": result["runId"],
                "terminationReason": result["terminationReason"],
            },
        )

    return score


def _samples(served: Served) -> list[Sample]:
    samples = []
    for task_id in served.tasks:
        spec = served.env.task(task_id)
        samples.append(
            Sample(
                input=spec.prompt,  # with a user: the instruction and its opening
                id=task_id,
                metadata={"title": spec.title, "difficulty": spec.difficulty},
            )
        )
    return samples


@task
def silo_task(
    project: str | os.PathLike[str] = ".",
    env: str | Environment | None = None,
    tasks: Sequence[str] | str | None = None,
    max_tool_calls: int = 100,
    timeout: float | None = 120.0,
) -> Task:
    """The Inspect task of silo environment ``env``: one sample per task, scored by its verifier.

    Each sample is played as one episode of a fresh world (limits, trace and artifacts as for
    ``silo.run``; its run directory is ``<project>/.silo/runs/<runId>/``). The model sees the
    world's tools plus ``submit`` (``{"answer": string}``); the episode ends on a reply
    without a tool call (its text is the answer), on ``submit``, or at a limit.

    Args:
        project: the project directory holding ``.silo/`` (default: the current directory).
        env: the environment's name in that project (or a code-first ``silo.Environment``).
        tasks: the task ids to play (a list, or ``"A,B"`` from the command line; default all).
        max_tool_calls: calls executed per episode before the next one ends it.
        timeout: seconds per episode from its start (``None``: no limit).

    Returns:
        The ``inspect_ai.Task``.

    Raises:
        SiloError: an unknown environment or task id.
        ValueError: no environment named, invalid limits, or no task to serve.
    """
    if env is None:
        raise ValueError("silo_task needs env=NAME (inspect eval ... -T env=NAME).")
    Limits(max_tool_calls, timeout, None)  # invalid limits fail here, not in every sample
    served = load_served(project, env, tasks)
    return Task(
        dataset=_samples(served),
        solver=play_episode(served, max_tool_calls, timeout),
        scorer=silo_reward(),
        name=f"silo_{served.env.name}",
    )
