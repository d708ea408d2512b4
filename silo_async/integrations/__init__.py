"""Bridges from silo worlds to other frameworks; each module imports its framework's nothing.

* :mod:`silo_async.integrations.trl` — a world as a TRL GRPO ``environment_factory`` and the
  reward function that grades it.
"""

from __future__ import annotations

#: No names of its own: each framework's bridge is a module of this package.
__all__: list[str] = []
