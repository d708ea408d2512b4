"""A silo world as a TRL GRPO environment (docs/training.md): environment_factory and reward.

TRL's ``GRPOTrainer(environment_factory=...)`` makes one instance per rollout slot, calls
``reset(**row)`` before generating (a returned string is appended to the prompt), offers every
other public method to the model as a tool (read through ``transformers.utils.get_json_schema``:
the signature, the type hints, the docstring's ``Args:``), and hands the instances to the reward
functions as ``environments=``. So the class made here has exactly ``reset`` and one method per
tool, and the reward lives in :func:`reward`::

    from trl import GRPOConfig, GRPOTrainer
    from silo_async.integrations.trl import environment_factory, reward

    CRM = environment_factory("crm")                      # or a silo.Environment
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": ""}], "task": t}
                                 for t in ["TASK-001", "TASK-008"]])
    trainer = GRPOTrainer(model="Qwen/Qwen3-0.6B", train_dataset=dataset,
                          reward_funcs=reward, environment_factory=CRM, args=GRPOConfig(...))

Each instance drives one :func:`silo_async.episode` at a time on a background event loop (one per
process, shared by every instance; calls from many threads at once are safe), so rollouts get the
same limits, trace, grading and artifacts as ``silo.run``. Nothing here imports trl or
transformers.
"""

from __future__ import annotations

import copyreg
import itertools
import operator
import os
import pickle
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from .._environment import Environment
from .._errors import SiloError
from .._jsonutil import compact_json
from .._limits import Limits, resolve_limits
from .._result import RunResult
from .._tools import ToolResult, ToolSpec
from .._user import MESSAGE_USER_TOOL
from ..project import load_environment
from ._held import HeldEpisode
from ._methods import method_specs
from ._portal import call

__all__ = ["environment_factory", "reward"]

#: Names TRL gives a meaning of its own: a tool called so gets another method name.
_RESERVED = ("reset", "get_reward")

#: The limits an episode gets by default here: no time limit (a trainer's generation is slow).
_DEFAULT_LIMITS = Limits(timeout=None)


class _Observation(dict[str, Any]):
    """A tool's dict output whose ``str()`` is compact JSON: what TRL shows the model."""

    def __str__(self) -> str:
        return compact_json(self)


def _observation(result: ToolResult) -> Any:
    """A tool method's return value: the output, or a rejected call's error message."""
    output = result.output
    if result.is_error:
        message = output.get("message") if isinstance(output, dict) else None
        return message if isinstance(message, str) else _as_text(output)
    if isinstance(output, dict):
        return _Observation(output)
    return _as_text(output)


def _as_text(value: Any) -> str:
    # A list would reach TRL as content blocks and anything else through str(): JSON text
    # keeps what the model reads the same as in an exported trajectory.
    return value if isinstance(value, str) else compact_json(value)


class _SiloEnvironment:
    """What every generated class shares (all private but ``reset``)."""

    _silo_env: Environment
    _silo_tasks: tuple[str, ...]
    _silo_options: dict[str, Any]
    _silo_order: itertools.count[int]
    _silo_order_lock: threading.Lock

    def __init__(self) -> None:
        self._silo_session: HeldEpisode | None = None
        self._silo_lock = threading.Lock()

    def reset(self, **row: Any) -> str:
        """Open an episode for ``row["task"]`` (the next served task if absent); its instruction.

        An episode this instance still had open is finished first (``completed``).

        Raises:
            SiloError: ``task_not_found`` for a task this class does not serve.
        """
        task_id = self._silo_pick(row.get("task"))
        with self._silo_lock:
            previous, self._silo_session = self._silo_session, None
            if previous is not None:
                previous.close(None)
            session = HeldEpisode(self._silo_env, task_id, self._silo_options)
            self._silo_session = session
            return str(session.episode.task)

    @classmethod
    def _silo_pick(cls, task: Any) -> str:
        if task is None:
            with cls._silo_order_lock:
                return cls._silo_tasks[next(cls._silo_order) % len(cls._silo_tasks)]
        if not isinstance(task, str) or task not in cls._silo_tasks:
            served = ", ".join(cls._silo_tasks)
            raise SiloError(
                "task_not_found",
                f'Task {task!r} is not served by this environment ("{cls._silo_env.name}"). '
                f"Served: {served}.",
                {
                    "environment": cls._silo_env.name,
                    "task": task,
                    "available": list(cls._silo_tasks),
                },
            )
        return task

    def _silo_call(self, tool: str, tool_input: dict[str, Any]) -> Any:
        session = self._silo_session
        if session is None:
            raise RuntimeError("No episode is open: call reset(**row) before calling a tool.")
        return _observation(call(session.episode.call_tool, tool, tool_input))

    def _silo_finish(self, answer: Any, token_ids: Sequence[int] | None = None) -> RunResult:
        with self._silo_lock:
            session = self._silo_session
            if session is None:
                raise RuntimeError("No episode to score: reset(**row) was never called.")
            if token_ids is not None and not session.episode.finished:
                # The tokens TRL sampled, kept with the rollout: its trace and
                # `runs export` carry them, exactly as TRL gave them.
                session.record_model_step(
                    completion_token_ids=[operator.index(t) for t in token_ids],
                    message={"role": "assistant", "content": answer, "toolCalls": []},
                )
            return session.close(answer)


