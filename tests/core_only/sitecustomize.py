"""Hide what a core-only install would not have, in every interpreter of a core-only run.

``tests/core_only/run.py`` puts this folder on ``PYTHONPATH`` and names the installed top-level
modules to hide in ``SILO_CORE_ONLY_HIDE``; Python imports this module as each interpreter
starts (pytest, and every ``python -m silo_async`` a test starts). The path finder that finds
installed modules is wrapped so that it does not find a hidden one: ``import`` raises
``ModuleNotFoundError`` and ``importlib.util.find_spec`` says None, as where it is absent, and
nothing is put in ``sys.modules`` (tests check what a command has imported there).
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import ModuleSpec, PathFinder
from typing import Any

HIDDEN = frozenset(filter(None, os.environ.get("SILO_CORE_ONLY_HIDE", "").split(",")))


class HidingPathFinder(PathFinder):
    """The standard path finder, blind to the hidden top-level modules and their submodules."""

    @classmethod
    def find_spec(cls, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        """None for a hidden module; otherwise what the standard path finder finds."""
        if fullname.partition(".")[0] in HIDDEN:
            return None
        return super().find_spec(fullname, path, target)


if HIDDEN:
    sys.meta_path[:] = [HidingPathFinder if f is PathFinder else f for f in sys.meta_path]
