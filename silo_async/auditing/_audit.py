"""``silo.audit``: play the probes and a solver's mutants on every task, and judge its verifier.

For each task the audit plays, at once, the solver (watched: which of its calls changed the
world) and every probe; then, when the solver passed, its mutants. Every one of them is an
ordinary rollout written under the audit directory (``runs/<runId>/``), with the default limits
and no faults, so a reader opens exactly the rollout that passed where it should not have.
Nothing depends on timing or order of completion: the same environment, tasks and options give
the same ``audit.json``, run ids aside.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import attrs

from .._environment import Environment
from .._jsonutil import pretty_json, utf8
from .._many import check_tasks
from .._origin import origin_of
from .._result import RunResult
from .._runid import new_run_id
from .._runner import Agent, run
from .._user import UserFactory
from ..project import load_environment
from ..testing import ScriptedAgent, gold_agent
from ._inputs import InputMaker
from ._mutants import Alteration, Mutant, alterations, mutants_of
from ._probes import PROBES, make_probe
from ._recording import Sink, Step, Worlds, steps_of, watched, watching
from ._report import AuditReport, counts_of, markdown, verdict_of
from ._values import Seen

__all__ = ["audit", "check_probes", "default_audit_dir"]

#: Rollouts in flight at once.
CONCURRENCY = 32


def check_probes(probes: Sequence[str] | None) -> tuple[str, ...]:
    """The probes to play, in :data:`PROBES` order (``None``: all four).

    Raises:
        ValueError: an unknown probe, or none at all.
    """
    if probes is None:
        return PROBES
    names = [probes] if isinstance(probes, str) else list(probes)
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        raise ValueError(f"Unknown probe {unknown[0]!r}; expected some of: {', '.join(PROBES)}.")
    if not names:
        raise ValueError(f"No probe given; expected some of: {', '.join(PROBES)}.")
    return tuple(p for p in PROBES if p in names)


def default_audit_dir(env: Environment, audit_id: str) -> Path:
    """``.silo/audits/<auditId>/`` of the environment's project, else of the current directory."""
    recipe = origin_of(env)
    root = Path.cwd()
    if recipe is not None and recipe[0] is load_environment and len(recipe[1]) == 2:
        root = Path(recipe[1][1])
    return root / ".silo" / "audits" / audit_id


def _makers(env: Environment) -> dict[str, InputMaker]:
    """An input checker per tool of the environment (the users' included)."""
    tools = env.runtime_tools(env.create_state())
    return {name: InputMaker(t.spec) for name, t in tools.items()}


