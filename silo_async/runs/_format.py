"""The run-directory format, defined once: its file names and its version.

```
<run_id>/
  trace.jsonl       every event as it happens, one compact JSON object per line
  result.json       the grading summary (no timestamps, no ids: a byte-exact oracle)
  state-diff.json   what the rollout changed (no timestamps)
  run.json          "formatVersion" first, then identity, place in its eval, config, timings
```

``run.json`` is written last, so its presence marks a finished run. Its ``formatVersion`` is
the version of the whole directory. A reader takes any version whose major number it knows
(a ``run.json`` without the key was written before versions existed: version 1) and refuses a
newer major version with ``run_format_unsupported`` instead of guessing at fields it does not
know.
"""

from __future__ import annotations

from typing import Any

from .._errors import SiloError

__all__ = [
    "FORMAT_VERSION",
    "FORMAT_VERSION_KEY",
    "RESULT",
    "RUN",
    "RUN_FILES",
    "STATE_DIFF",
    "TRACE",
    "check_format_version",
]

#: The events of the rollout, appended as they happen.
TRACE = "trace.jsonl"
#: The grading summary.
RESULT = "result.json"
#: What the rollout changed.
STATE_DIFF = "state-diff.json"
#: Identity, configuration and timings; written last.
RUN = "run.json"
#: The summary files, in the order they are written (``run.json`` last).
RUN_FILES = (RESULT, STATE_DIFF, RUN)

#: The run-directory format this silo_async writes, and the newest major version it reads.
FORMAT_VERSION = 1
#: The key of ``run.json`` (its first) that holds the format version.
FORMAT_VERSION_KEY = "formatVersion"


def check_format_version(run: dict[str, Any], path: str) -> int:
    """The format version ``run`` (a ``run.json`` read from ``path``) declares, once readable.

    Args:
        run: the parsed ``run.json``.
        path: where it was read (named in the error).

    Returns:
        The version (1 when the key is absent: a run written before versions existed).

    Raises:
        SiloError: ``run_format_unsupported`` for a newer major version (or a version that is
            not a positive whole number), naming the version found and the version read here.
    """
    found = run.get(FORMAT_VERSION_KEY, 1)
    major = found if type(found) is int and found >= 1 else None
    if major is not None and major <= FORMAT_VERSION:
        return major
    raise SiloError(
        "run_format_unsupported",
        f"{path} has run format version {found!r}; this silo_async reads run format version "
        f"{FORMAT_VERSION}. Upgrade silo_async (git pull in its clone, or pip install -U "
        "silo_async) to read it.",
        {"path": path, "found": found, "supported": FORMAT_VERSION},
    )
