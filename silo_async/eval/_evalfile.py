"""``eval.json``: an eval's plan on disk, everything needed to run it again.

Written (whole, synced to disk) before the first rollout starts, never changed after::

    {"format": "silo_async.eval-plan", "formatVersion": 1, "evalId", "createdAt",
     "environment": {"name", "project"},            project: null for a code-first one
     "tasks": [...], "agents": [{"label", "agent" | "model" | "code", ...}],
     "runs", "prices", "faults", "faultSeed", "baseline", "user", "policyVersion",
     "limits": {"maxToolCalls", "timeoutMs", "tokenLimit"},
     "concurrency", "executor": {"executor", ...},
     "digests": {"tasks": {ID: SHA}, "verifiers": {ID: SHA}, "data": SHA | null}}

``faults`` is the fault plan's rules (``[{"kind", "p", "tools", "ms"}]``, as in a fault file) or
null, ``faultSeed`` its seed and ``baseline`` whether the plan also runs without faults:
a resume meets the same faults, and refuses other ones. ``policyVersion``, what
stamps the rollouts' model steps, is there only when one was given. How the
environment, the agents and the user are named is :mod:`._refs`'s; what ``digests`` hold is
:mod:`._digests`'s (a plan written before them has none, and its resume checks none).

A setting that is one JSON value (``runs``, ``prices``, ``faults``, ``faultSeed``,
``baseline``, ``user``) is one line of :data:`OPTIONS`: it is then written, read back and
compared by a resume (:mod:`._conflicts`) with nothing else to change here. The file itself is
:class:`silo_async.runs.EvalDir`'s to read and write; every field read back is checked
(:mod:`._planread`), so a hand-edited plan is ``eval_invalid`` naming the field.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .._environment import Environment
from .._faults import Faults
from .._limits import Limits
from .._trace import utc_now_iso
from ..runs import EvalDir
from ..runs._evaldir import PLAN_FORMAT, PLAN_VERSION
from ._planread import PlanFields, read_fields
from ._refs import AgentRef, agent_ref, environment_ref, executor_config
from ._report._prices import Prices

__all__ = ["MAX_ROLLOUTS", "OPTIONS", "EvalPlan", "Option", "new_plan", "read_plan", "write_plan"]


@attrs.frozen
class Option:
    """A plan setting that is one JSON value, as ``eval.json`` holds it.

    Attributes:
        keyword: ``evaluate``'s keyword for it (a ``resume_conflict`` names it so).
        default: its value when not given (a resume then takes the plan's).
    """

    keyword: str
    default: Any = None


#: The most rollouts one eval runs (its baseline's included): an eval lays out its whole plan
#: in memory before the first rollout, and ten million slots already take a few gigabytes.
MAX_ROLLOUTS = 10_000_000

#: The plan's one-value settings, by their key in ``eval.json`` (and in its order).
OPTIONS: dict[str, Option] = {
    "runs": Option("runs", 1),
    "prices": Option("prices", None),
    "faults": Option("faults", None),
    "faultSeed": Option("faults", 0),
    "baseline": Option("baseline", False),
    "user": Option("user", None),
    "policyVersion": Option("policy_version", None),
}


#: Options ``eval.json`` holds only when they are set (newer than the plan's first format).
_WHEN_SET = frozenset({"policyVersion"})


@attrs.frozen
class EvalPlan:
    """An eval's plan: what ``eval.json`` holds.

    Attributes:
        eval_id: the eval's id (a resumed eval keeps it).
        created_at: when the eval started (ISO-8601 UTC).
        environment: ``{"name", "project"}`` (project: None for a code-first environment).
        tasks: the task ids, in order.
        agents: the agents, in order.
        limits: per rollout.
        concurrency: the most rollouts at once (a resume may change it).
        options: the one-value settings (:data:`OPTIONS`: ``runs``, ``prices``, ``faults``,
            ``faultSeed``, ``baseline``, ``user``), by key.
        executor: where the rollouts ran (a resume may change it).
        digests: what the plan ran (:mod:`._digests`), or None (not computed yet, or a plan
            written before digests).
    """

    eval_id: str
    created_at: str
    environment: dict[str, Any]
    tasks: list[str]
    agents: list[AgentRef]
    limits: Limits
    concurrency: int
    options: dict[str, Any]
    executor: dict[str, Any] = attrs.field(factory=lambda: {"executor": "local"})
    digests: dict[str, Any] | None = None

    @property
    def labels(self) -> list[str]:
        """The agents' labels, in order."""
        return [a.label for a in self.agents]

    @property
    def runs(self) -> int:
        """Rollouts per task and agent."""
        runs: int = self.options["runs"]
        return runs

    @property
    def prices(self) -> dict[str, Any] | None:
        """The price table as given, or None."""
        prices: dict[str, Any] | None = self.options["prices"]
        return prices

    @property
    def fault_plan(self) -> Faults | None:
        """The faults every rollout but a baseline one meets (None: none)."""
        rules = self.options["faults"]
        if rules is None:
            return None
        return Faults.from_config({"seed": self.options["faultSeed"], "faults": rules})

    @property
    def policy_version(self) -> str | None:
        """What stamps every rollout's model steps (``--policy-version``), or None."""
        version: str | None = self.options.get("policyVersion")
        return version

    @property
    def baseline(self) -> bool:
        """The plan also runs without faults (``eval --baseline``)."""
        return bool(self.options["baseline"])

    @property
    def rollouts(self) -> int:
        """Rollouts the plan runs, its baseline's included."""
        return len(self.tasks) * len(self.agents) * self.runs * (2 if self.baseline else 1)

    def settings(self) -> dict[str, Any]:
        """The settings a resume compares (:data:`._conflicts.SETTINGS`), as the plan has them."""
        return {
            "environment": self.environment["name"],
            "tasks": list(self.tasks),
            "agents": list(self.agents),
            **self.limits.config(),
            **self.options,
        }

    def to_dict(self) -> dict[str, Any]:
        """The ``eval.json`` document."""
        data = {
            "format": PLAN_FORMAT,
            "formatVersion": PLAN_VERSION,
            "evalId": self.eval_id,
            "createdAt": self.created_at,
            "environment": dict(self.environment),
            "tasks": list(self.tasks),
            "agents": [a.to_dict() for a in self.agents],
            # An option written only when set: a plan without it reads the same everywhere.
            **{k: v for k, v in self.options.items() if k not in _WHEN_SET or v is not None},
            "limits": self.limits.config(),
            "concurrency": self.concurrency,
            "executor": dict(self.executor),
        }
        if self.digests is not None:
            data["digests"] = self.digests
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "eval.json") -> EvalPlan:
        """Read ``eval.json`` (read from ``where``) back, its version checked already.

        Raises:
            SiloError: ``eval_invalid`` naming the first field that is not what silo_async
                writes.
        """
        return read_fields(data, where, cls._read)

    @classmethod
    def _read(cls, f: PlanFields) -> EvalPlan:
        created = f.value("createdAt", "")
        timeout_ms = f.number("limits.timeoutMs", optional=True)
        max_calls = f.count("limits.maxToolCalls", 0)
        tokens = f.count("limits.tokenLimit", 0, optional=True, default=None)
        limits = f.made(
            "limits",
            lambda: Limits(max_calls, None if timeout_ms is None else timeout_ms / 1000, tokens),
        )
        executor = f.mapping("executor", optional=True, default=None)
        plan = cls(
            eval_id=str(f.text("evalId")),
            created_at=created if isinstance(created, str) else "",
            environment={
                "name": f.text("environment.name"),
                "project": f.text("environment.project", optional=True, default=None),
            },
            tasks=f.texts("tasks"),
            agents=_agents(f),
            limits=limits,
            concurrency=f.count("concurrency", 1),
            options=_options(f),
            executor=dict(executor or {"executor": "local"}),
            digests=_digests(f),
        )
        if plan.rollouts > MAX_ROLLOUTS:  # a resume lays out every rollout before it runs one
            f.bad(
                "runs", f"makes {plan.rollouts:,} rollouts; an eval runs at most {MAX_ROLLOUTS:,}"
            )
        return plan


