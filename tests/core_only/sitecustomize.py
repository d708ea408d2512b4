"""Hide what a core-only install would not have, in every interpreter of a core-only run.

``tests/core_only/run.py`` puts this folder on ``PYTHONPATH`` and names the installed top-level
modules to hide in ``SILO_CORE_ONLY_HIDE``; Python imports this module as each interpreter
starts (pytest, and every ``python -m silo_async`` a test starts), and a hidden module reads as
absent: ``import`` raises ``ModuleNotFoundError`` and ``importlib.util.find_spec`` says None.
"""

from __future__ import annotations

import os
import sys

for _name in filter(None, os.environ.get("SILO_CORE_ONLY_HIDE", "").split(",")):
    sys.modules.setdefault(_name, None)  # type: ignore[arg-type]