@attrs.frozen
class _Recipe:
    """How to build a class again: what :func:`environment_factory` was given, made absolute.

    An environment named in a project travels as the project's path and the name, and is
    loaded again where the class is unpickled; a code-first environment travels as itself
    (by Python's pickling: its tools and verifiers must be importable there).
    """

    env: Environment | str
    project: str | None
    tasks: tuple[str, ...] | None
    limits: Limits
    runs_dir: str | None
    agent_name: str


class _SiloFactoryClass(type):
    """The type of every generated class: pickled by value (its recipe), never by reference.

    TRL's async trainer pickles the ``environment_factory`` it is given into other processes;
    a class made at run time cannot be found there by name, so it travels as the arguments
    that made it (see :func:`_rebuild`).
    """

    _silo_recipe: _Recipe


#: Classes rebuilt in this process, by recipe: unpickling one class twice gives the same class.
_rebuilt: dict[_Recipe, type[Any]] = {}
_rebuilt_lock = threading.Lock()


def _rebuild(recipe: _Recipe) -> type[Any]:
    """The class a recipe describes, built once per process (what unpickling calls)."""
    key_ok = isinstance(recipe.env, str)
    with _rebuilt_lock:
        if key_ok and recipe in _rebuilt:
            return _rebuilt[recipe]
    cls = environment_factory(
        recipe.env,
        recipe.tasks,
        runs_dir=recipe.runs_dir,
        agent_name=recipe.agent_name,
        cwd=recipe.project,
        limits=recipe.limits,
    )
    if key_ok:
        with _rebuilt_lock:
            cls = _rebuilt.setdefault(recipe, cls)
    return cls


def _reduce_class(cls: _SiloFactoryClass) -> tuple[Any, tuple[_Recipe]]:
    recipe = cls._silo_recipe
    if not isinstance(recipe.env, str):
        try:
            pickle.dumps(recipe.env)
        except Exception as exc:
            raise pickle.PicklingError(
                f"{cls.__name__} was made from a code-first Environment that cannot be pickled "
                f"({exc}). Give environment_factory the environment's name in a project "
                "(environment_factory(NAME, cwd=PROJECT)) so the class travels as that name."
            ) from exc
    return _rebuild, (recipe,)


# Registered for the metaclass: pickle (and multiprocessing's ForkingPickler) consult
# copyreg's table for a class's type before falling back to saving the class by name.
copyreg.pickle(_SiloFactoryClass, _reduce_class)