def _agents(f: PlanFields) -> list[AgentRef]:
    entries = f.items("agents")
    labels = [f.text(f"agents.{n}.label") for n in range(len(entries))]
    if len(set(labels)) != len(labels):
        f.bad("agents", "gives two agents the same label")
    for n, entry in enumerate(entries):
        kinds = [kind for kind in ("agent", "model", "code") if kind in entry]
        if len(kinds) > 1:
            f.bad(f"agents.{n}", f"names its agent {len(kinds)} ways ({', '.join(kinds)})")
        for kind in kinds:
            f.text(f"agents.{n}.{kind}")
        f.text(f"agents.{n}.cwd", optional=True, default=None)
        f.mapping(f"agents.{n}.options", default={})
    return [AgentRef.from_dict(entry) for entry in entries]


def _options(f: PlanFields) -> dict[str, Any]:
    prices = f.mapping("prices", optional=True, default=None)
    if prices is not None:
        f.made("prices", lambda: Prices.from_dict(prices))
    faults = f.value("faults", None)
    seed = f.count("faultSeed", 0, default=0)
    if faults is not None:
        if not isinstance(faults, list):
            f.bad("faults", "must be a list of fault rules, or null")
        f.made("faults", lambda: Faults.from_config({"seed": seed, "faults": faults}))
    baseline = f.flag("baseline", default=False)
    if baseline and faults is None:
        f.bad("baseline", "is true in a plan without faults")
    user = f.mapping("user", optional=True, default=None)
    if user is not None and "model" in user:
        f.text("user.model")
        f.text("user.baseUrl", optional=True, default=None)
        f.mapping("user.options", default={})
    elif user is not None:
        f.text("user.label")
    runs = f.count("runs", 1)  # in every plan ever written: without it, runs 2.. would be removed
    version = f.text("policyVersion", optional=True, default=None)
    return {
        "runs": runs,
        "prices": prices,
        "faults": faults,
        "faultSeed": seed,
        "baseline": baseline,
        "user": user,
        "policyVersion": version,
    }


