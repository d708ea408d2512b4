"""Environment: a world factory, its tools, its verifiers and its tasks — one runnable object.

Code-first environments and those on disk (``.silo/environments/<name>/``) are the same object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from ._errors import DefinitionError, SiloError
from ._family import TaskFamily
from ._instance import Instance, InstanceCache, Vary, gold_verifier
from ._jsonutil import Packed, pack, thaw
from ._task import Task
from ._taskuser import MESSAGE_USER
from ._tools import BoundTool, Tool, bind_tools, check_tools
from ._verify import Verifier

__all__ = ["Environment", "check_reserved_name"]


def check_reserved_name(names: Iterable[str], environment: str) -> None:
    """Refuse an environment with its own tool named ``message_user`` (docs/users.md).

    Raises:
        SiloError: ``tool_name_reserved``.
    """
    if MESSAGE_USER in names:
        raise SiloError(
            "tool_name_reserved",
            f'Environment "{environment}" has a tool named "{MESSAGE_USER}", the name reserved '
            "for the tool through which an agent talks to a task's user. Rename the tool (e.g. "
            f'"{MESSAGE_USER}_form") in the environment\'s tools registry.',
            {"environment": environment, "tool": MESSAGE_USER},
        )


def _tuple(items: Iterable[Any] | None) -> tuple[Any, ...]:
    if items is None:
        return ()
    if isinstance(items, str | bytes | dict) or not isinstance(items, Iterable):
        raise DefinitionError(
            f"Environment tools, verifiers, tasks and families must be lists; got "
            f"{type(items).__name__} "
            f"{items!r:.80}.",
            {"got": type(items).__name__},
        )
    return tuple(items)


@attrs.frozen(eq=False)
class Environment:
    """A runnable environment.

    Args:
        name: the environment's name (used in traces and run records).
        create_state: returns a *fresh* world on every call.
        tools: tool definitions, bound to each new world with :func:`bind_tools`.
        verifiers: the verifiers tasks refer to by id.
        tasks: the tasks that can be run.
        bind: alternative to ``tools`` for on-disk environments: ``bind(state)`` returns
            the runtime tools (the module's ``bind_tools``).
        setup: ``setup(world, task)`` prepares a fresh world for one task (a benchmark whose
            tasks each start from their own state): called on every rollout's world right
            after ``create_state()``, before anything is recorded, so what it does is part of
            the initial world. It changes the world in place; ``None``: every task starts from
            ``create_state()`` as it is.
        snapshot: ``snapshot(world) -> JSON`` for a world that is not JSON itself (objects of
            another library): the initial world the verifier gets as ``initial``, the state
            diff and the artifacts are made of its snapshots; the verifier's ``final`` stays
            the live world. ``None``: the world is JSON and is its own snapshot.
        policy: the rules every agent of this environment works under (a support desk's
            policy, a benchmark's domain policy): ``ctx.policy``, and the system prompt of the
            model agents (before their own ``system=``). ``None``: no policy.
        families: task families (:class:`~silo_async.TaskFamily`): their instances
            ``FAMILY#SEED`` are tasks of this environment too (docs/task-families.md).
        vary: optional ``vary(world, rng)``: changes a world's surface per instance (names,
            amounts, dates), keeping its keys, records and references. Hand-written tasks
            never see it.

    Raises:
        DefinitionError: duplicate task, verifier or family ids, duplicate tool names or an
            entry of ``tools`` that is not a tool, an entry of ``families`` that is not a
            family, a ``vary`` that is not callable, or both tools and bind.
        SiloError: ``tool_name_reserved`` for a tool named ``message_user`` (a ``bind``
            environment's tools are checked each time they are bound).
    """

    name: str
    create_state: Callable[[], Any]
    tools: tuple[Tool, ...] = attrs.field(default=(), converter=_tuple)
    verifiers: tuple[Verifier, ...] = attrs.field(default=(), converter=_tuple)
    tasks: tuple[Task, ...] = attrs.field(default=(), converter=_tuple)
    bind: Callable[[Any], Sequence[BoundTool | Tool]] | None = None
    setup: Callable[[Any, Task], Any] | None = attrs.field(default=None, kw_only=True)
    snapshot: Callable[[Any], Any] | None = attrs.field(default=None, kw_only=True)
    policy: str | None = attrs.field(default=None, kw_only=True)
    families: tuple[TaskFamily, ...] = attrs.field(default=(), converter=_tuple, kw_only=True)
    vary: Vary | None = attrs.field(default=None, kw_only=True)
    _tasks_by_id: dict[str, Task] = attrs.field(init=False, repr=False)
    _verifiers_by_id: dict[str, Verifier] = attrs.field(init=False, repr=False)
    _instances: InstanceCache = attrs.field(init=False, repr=False)
    _gold: dict[str, Verifier] = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.bind is not None and self.tools:
            raise DefinitionError(
                f'Environment "{self.name}" got both tools=... and bind=...; pass one.',
                {"environment": self.name},
            )
        if self.policy is not None and not isinstance(self.policy, str):
            raise DefinitionError(
                f'Environment "{self.name}" got policy={self.policy!r:.60}; a policy is text '
                "(a str) the agent works under.",
                {"environment": self.name},
            )
        for hook, what in (
            ("setup", "setup(world, task) that prepares a fresh world for one task"),
            ("snapshot", "snapshot(world) that returns the world as JSON"),
        ):
            value = getattr(self, hook)
            if value is not None and not callable(value):
                raise DefinitionError(
                    f'Environment "{self.name}" got {hook}={value!r:.60}; {hook} is a function '
                    f"{what}.",
                    {"environment": self.name},
                )
        check_tools(self.tools, f'Environment "{self.name}"')  # a typo fails here, not per run
        check_reserved_name((t.name for t in self.tools), self.name)
        object.__setattr__(self, "_tasks_by_id", _index(self.tasks, "Task", self.name))
        object.__setattr__(self, "_verifiers_by_id", _index(self.verifiers, "Verifier", self.name))
        families = _families(self.families, self.vary, self.name)
        as_json = None if self.snapshot is None else self.snapshot
        cache = InstanceCache(self.name, families, self.create_state, self.vary, as_json)
        object.__setattr__(self, "_instances", cache)
        gold = {
            f.id: gold_verifier(f, self._instance_of, self.runtime_tools, self.as_json)
            for f in self.families
        }
        object.__setattr__(self, "_gold", gold)

    def start(self, task: Task) -> Any:
        """A fresh world for one rollout of ``task``: ``create_state()``, then ``setup``."""
        world = self.create_state()
        if self.setup is not None:
            self.setup(world, task)
        return world

    def as_json(self, world: Any) -> Any:
        """The world as JSON: its ``snapshot``, or the world itself when it is JSON."""
        return world if self.snapshot is None else self.snapshot(world)

    def runtime_tools(self, state: Any) -> dict[str, BoundTool]:
        """The tools a rollout on ``state`` calls, by name, in registry order.

        Raises:
            SiloError: ``tool_name_reserved`` when a ``bind`` environment's tool is named
                ``message_user``.
        """
        if self.bind is None:
            # The definitions were checked once, when the environment was made.
            return {tool.name: BoundTool(tool, state) for tool in self.tools}
        return {tool.name: tool for tool in self.bind_tools(state)}

    def bind_tools(self, state: Any) -> list[BoundTool]:
        """The runtime tools for one world, in registry order.

        Raises:
            SiloError: ``tool_name_reserved`` when a bound tool is named ``message_user``.
        """
        if self.bind is None:
            return bind_tools(state, self.tools)
        bound = bind_tools(state, self.bind(state))
        check_reserved_name((t.name for t in bound), self.name)
        return bound

    def task(self, task_id: str) -> Task:
        """The task with this id: a hand-written one, or an instance ``FAMILY#SEED``.

        Raises:
            SiloError: ``task_not_found``, listing the ids that exist (for an instance id: a
                malformed seed, an unknown family, or a seed whose ``sample`` raised
                :class:`~silo_async.NoInstance`, naming its reason); ``family_invalid`` when
                the family fails to build the instance.
        """
        found = self._tasks_by_id.get(task_id)
        if found is None:
            if "#" in task_id:
                return self._instances.get(task_id).task
            known = ", ".join(sorted(self._tasks_by_id)) or "none"
            raise SiloError(
                "task_not_found",
                f'Task "{task_id}" was not found in environment "{self.name}". Available: {known}.',
                {"environment": self.name, "task": task_id, "available": sorted(self._tasks_by_id)},
            )
        return found

    def family(self, family_id: str) -> TaskFamily:
        """The task family with this id.

        Raises:
            SiloError: ``task_not_found`` naming the families that exist.
        """
        return self._instances.family(family_id)

    def instances(
        self, family: str, count: int = 10, *, split: str = "test", start: int = 0
    ) -> list[Task]:
        """The first ``count`` distinct instances of ``family`` in ``split``, from seed ``start``.

        The rule of ``eval --family`` (and ``task sample``): seeds without an instance are
        skipped, only distinct params count, and at most ``100 * count`` seeds are looked at.

        Raises:
            SiloError: ``task_not_found`` for an unknown family, or fewer than ``count``
                instances found (naming family, split and count); ``family_invalid``.
            ValueError: ``count`` < 1, ``start`` < 0, or a split other than train/test.
        """
        return [i.task for i in self._instances.scan(family, count, split, start)]

    def instance(self, task_id: str) -> Instance:
        """The built instance ``FAMILY#SEED`` (its task, world and gold), kept for reuse.

        Raises:
            SiloError: as :meth:`task` for an instance id.
        """
        return self._instances.get(task_id)

    def _instance_of(self, task: Task) -> Instance:
        if task.family is None:
            raise SiloError(
                "task_invalid",
                f'Task "{task.id}" is not an instance of a task family.',
                {"environment": self.name, "task": task.id},
            )
        return self._instances.get(task.id)

    def fresh_world(self, task: Task) -> tuple[Any, Packed]:
        """A fresh world for one rollout of ``task``, and its snapshot as JSON, packed.

        A hand-written task's world is :meth:`start`'s; an instance's is a copy of its built
        world (``create_state()``, then ``vary``), built once and kept: ``setup`` is for
        hand-written tasks only. A JSON world's kept copy is its snapshot too.
        """
        if task.family is None:
            state = self.start(task)
        else:
            kept = self._instance_of(task).snapshot
            if self.snapshot is None:
                return thaw(kept), kept
            state = thaw(kept)
        return state, pack(self.as_json(state))

    def initial_world(self, task: Task) -> Any:
        """A fresh copy of ``task``'s initial world (what a replay starts from)."""
        if task.family is None:
            return self.start(task)
        return self._instance_of(task).fresh_world()

    def verifier_for(self, task: Task) -> Verifier:
        """The verifier that grades ``task`` (an instance's: its family's gold grading).

        Raises:
            SiloError: ``task_invalid`` when the task names a verifier that is not registered.
        """
        if task.family is not None:
            gold = self._gold.get(task.family)
            if gold is not None:
                return gold
        found = self._verifiers_by_id.get(task.verifier_id)
        if found is None:
            raise SiloError(
                "task_invalid",
                f'Task "{task.id}" names verifier "{task.verifier_id}", which is not registered '
                f'in environment "{self.name}".',
                {"environment": self.name, "task": task.id, "verifier": task.verifier_id},
            )
        return found


def _families(families: tuple[Any, ...], vary: Any, env: str) -> dict[str, TaskFamily]:
    for index, family in enumerate(families):
        if not isinstance(family, TaskFamily):
            raise DefinitionError(
                f'families[{index}] of environment "{env}" is a {type(family).__name__}, not a '
                "silo.TaskFamily.",
                {"environment": env, "index": index},
            )
    if vary is not None and not callable(vary):
        raise DefinitionError(
            f'Environment "{env}" vary= must be a function vary(world, rng); got '
            f"{type(vary).__name__}.",
            {"environment": env},
        )
    by_id: dict[str, TaskFamily] = _index(families, "Task family", env)
    return by_id


def _index(items: tuple[Any, ...], kind: str, env: str) -> dict[str, Any]:
    index: dict[str, Any] = {}
    for item in items:
        if item.id in index:
            raise DefinitionError(
                f'{kind} id "{item.id}" is declared twice in environment "{env}".',
                {"environment": env, "id": item.id},
            )
        index[item.id] = item
    return index
