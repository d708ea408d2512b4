"""Run ids that sort by start time and never collide.

``run_<YYYYMMDDTHHMMSSmmm>_<counter>_<random>``: UTC time to the millisecond, a per-process
counter (so thousands of runs started in the same millisecond still sort in start order and
differ), and random hex so that ids made by different processes or machines differ too.
"""

from __future__ import annotations

import itertools
import os
import random
import time

__all__ = ["new_run_id"]

_counter = itertools.count(1)
_process_tag = os.urandom(3).hex()
# Seeded once from the OS: per-id randomness without a syscall per run.
_random = random.Random(os.urandom(16))


def _reseed_after_fork() -> None:
    # A forked worker must not repeat its parent's ids.
    global _process_tag
    _process_tag = os.urandom(3).hex()
    _random.seed(os.urandom(16))


os.register_at_fork(after_in_child=_reseed_after_fork)


def new_run_id(now: float | None = None) -> str:
    """A fresh run id for a run starting at ``now`` (epoch seconds; default: the wall clock)."""
    t = time.time() if now is None else now
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(t))
    millis = int(t * 1000) % 1000
    suffix = f"{_process_tag}{_random.getrandbits(16):04x}"
    return f"run_{stamp}{millis:03d}_{next(_counter):06d}_{suffix}"