class _Audit:
    """One audit in progress: the environment, its options, and where rollouts are written."""

    def __init__(
        self,
        env: Environment,
        solver: Agent | None,
        probes: tuple[str, ...],
        seed: int,
        runs_dir: Path,
        user: UserFactory | None,
        concurrency: int,
    ) -> None:
        self.worlds = Worlds(env)
        # Every rollout plays on the watched environment (its tools note what a call did only
        # while a watched agent plays): one environment, so an instance is built once.
        self.env = watched(env, self.worlds)
        self.solver = solver
        self.probes = probes
        # One agent per probe for the whole audit: each rollout draws its own random choices.
        self.agents = {name: make_probe(name, seed) for name in probes}
        self.seed = seed
        self.runs_dir = runs_dir
        self.user = user
        self.limiter = anyio.CapacityLimiter(concurrency)
        self.makers = _makers(env)
        self._values: dict[str, Seen] = {}

    def world_values(self, task_id: str) -> Seen:
        """What the task's initial world holds (``alter``'s second source of values).

        Hand-written tasks share one world unless the environment prepares one per task; an
        instance has its own (``vary`` changes names and figures).
        """
        task = self.env.task(task_id)
        key = task_id if task.family is not None or self.env.setup is not None else ""
        found = self._values.get(key)
        if found is None:
            found = self._values[key] = Seen()
            found.output(self.env.as_json(self.env.initial_world(task)))
        return found

    def solver_for(self, task_id: str) -> Agent | None:
        """An instance's own gold agent, else the audit's solver (for hand-written tasks)."""
        if self.env.task(task_id).family is not None:
            return gold_agent
        return self.solver

    async def play(
        self, task_id: str, agent: Agent, label: str, sink: Sink | None = None
    ) -> RunResult:
        """One rollout with the default limits, written under ``runs/``.

        With a ``sink``, the watched tools note in it what the agent's calls did.
        """
        async with self.limiter:
            return await run(
                self.env,
                task_id,
                agent if sink is None else watching(agent, sink),
                runs_dir=self.runs_dir,
                agent_name=label,
                user=self.user,
            )

    async def task(self, task_id: str) -> dict[str, Any]:
        """The ``audit.json`` entry of one task."""
        played: dict[str, RunResult] = {}
        sink = Sink(log=[])

        async def probe(name: str) -> None:
            played[name] = await self.play(task_id, self.agents[name], f"probe:{name}")

        async def solve(solver: Agent) -> None:
            played[""] = await self.play(task_id, solver, "solver", sink)

        solver = self.solver_for(task_id)
        async with anyio.create_task_group() as tg:
            if solver is not None:
                tg.start_soon(solve, solver)
            for name in self.probes:
                tg.start_soon(probe, name)
        solved = played.get("")
        mutants = await self.mutants(task_id, solved, sink) if solved and solved.passed else []
        entry: dict[str, Any] = {
            "task": task_id,
            "verdict": "",
            "solver": None if solved is None else _brief(solved),
            "probes": {name: _brief(played[name]) for name in self.probes},
            "mutants": mutants,
            "gap": None,
        }
        if solved is not None:
            best = max((played[n].reward for n in self.probes), default=0.0)
            entry["gap"] = round(solved.reward - best, 2)
        entry["verdict"] = verdict_of(entry)
        return entry

    async def mutants(self, task_id: str, solved: RunResult, sink: Sink) -> list[dict[str, Any]]:
        """Play every mutant of the solver's rollout; their entries, step by step."""
        steps = steps_of(solved, sink.log or ())
        plain = mutants_of(steps)
        altered = alterations(
            steps,
            solved,
            lambda: self.world_values(task_id),
            self.makers,
            f"{self.seed}/{task_id}",
        )
        base = _Solved(solved, steps, sink.world)
        done: dict[int, dict[str, Any]] = {}

        async def one(slot: int, mutant: Mutant) -> None:
            done[slot] = await self.mutant(task_id, base, mutant)

        async def alter(slot: int, alteration: Alteration) -> None:
            done[slot] = await self.alter(task_id, base, alteration)

        async with anyio.create_task_group() as tg:
            for slot, mutant in enumerate(plain):
                tg.start_soon(one, slot, mutant)
            for slot, alteration in enumerate(altered, start=len(plain)):
                tg.start_soon(alter, slot, alteration)
        order = sorted(done, key=lambda s: (done[s]["call"]["index"], _KINDS[done[s]["kind"]], s))
        return [done[s] for s in order]

    async def mutant(self, task_id: str, base: _Solved, mutant: Mutant) -> dict[str, Any]:
        """Play one mutant with the solver's answer; its ``audit.json`` entry.

        ``sameWorld``: the mutant's final world equals the solver's (its pass proves nothing).
        """
        agent = ScriptedAgent(mutant.calls, base.result.agent_output)
        sink = Sink()
        label = f"mutant:{mutant.kind}:{mutant.step.index}"
        result = await self.play(task_id, agent, label, sink)
        same = (
            base.world is not None
            and sink.world is not None
            and self.worlds.same(base.world, sink.world)
        )
        return {
            "kind": mutant.kind,
            "call": mutant.call(),
            "passed": result.passed,
            "reward": result.reward,
            "runId": result.run_id,
            "sameWorld": same,
        }

    async def alter(self, task_id: str, base: _Solved, alteration: Alteration) -> dict[str, Any]:
        """Try the alteration's values in turn until one gives a world other than the solver's.

        The rollouts of values that changed nothing are removed: only the one reported stays.
        """
        entry: dict[str, Any] = {}
        for value in alteration.candidates:
            if entry:
                await anyio.to_thread.run_sync(shutil.rmtree, self.runs_dir / entry["runId"], True)
            entry = await self.mutant(task_id, base, alteration.mutant(base.steps, value))
            if not entry["sameWorld"]:
                break
        return entry


@attrs.frozen
class _Solved:
    """The solver's rollout, its steps and its final world (what mutants are compared with)."""

    result: RunResult
    steps: list[Step]
    world: Any


_KINDS = {"drop": 0, "repeat": 1, "alter": 2}


def _brief(result: RunResult) -> dict[str, Any]:
    return {"passed": result.passed, "reward": result.reward, "runId": result.run_id}


