"""A tau2 domain as loaded once per process: its parsed data, tools, tasks and gold worlds.

Everything here is read-only once built and shared by every rollout of the process: the base
environment (its parsed database), the tools as tau2 publishes them, the tasks of the split, the
JSON of every untouched record, and one gold world per task, built the first time that task is
graded. A rollout's world is a copy-on-read clone of the base (:mod:`._world`).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import Any

from ..._errors import SiloError
from ._world import World, clone_environment, shared_json, snapshot_of

__all__ = ["Domain", "GoldActionError", "domain_module"]

DOMAINS = ("airline", "retail", "telecom", "mock")


def domain_module(domain: str) -> Any:
    """tau2's module for ``domain`` (``get_environment``, ``get_tasks``).

    Raises:
        SiloError: ``tau2_unavailable`` for a domain this tau2 does not have.
    """
    try:
        return importlib.import_module(f"tau2.domains.{domain}.environment")
    except ModuleNotFoundError as exc:
        raise SiloError(
            "tau2_unavailable",
            f'This tau2 has no domain "{domain}" ({exc}); domains: {", ".join(DOMAINS)}.',
            {"domain": domain},
        ) from exc


class GoldActionError(RuntimeError):
    """A gold action of a task raised in tau2: the task is broken, not the agent."""


class Domain:
    """One tau2 domain and task split, loaded once.

    Args:
        domain: ``airline``, ``retail``, ``telecom`` or ``mock``.
        split: the task split (``None``: the domain's default, as tau2's ``get_tasks()``).
    """

    def __init__(self, domain: str, split: str | None) -> None:
        from tau2.data_model.message import ToolCall

        module = domain_module(domain)
        self.name = domain
        self.split = split
        self.tool_call: Callable[..., Any] = ToolCall
        self.base = module.get_environment()
        tasks = module.get_tasks() if split is None else module.get_tasks(split)
        self.tasks: list[Any] = list(tasks)
        self.policy: str = self.base.get_policy()
        self.agent_tools = [_published(t) for t in self.base.get_tools()]
        self.user_tools = (
            [_published(t) for t in self.base.get_user_tools()]
            if self.base.user_tools is not None
            else []
        )
        self._shared: dict[str, dict[str, dict[Any, Any]]] | None = None
        self._gold: dict[str, World | GoldActionError] = {}
        self._lock = threading.Lock()

    # -- worlds ---------------------------------------------------------------------------------

    def world(self) -> World:
        """A fresh world: the base environment, cloned copy-on-read."""
        return World(clone_environment(self.base), self.tool_call)

    def setup(self, world: World, task: Any) -> None:
        """Give ``world`` the task's initial state, with tau2's own ``set_state``."""
        state = task.initial_state
        if state is None:
            return
        world.env.set_state(
            initialization_data=state.initialization_data,
            initialization_actions=state.initialization_actions,
            message_history=state.message_history or [],
        )

    def snapshot(self, world: World) -> dict[str, Any]:
        """The world as JSON: every field of the agent's database, then the user's (``user_``)."""
        shared = self._shared_json()
        out = snapshot_of(world.env.tools.db, shared["agent"])
        if world.env.user_tools is not None:
            out.update(snapshot_of(world.env.user_tools.db, shared["user"], "user_"))
        return out

    def _shared_json(self) -> dict[str, dict[str, dict[Any, Any]]]:
        with self._lock:
            if self._shared is None:
                base = self.base
                user = base.user_tools.db if base.user_tools is not None else None
                self._shared = {
                    "agent": shared_json(base.tools.db),
                    "user": shared_json(user) if user is not None else {},
                }
            return self._shared

    # -- the gold world -------------------------------------------------------------------------

    def gold(self, task: Any) -> World:
        """The task's gold world, built once per process as tau2's evaluator builds it.

        The task's initial state, then every gold action through ``make_tool_call`` (no
        syncing between them, as tau2 does).

        Raises:
            GoldActionError: a gold action raised (tau2 logs it and grades on; here the task is
                an environment fault).
        """
        with self._lock:
            found = self._gold.get(task.id)
            if found is None:
                found = self._gold[task.id] = self._build_gold(task)
        if isinstance(found, GoldActionError):
            raise found
        return found

    def _build_gold(self, task: Any) -> World | GoldActionError:
        world = self.world()
        self.setup(world, task)
        criteria = task.evaluation_criteria
        for action in (criteria.actions if criteria is not None else None) or []:
            try:
                world.env.make_tool_call(
                    tool_name=action.name, requestor=action.requestor, **action.arguments
                )
            except Exception as exc:
                return GoldActionError(
                    f"Gold action {action.action_id} of tau2 task {task.id} "
                    f"({action.name}) raised {type(exc).__name__}: {exc}. tau2's evaluator "
                    "logs this and grades on; the task itself is broken."
                )
        return world


def _published(tool: Any) -> tuple[str, str, dict[str, Any]]:
    """A tau2 tool as tau2 publishes it to its agents: name, description, parameters."""
    function = tool.openai_schema["function"]
    return str(function["name"]), str(function["description"]), dict(function["parameters"])