def _class_name(env_name: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", env_name)
    name = "".join(w[:1].upper() + w[1:] for w in words) + "Environment"
    return name if name[0].isalpha() else f"Silo{name}"


def _served(env: Environment, tasks: Sequence[str] | None) -> tuple[str, ...]:
    if isinstance(tasks, str):
        raise TypeError("tasks must be a list of task ids, not one string.")
    ids = tuple(t.id for t in env.tasks) if tasks is None else tuple(tasks)
    for task_id in ids:
        env.task(task_id)  # raises task_not_found now, not at the first reset
    if not ids:
        raise ValueError(f'Environment "{env.name}" has no task to serve.')
    return ids


def _agent_specs(env: Environment, served: Sequence[str]) -> list[ToolSpec]:
    """The tools the agent may call on the served tasks, as the class's methods.

    ``message_user`` comes last when a served task has a user (docs/users.md); a tool that
    belongs to the user on every served task (``user.tools``) is not the agent's to call.
    """
    scripts = [env.task(task_id).user_script for task_id in served]
    owned = [set(s.tools) if s is not None else set() for s in scripts]
    users_only = set.intersection(*owned) if owned else set()
    specs = [t.spec for t in env.bind_tools(env.create_state()) if t.name not in users_only]
    if any(s is not None for s in scripts):
        specs.append(MESSAGE_USER_TOOL.spec)
    return specs


def environment_factory(
    env: Environment | str,
    tasks: Sequence[str] | None = None,
    timeout: float | None = None,
    *,
    max_tool_calls: int = 100,
    runs_dir: str | os.PathLike[str] | None = None,
    agent_name: str = "trl",
    cwd: str | os.PathLike[str] | None = None,
    limits: Limits | None = None,
) -> type[Any]:
    """A class for TRL's GRPO ``environment_factory``: ``reset`` plus one method per tool.

    ``reset(**row)`` opens an episode for ``row["task"]`` (a task id; without one, the served
    tasks in order, round robin) and returns its instruction. Each tool method has the tool's
    parameters as keyword-only arguments (typed from its JSON Schema; required ones without a
    default, optional ones defaulting to ``None``, which is left out of the call), its
    description and an ``Args:`` section as docstring, and a safe name when the tool's is not
    an identifier (or is ``reset`` / ``get_reward``). It returns the tool's output — a dict
    (printed as compact JSON), a str, or anything else as compact JSON text — or, for a
    rejected call, its error message: an observation for the model, never an exception.

    Args:
        env: the environment, or the name of one in the project at ``cwd``.
        tasks: the task ids served (default: all, in the environment's order).
        timeout: seconds an episode may last (default ``None``: no time limit).
        max_tool_calls: calls executed before the next one ends the episode.
        runs_dir: write each episode's artifacts to ``runs_dir/<run_id>/`` (exportable with
            ``silo-async runs export``); a relative path is taken from the current directory
            now, so the class writes to the same place wherever it is unpickled. Default: none.
        agent_name: the agent label recorded in traces.
        cwd: the project directory when ``env`` is a name (default: the current directory).
        limits: an episode's limits as one :class:`~silo_async.Limits` (instead of
            ``timeout`` and ``max_tool_calls``; its ``token_limit`` applies too).

    Returns:
        The class (call it with no arguments for an instance). It pickles by value: it
        travels as these arguments (an environment named here as the project's absolute path
        and the name) and is rebuilt where it is unpickled, once per process, with the same
        ``runs_dir`` — what TRL's async trainer does with its ``environment_factory``.

    Raises:
        SiloError: an unknown environment or task id.
        ValueError: invalid limits, or no task to serve.
        TypeError: ``limits=`` given together with a limit keyword.
    """
    # Invalid limits fail here, not at the first reset.
    resolved = resolve_limits(limits, max_tool_calls, timeout, defaults=_DEFAULT_LIMITS)
    project = str(Path(os.getcwd() if cwd is None else cwd).absolute())
    runs = None if runs_dir is None else Path(runs_dir).absolute()
    recipe = _Recipe(
        env=env,
        project=project if isinstance(env, str) else None,
        tasks=None if tasks is None or isinstance(tasks, str) else tuple(tasks),
        limits=resolved,
        runs_dir=None if runs is None else str(runs),
        agent_name=agent_name,
    )
    if isinstance(env, str):
        env = load_environment(env, project)
    served = _served(env, tasks)
    specs = _agent_specs(env, served)
    name = _class_name(env.name)
    namespace: dict[str, Any] = {
        "__doc__": f'The "{env.name}" world as a TRL environment (silo_async).',
        "__module__": __name__,
        "_silo_env": env,
        "_silo_tasks": served,
        "_silo_options": {
            "limits": resolved,
            "runs_dir": runs,
            "agent_name": agent_name,
        },
        "_silo_order": itertools.count(),
        "_silo_order_lock": threading.Lock(),
        "_silo_recipe": recipe,
    }
    for spec in method_specs(specs, _RESERVED):
        namespace[spec.name] = spec.bind(_SiloEnvironment._silo_call, name)
    cls = _SiloFactoryClass(name, (_SiloEnvironment,), namespace)
    if isinstance(recipe.env, str):
        with _rebuilt_lock:  # unpickled in this process, it is this very class
            _rebuilt.setdefault(recipe, cls)
    return cls


def _final_text(completion: Any) -> str | None:
    """The answer in a completion: its text, or its last assistant message's text."""
    if isinstance(completion, str):
        return completion
    messages = completion if isinstance(completion, list) else [completion]
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return content if isinstance(content, str) else None
    return None


def reward(
    completions: Sequence[Any], environments: Sequence[Any], **kwargs: Any
) -> list[float | None]:
    """TRL reward function: finish each instance's episode and return its reward.

    The text of each completion (its last assistant message) is the episode's answer, graded
    by the task's verifier as a ``silo.run`` agent's output would be. Calling it again returns
    the same rewards. A rollout whose reward is not evidence (``rewardValid`` false: a tool or
    the verifier raised) gets ``None``, which TRL leaves out of the loss instead of learning
    from a 0 the policy did not earn.

    The token ids TRL sampled for each completion (its ``completion_ids`` keyword) are kept
    with the rollout: recorded as a model step's ``completionTokenIds`` before the episode is
    finished, so a rollout written with ``runs_dir=`` exports with its exact tokens.

    Args:
        completions: the completions, one per instance (text, or a list of chat messages).
        environments: the instances TRL made with the class from :func:`environment_factory`.
        **kwargs: TRL's other arguments: ``completion_ids`` (one list of token ids per
            completion) is recorded; the others (prompts, dataset columns...) are ignored.

    Returns:
        One reward in [0, 1] per instance, in order; ``None`` for an invalid rollout.

    Raises:
        TypeError: an instance that is not from :func:`environment_factory`.
        ValueError: completions and environments of different lengths.
    """
    if len(completions) != len(environments):
        raise ValueError(
            f"{len(completions)} completions for {len(environments)} environments: "
            "TRL passes one of each per rollout."
        )
    ids = kwargs.get("completion_ids")
    rewards: list[float | None] = []
    for index, (completion, instance) in enumerate(zip(completions, environments, strict=True)):
        if not isinstance(instance, _SiloEnvironment):
            raise TypeError(
                f"{type(instance).__name__} is not an environment made by environment_factory()."
            )
        tokens = ids[index] if isinstance(ids, Sequence) and index < len(ids) else None
        result = instance._silo_finish(_final_text(completion), tokens)
        rewards.append(float(result.reward) if result.reward_valid else None)
    return rewards
