"""verifiers' plugin id for silo worlds: ``vf-eval silo_async_verifiers --env.taskset.env NAME``.

verifiers imports a taskset (and the harness it ships) by a top-level module name; this one
re-exports :mod:`silo_async.integrations.verifiers`, where the code lives.
"""

from __future__ import annotations

from silo_async.integrations.verifiers import SiloHarness, SiloTaskset, load_environment

__all__ = ["SiloHarness", "SiloTaskset", "load_environment"]
