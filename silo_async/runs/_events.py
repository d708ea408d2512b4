"""Reading ``trace.jsonl`` back, with one policy for a line that does not parse.

Every event is one ``write`` of one line, so a process killed mid-write (``kill -9``, an OOM
kill) can leave at most its last line cut short; a line damaged anywhere else was edited by
hand. Either way the reader decides, knowingly, with ``strict``: strict reading refuses the
trace (``run_invalid``, naming the file and the line), lenient reading skips every such line
and lists the line numbers it skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from .._errors import SiloError
from .._jsonutil import parse_json

__all__ = ["TraceEvents", "read_events"]


@attrs.frozen
class TraceEvents:
    """The events of a ``trace.jsonl``, as read.

    Attributes:
        path: the file read.
        events: every event that parsed, in file order.
        skipped: 1-based numbers of the lines skipped because they do not parse as a JSON
            object (always empty when read strictly).
    """

    path: str
    events: list[dict[str, Any]]
    skipped: tuple[int, ...] = ()

    @property
    def ended(self) -> bool:
        """The trace holds its ``run_end`` event: the rollout ran to its end."""
        return any(event.get("type") == "run_end" for event in reversed(self.events))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)


def read_events(path: str, *, strict: bool) -> TraceEvents:
    """Read the events of the trace at ``path``.

    Args:
        path: a ``trace.jsonl``.
        strict: refuse a line that does not parse (True) or skip it and list it (False).

    Raises:
        FileNotFoundError: there is no trace (an ``OSError`` for any other read failure).
        SiloError: ``run_invalid`` when ``strict`` and a line is not a JSON object; the message
            names the file and the line, ``details`` has ``path`` and ``line``.
    """
    events: list[dict[str, Any]] = []
    skipped: list[int] = []
    with open(path, encoding="utf-8", errors="surrogateescape") as lines:
        for number, line in enumerate(lines, start=1):
            try:
                event = parse_json(line)
            except ValueError as exc:
                event, why = None, str(exc)
            else:
                why = "not a JSON object"
            if type(event) is dict:
                events.append(event)
                continue
            if strict:
                raise SiloError(
                    "run_invalid",
                    f"{path} line {number} is cut short or damaged ({why}): the trace cannot "
                    "be read whole.",
                    {"path": path, "line": number},
                )
            skipped.append(number)
    return TraceEvents(path, events, tuple(skipped))
