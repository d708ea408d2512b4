"""How ``eval.json`` names what an eval ran, so that a resume can make it again.

Each loader of silo_async records how it made an object (:mod:`silo_async._origin`); what it
recorded becomes the plan's reference:

* the environment: ``{"name", "project"}``: the project it was loaded from, or ``null`` for
  one defined in code (which nothing can rebuild: it is given again);
* an agent: ``{"label", "agent": SPEC, "cwd"}`` for an ``--agent`` file or module,
  ``{"label", "model": "PROVIDER/MODEL", "options": {...}}`` for a model agent (its keywords,
  never its key or client), ``{"label", "code": "module:name"}`` for an importable function,
  and ``{"label"}`` alone for one nothing can rebuild (a closure);
* the user: ``null`` (each task's scripted user), ``{"model", "baseUrl", "options"}`` for a
  model user, ``{"label"}`` for a user factory nothing can rebuild;
* the executor: where the rollouts ran (informative: a resume may run elsewhere).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from .._environment import Environment
from .._origin import origin_of
from ..agents._spec import PROVIDERS

__all__ = [
    "MODEL_OPTIONS",
    "USER_OPTIONS",
    "AgentRef",
    "agent_ref",
    "environment_ref",
    "executor_config",
    "user_ref",
]

#: Model agent keywords recorded in ``eval.json`` (camelCase there); never the key or client.
MODEL_OPTIONS = {
    "base_url": "baseUrl",
    "max_turns": "maxTurns",
    "system": "system",
    "max_output_tokens": "maxOutputTokens",
    "temperature": "temperature",
    "max_retries": "maxRetries",
    "request_timeout": "requestTimeout",
    "strict": "strict",
    "token_ids": "tokenIds",
    "policy_version": "policyVersion",
}
#: A model user's keywords ``eval.json`` keeps, by their JSON names (never its key or client).
USER_OPTIONS = {
    "system": "system",
    "max_turns": "maxTurns",
    "max_output_tokens": "maxOutputTokens",
    "temperature": "temperature",
    "max_retries": "maxRetries",
    "request_timeout": "requestTimeout",
}

#: The loaders whose recipes (:mod:`silo_async._origin`) name what they made by a spec.
_FROM_FILE = "silo_async.agents._load.agent_from_spec"
_FROM_MODEL = "silo_async.agents._spec.from_spec"
_FROM_PROJECT = "silo_async.project._loader.load_environment"
_MODEL_USER = "silo_async.users._model.model_user"


def _qualified(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}"


def _model_defaults(spec: str | None) -> dict[str, Any]:
    """The keywords a model agent of ``spec`` takes when they are not given (its factory's)."""
    factory = PROVIDERS.get(str(spec).partition("/")[0].strip().lower())
    if factory is None:
        return {}
    params = inspect.signature(factory).parameters.values()
    return {
        p.name: p.default for p in params if p.name in MODEL_OPTIONS and p.default is not p.empty
    }


@attrs.frozen
class AgentRef:
    """How an agent of the plan can be made again.

    Attributes:
        label: the agent's label.
        kind: ``agent`` (an ``--agent`` spec), ``model`` (a model spec), ``code`` (an
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
            data["options"] = {MODEL_OPTIONS[k]: v for k, v in self.options.items()}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentRef:
        """Read an agent's entry back (its fields already checked)."""
        kind = next((k for k in ("agent", "model", "code") if isinstance(data.get(k), str)), "")
        options: dict[str, Any] = {}
        if kind == "model":
            names = {camel: snake for snake, camel in MODEL_OPTIONS.items()}
            given = data.get("options") or {}
            options = {names[k]: v for k, v in given.items() if k in names}
        return cls(
            label=str(data["label"]),
            kind=kind,
            spec=data.get(kind) if kind else None,
            cwd=data.get("cwd") if kind == "agent" else None,
            options=options,
        )

    @property
    def rebuildable(self) -> bool:
        """Something on disk or importable makes this agent again."""
        return bool(self.kind)

    def with_options(self, options: Mapping[str, Any]) -> AgentRef:
        """This model agent with ``options`` (keywords) set over its own."""
        return attrs.evolve(self, options={**self.options, **options})

    def effective_options(self) -> dict[str, Any]:
        """A model agent's keywords with its factory's defaults for those not recorded.

        ``max_turns=50`` given and ``max_turns`` left out make the same agent.
        """
        given = {k: v for k, v in self.options.items() if v is not None}
        return {**_model_defaults(self.spec), **given}

    def same_agent(self, other: AgentRef) -> bool:
        """Both name the same agent, as far as they can tell.

        Labels must match; specs (and a model agent's keywords, defaults included) are
        compared when both are of one kind (an agent file passed from Python as a function
        cannot be told from another, so it is not refused).
        """
        if not self.kind or not other.kind or self.kind != other.kind:
            return self.label == other.label
        mine = (self.label, self.kind, self.spec, self.effective_options())
        return mine == (other.label, other.kind, other.spec, other.effective_options())


def agent_ref(label: str, agent: Any) -> AgentRef:
    """How ``agent`` (labelled ``label``) can be made again, as far as anything can tell."""
    recipe = origin_of(agent)
    if recipe is not None:
        fn, args, kwargs = recipe
        if _qualified(fn) == _FROM_FILE and len(args) == 2:
            return AgentRef(label, "agent", args[0], cwd=str(args[1]))
        if _qualified(fn) == _FROM_MODEL and len(args) == 1:
            options = {k: v for k, v in kwargs.items() if k in MODEL_OPTIONS and v is not None}
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
        options = {USER_OPTIONS[k]: v for k, v in kwargs.items() if k in USER_OPTIONS}
        options = {k: v for k, v in options.items() if v is not None}
        return {"model": str(spec), "baseUrl": base_url, "options": options}
    return {"label": str(getattr(user, "__qualname__", type(user).__name__))}


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
