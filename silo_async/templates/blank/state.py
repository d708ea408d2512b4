"""The world's type and pure domain helpers.

Grow ``State`` as the data grows (a ``TypedDict`` per collection documents the shape); keep the
name ``State``, which scaffolded tools and verifiers import.
"""

from __future__ import annotations

from typing import Any, TypeAlias

State: TypeAlias = dict[str, Any]
