"""A silo world as a verifiers environment: ``load_environment(project, env)``.

For the current verifiers release (0.4, its ``verifiers.v1`` API): a taskset with one task per
silo task, whose rollout state is an episode (opened in the task's ``setup``, on a fresh
world) and whose reward is the world's reward, plus the harness that plays it — the model's
tool loop run in-process, every model call through verifiers' interception endpoint, every
tool call through the episode. Evaluate with verifiers' own runner, against any
OpenAI-compatible model, nothing pushed (``--no-push``), the seat on this machine
(:class:`SiloEnv`'s default)::

    vf-eval silo_async_verifiers --env.taskset.env crm --model gpt-4.1-mini \
        --client.base-url http://127.0.0.1:8000/v1 --client.api-key-var OPENAI_API_KEY --no-push

or build the environment in Python with :func:`load_environment`. verifiers pins its own
``mcp`` and ``openai``: install it beside silo_async in its own virtualenv.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import verifiers.v1 as vf

from ..._limits import Limits
from ._env import SiloEnv, SiloEnvConfig
from ._episodes import served
from ._harness import SiloHarness, SiloHarnessConfig
from ._taskset import SiloTaskset, SiloTasksetConfig

__all__ = [
    "TASKSET_ID",
    "SiloEnv",
    "SiloEnvConfig",
    "SiloHarness",
    "SiloHarnessConfig",
    "SiloTaskset",
    "SiloTasksetConfig",
    "load_environment",
]

#: The id verifiers imports the taskset (and its harness) by: a top-level module re-exporting
#: this one (verifiers resolves ids as top-level module names).
TASKSET_ID = "silo_async_verifiers"


def load_environment(
    project: str | os.PathLike[str] = ".",
    env: str | None = None,
    tasks: Sequence[str] | None = None,
    max_tool_calls: int = 100,
    timeout: float | None = 120.0,
    **env_config: Any,
) -> Any:
    """The verifiers environment (``vf.Env``) of silo environment ``env`` in ``project``.

    Args:
        project: the project directory holding ``.silo/`` (default: the current directory).
        env: the environment's name in that project.
        tasks: the task ids to serve (default: all, in the environment's order).
        max_tool_calls: calls executed per episode before the next one ends it.
        timeout: seconds per episode from its start (``None``: no limit).
        **env_config: other fields of :class:`SiloEnvConfig` (verifiers' ``EnvConfig`` and
            the ``agent`` seat).

    Returns:
        A ``verifiers.v1.Env``: evaluate it with verifiers' runner (``env.serving()`` and
        ``env.run_slot``, as ``vf-eval`` does) and an OpenAI-compatible client.

    Raises:
        SiloError: an unknown environment or task id.
        ValueError: no environment named, or invalid limits.
    """
    if env is None:
        raise ValueError("load_environment needs env=NAME (an environment of the project).")
    Limits(max_tool_calls, timeout, None)
    root = str(Path(project).absolute())
    world = served(root, env)
    ids = None if tasks is None else list(tasks)
    for task_id in ids or []:
        world.env.task(task_id)  # task_not_found now, not in the first rollout
    taskset = SiloTasksetConfig(
        id=TASKSET_ID,
        project=root,
        env=env,
        tasks=ids,
        max_tool_calls=max_tool_calls,
        timeout=timeout,
    )
    config = SiloEnvConfig(taskset=taskset, **env_config)  # the seat runs locally
    return vf.load_environment(config)