def _task_ids(
    env: Environment, tasks: Sequence[str] | str | None, families: Mapping[str, int] | None
) -> list[str]:
    """The tasks named, then each family's first instances by eval's rule (split test, seed 0).

    ``tasks=None`` means every hand-written task, unless ``families`` are given.
    """
    if tasks is None:
        named = [] if families else [t.id for t in env.tasks]
    else:
        named = [tasks] if isinstance(tasks, str) else list(tasks)
    if families is not None and not isinstance(families, Mapping):
        raise ValueError(
            f'families must map family ids to counts, e.g. {{"f": 10}}; got {families!r}.'
        )
    seen = set(named)
    for family, count in (families or {}).items():
        for task in env.instances(family, count):
            if task.id not in seen:
                seen.add(task.id)
                named.append(task.id)
    return named


async def audit(
    env: Environment,
    tasks: Sequence[str] | str | None = None,
    *,
    solver: Agent | None = None,
    probes: Sequence[str] | None = None,
    families: Mapping[str, int] | None = None,
    seed: int = 0,
    out: str | Path | None = None,
    user: UserFactory | None = None,
    concurrency: int = CONCURRENCY,
    on_task: Callable[[Mapping[str, Any]], None] | None = None,
) -> AuditReport:
    """Try to earn each task's reward without doing it, and say whether its verifier holds.

    Every probe (``noop``, ``echo``, ``explorer``, ``spammer``) plays every task; given a
    ``solver``, it plays too, and so do its mutants (each world-changing call dropped, repeated
    or with one argument altered). Verdicts: ``unsolved`` (the solver fails), ``gameable`` (a
    probe passes), ``loose`` (a drop or alter mutant passes), else ``sound``.

    Args:
        env: any environment (code-first or loaded from a project).
        tasks: task ids (``None``: every hand-written task, unless ``families`` are given).
        solver: an agent that solves the hand-written tasks (optional: without one they have
            no mutants, and their ``solver`` and ``gap`` are null). An instance's solver is
            always its own gold agent (:func:`silo_async.testing.gold_agent`).
        probes: the probes to play (``None``: all four).
        families: ``{family id: N}``: the first N instances of each family, taken as ``eval
            --family`` takes them (split ``test``, from seed 0).
        seed: seeds the probes and the choice of altered values.
        out: the audit directory (``None``: ``.silo/audits/<auditId>/`` of the environment's
            project, or of the current directory for a code-first environment).
        user: for tasks with a user, a function of the task returning a fresh
            :class:`~silo_async.User` per rollout (default: the task's scripted user).
        concurrency: rollouts in flight at once.
        on_task: called with each task's entry as it is judged (progress).

    Returns:
        The :class:`AuditReport`; ``audit.json`` and ``audit.md`` are written in its ``path``.

    Raises:
        SiloError: an unknown task, family or verifier, or too few instances, before
            anything runs.
        ValueError: an unknown probe, an empty ``probes``, a count below 1, or
            ``concurrency`` below 1.
    """
    chosen = check_probes(probes)
    if concurrency < 1:
        raise ValueError(f"concurrency must be an integer >= 1, got {concurrency!r}.")
    task_ids = _task_ids(env, tasks, families)
    check_tasks(env, task_ids)
    audit_id = "audit_" + new_run_id().removeprefix("run_")
    path = Path(out) if out is not None else default_audit_dir(env, audit_id)
    work = _Audit(env, solver, chosen, seed, path / "runs", user, concurrency)
    entries: dict[int, dict[str, Any]] = {}

    # Tasks in flight at once: enough to keep ``concurrency`` rollouts busy (a task plays five
    # rollouts, then its mutants, at once), few enough that a thousand instances do not all
    # hold their solver's final world while they wait for a rollout slot.
    tasks_at_once = anyio.CapacityLimiter(max(1, concurrency // 4))

    async def one(index: int, task_id: str) -> None:
        async with tasks_at_once:
            entries[index] = await work.task(task_id)
        if on_task is not None:
            on_task(entries[index])

    async with anyio.create_task_group() as tg:
        for index, task_id in enumerate(task_ids):
            tg.start_soon(one, index, task_id)
    ordered = [entries[i] for i in range(len(task_ids))]
    report = AuditReport(audit_id, env.name, ordered, counts_of(ordered), path)
    await _write(report, chosen)
    return report


async def _write(report: AuditReport, probes: Sequence[str]) -> None:
    """``audit.json`` and ``audit.md``, off the event loop."""

    def write() -> None:
        report.path.mkdir(parents=True, exist_ok=True)
        (report.path / "audit.json").write_bytes(utf8(pretty_json(report.to_dict())))
        (report.path / "audit.md").write_bytes(utf8(markdown(report, probes)))

    await anyio.to_thread.run_sync(write)
