"""``eval.json``: an eval's plan on disk, everything needed to run it again (DESIGN §15).

Written (whole, synced to disk) before the first rollout starts, never changed after::

    {"format": "silo_async.eval-plan", "formatVersion": 1, "evalId", "createdAt",
     "environment": {"name", "project"},            project: null for a code-first one
     "tasks": [...], "agents": [{"label", "agent" | "model" | "code", ...}],
     "runs", "prices", "faults", "faultSeed", "baseline",
     "limits": {"maxToolCalls", "timeoutMs", "tokenLimit"},
     "concurrency", "executor": {"executor", ...}}

``faults`` is the fault plan's rules (``[{"kind", "p", "tools", "ms"}]``, as in a fault file) or
null, ``faultSeed`` its seed and ``baseline`` whether the plan also runs without faults
(DESIGN §14): a resume meets the same faults, and refuses other ones.

An agent is recorded by how it can be made again: ``{"label", "agent": SPEC, "cwd"}`` for an
``--agent`` file or module, ``{"label", "model": "PROVIDER/MODEL", "options": {...}}`` for a
``--model`` agent (its keywords, never its key), ``{"label", "code": "module:name"}`` for an
importable function, and ``{"label"}`` alone for an agent nothing can rebuild (a closure): that
eval resumes only from Python, with the agent passed again.

Resuming compares what the caller gives with the plan, setting by setting (:data:`SETTINGS`,
by their key in :meth:`EvalPlan.settings`): a setting given with another value is refused with
``resume_conflict``. A setting that is one JSON value (``runs``, ``prices``, ``faults``,
``faultSeed``, ``baseline``, and ``user``: a model user's spec, server and options) is one
line of :data:`OPTIONS`: it is then written, read back and compared with nothing else to
change here (its keyword and flag pass it through, as they do for the eval itself).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .._environment import Environment
from .._errors import SiloError
from .._faults import Faults
from .._jsonutil import compact_json
from .._limits import Limits
from .._origin import origin_of
from .._trace import utc_now_iso
from ..runs import EvalDir
from ..runs._evaldir import PLAN_FORMAT, PLAN_VERSION

__all__ = [
    "FORMAT",
    "OPTIONS",
    "SETTINGS",
    "VERSION",
    "AgentRef",
    "EvalPlan",
    "Option",
    "agent_ref",
    "check_given",
    "environment_ref",
    "executor_config",
    "new_plan",
    "read_plan",
    "rebuilt_user",
    "user_ref",
    "write_plan",
]

#: ``eval.json``'s ``format`` marker and version (the directory's reader checks them).
FORMAT = PLAN_FORMAT
VERSION = PLAN_VERSION


@attrs.frozen
class Option:
    """A plan setting that is one JSON value, as ``eval.json`` holds it.

    Attributes:
        keyword: ``evaluate``'s keyword for it.
        flag: ``silo-async eval``'s flag for it.
        default: its value when not given (a resume then takes the plan's).
    """

    keyword: str
    flag: str
    default: Any = None


#: The plan's one-value settings, by their key in ``eval.json`` (and in its order).
OPTIONS: dict[str, Option] = {
    "runs": Option("runs", "--runs", 1),
    "prices": Option("prices", "--prices", None),
    "faults": Option("faults", "--faults", None),
    "faultSeed": Option("faults", "--fault-seed", 0),
    "baseline": Option("baseline", "--baseline", False),
    "user": Option("user", "--user-model", None),
}

#: The settings a resume compares, by their key in :meth:`EvalPlan.settings`: how Python
#: (``evaluate``'s keyword) and the CLI (its flag) name each one in a ``resume_conflict``.
SETTINGS: dict[str, tuple[str, str]] = {
    "environment": ("env", "--env"),
    "tasks": ("tasks", "--task/--tasks"),
    "agents": ("agents", "--agent/--model"),
    "maxToolCalls": ("max_tool_calls", "--max-tool-calls"),
    "timeoutMs": ("timeout", "--timeout-ms"),
    "tokenLimit": ("token_limit", "--token-limit"),
    **{key: (option.keyword, option.flag) for key, option in OPTIONS.items()},
}

#: Model agent keywords recorded in ``eval.json`` (camelCase there); never the key or client.
_MODEL_OPTIONS = {
    "base_url": "baseUrl",
    "max_turns": "maxTurns",
    "system": "system",
    "max_output_tokens": "maxOutputTokens",
    "temperature": "temperature",
    "max_retries": "maxRetries",
    "request_timeout": "requestTimeout",
    "strict": "strict",
}

#: The loaders whose recipes (:mod:`silo_async._origin`) name an agent by its spec.
_FROM_FILE = "silo_async._agentload.agent_from_spec"
_FROM_MODEL = "silo_async.agents._spec.from_spec"
_FROM_PROJECT = "silo_async.project._loader.load_environment"


@attrs.frozen
class AgentRef:
    """How an agent of the plan can be made again.

    Attributes:
        label: the agent's label.
        kind: ``agent`` (an ``--agent`` spec), ``model`` (a ``--model`` spec), ``code`` (an
            importable ``module:name``) or ``""`` (nothing can rebuild it).
        spec: the spec (None when ``kind`` is ``""``).
        cwd: the directory an ``agent`` spec is resolved in.
        options: a model agent's keywords, as ``from_spec`` takes them.
    """

    label: str
    kind: str = ""
    spec: str | None = None
    cwd: str | None = None
    options: dict[str, Any] = attrs.field(factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The agent's entry in ``eval.json``."""
        data: dict[str, Any] = {"label": self.label}
        if self.kind:
            data[self.kind] = self.spec
        if self.kind == "agent":
            data["cwd"] = self.cwd
        if self.kind == "model":
            data["options"] = {_MODEL_OPTIONS[k]: v for k, v in self.options.items()}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentRef:
        """Read an agent's entry back."""
        kind = next((k for k in ("agent", "model", "code") if isinstance(data.get(k), str)), "")
        options: dict[str, Any] = {}
        if kind == "model":
            names = {camel: snake for snake, camel in _MODEL_OPTIONS.items()}
            given = data.get("options") or {}
            options = {names[k]: v for k, v in given.items() if k in names}
        return cls(
            label=str(data["label"]),
            kind=kind,
            spec=data.get(kind) if kind else None,
            cwd=data.get("cwd") if kind == "agent" else None,
            options=options,
        )

    def same_agent(self, other: AgentRef) -> bool:
        """Both name the same agent, as far as they can tell.

        Labels must match; specs are compared when both are of one kind (an agent file passed
        from Python as a function cannot be told from another, so it is not refused).
        """
        if not self.kind or not other.kind or self.kind != other.kind:
            return self.label == other.label
        mine = (self.label, self.kind, self.spec, self.options)
        return mine == (other.label, other.kind, other.spec, other.options)


def _qualified(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}"


def agent_ref(label: str, agent: Any) -> AgentRef:
    """How ``agent`` (labelled ``label``) can be made again, as far as anything can tell."""
    recipe = origin_of(agent)
    if recipe is not None:
        fn, args, kwargs = recipe
        if _qualified(fn) == _FROM_FILE and len(args) == 2:
            return AgentRef(label, "agent", args[0], cwd=str(args[1]))
        if _qualified(fn) == _FROM_MODEL and len(args) == 1:
            options = {k: v for k, v in kwargs.items() if k in _MODEL_OPTIONS and v is not None}
            return AgentRef(label, "model", str(args[0]), options=options)
    module, name = getattr(agent, "__module__", None), getattr(agent, "__qualname__", None)
    if (
        isinstance(module, str)
        and isinstance(name, str)
        and name.isidentifier()
        and module != "__main__"
        and not module.startswith("_silo_")
    ):
        return AgentRef(label, "code", f"{module}:{name}")
    return AgentRef(label)


#: The recipe (:mod:`silo_async._origin`) of a model user: ``model_user(spec, base_url, ...)``.
_MODEL_USER = "silo_async.users._model.model_user"
#: A model user's keywords eval.json keeps, by their JSON names (never its key or client).
_USER_OPTIONS = {
    "system": "system",
    "max_turns": "maxTurns",
    "max_output_tokens": "maxOutputTokens",
    "temperature": "temperature",
    "max_retries": "maxRetries",
    "request_timeout": "requestTimeout",
}


def user_ref(user: Any) -> dict[str, Any] | None:
    """How the eval's ``user=`` can be made again: eval.json's ``user`` (None: scripted users).

    ``{"model": "PROVIDER/MODEL", "baseUrl", "options": {...}}`` for a model user (its keywords,
    never its key), ``{"label"}`` for a user factory nothing can rebuild (that eval resumes only
    with the factory given again).
    """
    if user is None:
        return None
    recipe = origin_of(user)
    if recipe is not None and _qualified(recipe[0]) == _MODEL_USER and recipe[1]:
        spec, base_url = recipe[1][0], recipe[1][1] if len(recipe[1]) > 1 else None
        kwargs = recipe[2]
        options = {_USER_OPTIONS[k]: v for k, v in kwargs.items() if k in _USER_OPTIONS}
        options = {k: v for k, v in options.items() if v is not None}
        return {"model": str(spec), "baseUrl": base_url, "options": options}
    return {"label": str(getattr(user, "__qualname__", type(user).__name__))}


def rebuilt_user(ref: Mapping[str, Any] | None) -> Any:
    """The ``user=`` that :func:`user_ref` recorded as ``ref`` (None: scripted users).

    Raises:
        SiloError: ``resume_conflict`` when the eval played a user factory nothing can rebuild.
    """
    if ref is None:
        return None
    if "model" not in ref:
        raise SiloError(
            "resume_conflict",
            f"The eval played the users of {ref.get('label')!r}, which cannot be rebuilt from "
            "eval.json: pass the same user= again to resume it.",
            {"setting": "user", "given": None, "planned": ref.get("label")},
        )
    from ..users import model_user  # imports an SDK: only when the eval played a model user

    names = {v: k for k, v in _USER_OPTIONS.items()}
    options = {names[k]: v for k, v in (ref.get("options") or {}).items() if k in names}
    return model_user(str(ref["model"]), ref.get("baseUrl"), **options)


def environment_ref(env: Environment) -> dict[str, Any]:
    """``{"name", "project"}``: the project the environment was loaded from (None: code)."""
    recipe = origin_of(env)
    project = None
    if recipe is not None and _qualified(recipe[0]) == _FROM_PROJECT and len(recipe[1]) == 2:
        project = str(Path(recipe[1][1]).absolute())
    return {"name": env.name, "project": project}


def executor_config(executor: Any) -> dict[str, Any]:
    """The executor's entry in ``eval.json`` (informative: a resume may use another)."""
    if executor is None or type(executor).__name__ == "LocalExecutor":
        return {"executor": "local"}
    if type(executor).__name__ == "RayExecutor":
        return {
            "executor": "ray",
            "address": getattr(executor, "address", None),
            "workers": getattr(executor, "workers", None),
            "workerConcurrency": getattr(executor, "concurrency", None),
        }
    return {"executor": type(executor).__name__}


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
            ``faultSeed``, ``baseline``), by key.
        executor: where the rollouts ran (a resume may change it).
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
    def baseline(self) -> bool:
        """The plan also runs without faults (``eval --baseline``)."""
        return bool(self.options["baseline"])

    def settings(self) -> dict[str, Any]:
        """The settings a resume compares (keys of :data:`SETTINGS`), as ``eval.json`` has them."""
        return {
            "environment": self.environment["name"],
            "tasks": list(self.tasks),
            "agents": list(self.agents),
            **self.limits.config(),
            **self.options,
        }

    def to_dict(self) -> dict[str, Any]:
        """The ``eval.json`` document."""
        return {
            "format": FORMAT,
            "formatVersion": VERSION,
            "evalId": self.eval_id,
            "createdAt": self.created_at,
            "environment": dict(self.environment),
            "tasks": list(self.tasks),
            "agents": [a.to_dict() for a in self.agents],
            **self.options,
            "limits": self.limits.config(),
            "concurrency": self.concurrency,
            "executor": dict(self.executor),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalPlan:
        """Read ``eval.json`` back (its version already checked).

        Raises:
            KeyError, TypeError, ValueError: a field is missing or of the wrong kind.
        """
        limits = data["limits"]
        timeout_ms = limits.get("timeoutMs")
        return cls(
            eval_id=str(data["evalId"]),
            created_at=str(data.get("createdAt", "")),
            environment={
                "name": str(data["environment"]["name"]),
                "project": data["environment"].get("project"),
            },
            tasks=[str(t) for t in data["tasks"]],
            agents=[AgentRef.from_dict(a) for a in data["agents"]],
            limits=Limits(
                int(limits["maxToolCalls"]),
                None if timeout_ms is None else timeout_ms / 1000,
                limits.get("tokenLimit"),
            ),
            concurrency=int(data["concurrency"]),
            options={key: data.get(key, option.default) for key, option in OPTIONS.items()},
            executor=dict(data.get("executor") or {"executor": "local"}),
        )


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
    """The plan of a new eval (started now); ``options`` by their key in :data:`OPTIONS`."""
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
    """The plan in ``<eval_dir>/eval.json``.

    Raises:
        SiloError: ``eval_not_found`` (no such directory, no ``eval.json`` in it, or one that
            is not an eval plan), ``run_format_unsupported`` (written by a newer silo_async).
    """
    base = EvalDir(eval_dir)
    data = base.read_plan()
    try:
        return EvalPlan.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        path = base.file(EvalDir.EVAL)
        raise SiloError(
            "eval_not_found",
            f'No eval to resume in "{os.fspath(eval_dir)}": {path} is damaged '
            f"({type(exc).__name__}: {exc}).",
            {"evalDir": os.fspath(eval_dir)},
        ) from None


def _shown(value: Any) -> str:
    if isinstance(value, list) and value and isinstance(value[0], AgentRef):
        return compact_json([a.to_dict() for a in value])
    return compact_json(value)


def check_given(
    plan: EvalPlan, given: Mapping[str, Any], eval_dir: str | os.PathLike[str], *, cli: bool
) -> None:
    """Refuse a setting given with a value other than the plan's.

    Args:
        plan: the eval's plan.
        given: the settings the caller gave, by their key in :data:`SETTINGS`, in the form
            :meth:`EvalPlan.settings` has them.
        eval_dir: the eval directory (named in the message).
        cli: name settings by their flags (else by ``evaluate``'s keywords).

    Raises:
        SiloError: ``resume_conflict`` naming the first setting that differs, both values and
            the way out.
    """
    recorded = plan.settings()
    for key, value in given.items():
        planned = recorded[key]
        if key == "agents":
            same = len(value) == len(planned) and all(
                a.same_agent(b) for a, b in zip(value, planned, strict=True)
            )
        else:
            same = value == planned
        if same:
            continue
        keyword, flag = SETTINGS[key]
        name = flag if cli else f"{keyword}="
        plan_file = EvalDir(eval_dir).file(EvalDir.EVAL)
        raise SiloError(
            "resume_conflict",
            f"{name} differs from the plan of eval {plan.eval_id} ({key}: {_shown(value)} given, "
            f"{_shown(planned)} in {plan_file}): a resumed eval runs its own plan. Leave "
            f"{name.rstrip('=')} out (or give the plan's value), or start a new eval.",
            {"setting": key, "given": _shown(value), "planned": _shown(planned)},
        )
