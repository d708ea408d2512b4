"""Build the world: every ``data/<name>.json`` becomes ``state["<name>"]``.

Data holds facts only; compute derived values (totals, counts, indexes) here, when the world is
built, never in the data files.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import silo_async as silo

from .state import State

_DATA_DIR = Path(__file__).resolve().parent / "data"


@functools.cache
def _facts() -> State:
    # Read once per import; every world gets its own deep copy below.
    return {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(_DATA_DIR.glob("*.json"))
    }


def create_state() -> State:
    """A fresh world on every call: rollouts must never share mutable state."""
    world: State = silo.clone_json(_facts())
    return world
