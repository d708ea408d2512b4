"""Run ids that sort by start time and never collide.

``run_<YYYYMMDDTHHMMSSmmm>_<counter>_<random>``: UTC time to the millisecond, a per-process
counter (so thousands of runs started in the same millisecond still sort in start order and
differ), and random hex so that ids made by different processes or machines differ too.
"""

from __future__ import annotations

import itertools
import os
import time

__all__ = ["new_run_id"]

_counter = itertools.count(1)
_process_tag = os.urandom(3).hex()


def new_run_id(now: float | None = None) -> str:
    """A fresh run id for a run starting at ``now`` (epoch seconds; default: the wall clock)."""
    t = time.time() if now is None else now
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(t))
    millis = int(t * 1000) % 1000
    return f"run_{stamp}{millis:03d}_{next(_counter):06d}_{_process_tag}{os.urandom(2).hex()}"
