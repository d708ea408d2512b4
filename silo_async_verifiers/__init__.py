"""verifiers' plugin id for silo worlds: ``vf-eval silo_async_verifiers --env.taskset.env NAME``.

verifiers imports a taskset (and the harness and ``Env`` it ships) by a top-level module name;
this one re-exports :mod:`silo_async.integrations.verifiers`, where the code lives. Its one
exported ``Env`` (``SiloEnv``) is the one ``vf-eval`` runs: the agent seat on a local runtime.
"""

from __future__ import annotations

from silo_async.integrations.verifiers import SiloEnv, SiloHarness, SiloTaskset, load_environment

__all__ = ["SiloEnv", "SiloHarness", "SiloTaskset", "load_environment"]