def _digests(f: PlanFields) -> dict[str, Any] | None:
    if f.mapping("digests", optional=True, default=None) is None:
        return None
    found: dict[str, Any] = {}
    for kind in ("tasks", "verifiers"):
        entries = f.mapping(f"digests.{kind}")
        if not all(value is None or isinstance(value, str) for value in entries.values()):
            f.bad(f"digests.{kind}", "must map each name to a digest")
        found[kind] = dict(entries)
    found["data"] = f.text("digests.data", optional=True)
    return found


def new_plan(
    eval_id: str,
    env: Environment,
    task_ids: Sequence[str],
    agents: Mapping[str, Any],
    *,
    limits: Limits,
    concurrency: int,
    options: Mapping[str, Any],
    executor: Any,
) -> EvalPlan:
    """The plan of a new eval (started now); ``options`` by their key in :data:`OPTIONS`.

    Its ``digests`` are added when it is written (:func:`._digests.digests`: that builds a
    world, off the event loop).
    """
    return EvalPlan(
        eval_id=eval_id,
        created_at=utc_now_iso(),
        environment=environment_ref(env),
        tasks=list(task_ids),
        agents=[agent_ref(label, agent) for label, agent in agents.items()],
        limits=limits,
        concurrency=concurrency,
        options={key: options.get(key, option.default) for key, option in OPTIONS.items()},
        executor=executor_config(executor),
    )


def write_plan(eval_dir: str | os.PathLike[str], plan: EvalPlan) -> None:
    """Write ``eval.json`` whole and synced to disk (blocking; once per eval)."""
    EvalDir(eval_dir).write_plan(plan.to_dict())


def read_plan(eval_dir: str | os.PathLike[str]) -> EvalPlan:
    """The plan in ``<eval_dir>/eval.json``, every field checked.

    Raises:
        SiloError: ``eval_not_found`` (no such directory, no ``eval.json`` in it, or one that
            is not an eval plan), ``run_format_unsupported`` (written by a newer silo_async),
            ``eval_invalid`` (a field that is not what silo_async writes: the file was edited).
    """
    base = EvalDir(eval_dir)
    return EvalPlan.from_dict(base.read_plan(), base.file(EvalDir.EVAL))
