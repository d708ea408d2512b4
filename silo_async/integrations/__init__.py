"""Bridges from silo worlds to other frameworks; each module imports its framework's nothing.

* :mod:`silo_async.integrations.trl` — a world as a TRL GRPO ``environment_factory`` and the
  reward function that grades it.
* :mod:`silo_async.integrations.inspect` — a world as an Inspect AI task (``silo_task``).
* :mod:`silo_async.integrations.verifiers` — a world as a verifiers (v1) environment
  (``load_environment``).

OpenEnv and NeMo Gym reach worlds over HTTP: ``silo-async serve --protocol openenv|nemo-gym``.
"""

from __future__ import annotations

#: No names of its own: each framework's bridge is a module of this package.
__all__: list[str] = []
