"""The verifiers ``Env`` of silo worlds: one agent seat, defaults that run on this machine.

``vf-eval silo_async_verifiers`` resolves the taskset package's own ``Env`` (its one exported
``Env`` subclass). verifiers' default seat would provision a Prime sandbox for the harness
program; silo's harness runs its loop in this process, so :class:`SiloEnv`'s seat defaults to
silo's harness on a local (subprocess) runtime: no sandbox, no account, and the interception
endpoint needs no public tunnel. ``--env.agent.*`` flags still override both.
"""

from __future__ import annotations

from typing import Any

import verifiers.v1 as vf

__all__ = ["SiloEnv", "SiloEnvConfig"]


class SiloEnvConfig(vf.EnvConfig):
    """:class:`SiloEnv`'s config: verifiers' single-agent seat, run locally by default."""

    # The harness is left to the taskset's default (silo's own: its package exports it);
    # naming it here would import silo_async_verifiers while that module is being imported.
    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """The seat (``--env.agent.*``): silo's harness on a local runtime unless overridden."""


class SiloEnv(vf.Env[SiloEnvConfig]):
    """One agent seat playing each task, as verifiers' single-agent env, with local defaults."""

    async def run(self, task: Any, agents: Any) -> None:
        """The seat plays the task once."""
        await agents.agent.run(task)
