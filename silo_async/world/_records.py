"""Records: lookups that fail with one ``not_found`` shape, ids, and change tracking.

A world keeps each collection as a map of id to record (``state["vendors"]["VEN-001"]``), with
last-used id counters in ``state["sequences"]``. Lookups that miss raise ``not_found`` with the
message ``Vendor "VEN-999" was not found.`` and details ``{"collection", "id"}``, in every world.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .._errors import ToolError
from ._fields import Input, value_of
from ._values import shown

__all__ = [
    "Change",
    "check_references",
    "format_id",
    "label_of",
    "next_id",
    "not_found",
    "require_record",
    "require_status",
    "set_field",
]

#: One field-level change, as audit entries and tool results list them.
Change = dict[str, Any]

_WORD_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def label_of(collection: str) -> str:
    """The display name of one record: ``purchaseOrders`` -> ``Purchase order``."""
    words = _WORD_BREAK.sub(" ", collection).lower()
    if words.endswith("ies"):
        words = words[:-3] + "y"
    elif words.endswith(("sses", "xes", "ches", "shes")):
        words = words[:-2]
    elif words.endswith("s") and not words.endswith("ss"):
        words = words[:-1]
    return words[:1].upper() + words[1:]


def not_found(collection: str, record_id: Any, label: str | None = None) -> ToolError:
    """The ``not_found`` error for ``record_id`` in ``collection``."""
    shown_id = shown(record_id) if isinstance(record_id, str) else str(shown(record_id))
    return ToolError(
        "not_found",
        f'{label or label_of(collection)} "{shown_id}" was not found.',
        {"collection": collection, "id": shown_id},
    )


def require_record(
    state: Mapping[str, Any], collection: str, record_id: Any, label: str | None = None
) -> Any:
    """The record ``state[collection][record_id]``.

    Raises:
        ToolError: ``not_found`` with details ``{collection, id}``.
    """
    record = state[collection].get(record_id) if isinstance(record_id, str) else None
    if record is None:
        raise not_found(collection, record_id, label)
    return record


def require_status(
    record: Any,
    collection: str,
    allowed: Sequence[str],
    action: str,
    field: str = "status",
    label: str | None = None,
) -> None:
    """``record[field]`` must be one of ``allowed`` for ``action`` to happen.

    The message names the record, its current status, what was attempted and what it needs::

        Purchase order PO-204 is draft; it must be approved or sent to be received.

    ``label`` names the record where ``label_of(collection)`` cannot (``RFQ``, not ``Rfq``).

    Raises:
        ToolError: ``invalid_state`` with details ``{collection, id, status, allowed}``.
    """
    current = record.get(field)
    if current in allowed:
        return
    options = " or ".join([", ".join(allowed[:-1]), allowed[-1]] if len(allowed) > 1 else allowed)
    what = f"{label or label_of(collection)} {record.get('id')}"
    raise ToolError(
        "invalid_state",
        f"{what} is {current}; it must be {options} to {action}.",
        {
            "collection": collection,
            "id": record.get("id"),
            field: current,
            "allowed": list(allowed),
        },
    )


def check_references(
    state: Mapping[str, Any], input: Input | Mapping[str, Any], references: Mapping[str, str]
) -> None:
    """Ids given in ``input`` (filters, links) must name existing records.

    An unknown id in a filter is a mistake to report, not an empty page.

    Args:
        state: the world.
        input: the tool's input, or its typed view (each id then read by its field).
        references: input key -> the collection its value must be an id of.

    Raises:
        ToolError: ``not_found`` for the first key naming a missing record.
    """
    for key, collection in references.items():
        value = value_of(input, key)
        if value is not None:
            require_record(state, collection, value)


def format_id(prefix: str, number: int, width: int = 3) -> str:
    """``VEN-007``: the prefix, a dash and the number padded to ``width`` digits."""
    return f"{prefix}-{number:0{width}d}"


def next_id(state: Mapping[str, Any], prefix: str, width: int = 3) -> str:
    """Advance the last-used counter ``state["sequences"][prefix]`` and return the new id.

    Counters live in the world, so ids are the same in every rollout; a missing counter starts
    at 1.
    """
    sequences = state["sequences"]
    number = int(sequences.get(prefix, 0)) + 1
    sequences[prefix] = number
    return format_id(prefix, number, width)


def set_field(record: Any, field: str, value: Any, changes: list[Change]) -> bool:
    """Set ``record[field]`` and append ``{field, from, to}`` to ``changes``; no-op when equal.

    Returns:
        Whether the value changed.
    """
    before = record.get(field)
    if before == value and type(before) is type(value):
        return False
    record[field] = value
    changes.append({"field": field, "from": before, "to": value})
    return True
