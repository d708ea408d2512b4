"""``state-diff.json`` as text: what a rollout changed, one collection and one field per line.

```
  leads: 1 changed (LEAD-001)
    LEAD-001.status  "qualified" -> "converted"
    LEAD-001.tags  2 -> 3 items: +"vip", -"cold"
  auditLog: 4 added (AUD-0004, AUD-0005, AUD-0006, AUD-0007)
  now  "09:00" -> "10:00"
```
"""

from __future__ import annotations

from typing import Any

from .._jsonutil import compact_json

__all__ = ["diff_lines"]

#: Ids named per added/removed/changed list before "+N more".
SHOWN_IDS = 8
#: Characters of a value shown.
VALUE_WIDTH = 80


def _value(value: Any) -> str:
    text = compact_json(value)
    return text if len(text) <= VALUE_WIDTH else text[:VALUE_WIDTH] + "…"


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOWN_IDS])
    return shown + (f", +{len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")


def _change(entry: dict[str, Any]) -> str:
    if "fromLength" in entry:
        marks = [f"+{_value(x)}" for x in entry.get("added", [])]
        marks += [f"-{_value(x)}" for x in entry.get("removed", [])]
        marks += [f"~{_value(x)}" for x in entry.get("changed", [])]
        if entry.get("itemsOmitted"):
            marks.append(f"+{entry['itemsOmitted']} more")
        items = f"{entry['fromLength']} -> {entry['toLength']} items"
        return f"{items}: {', '.join(marks)}" if marks else items
    before = _value(entry["from"]) if "from" in entry else "(absent)"
    after = _value(entry["to"]) if "to" in entry else "(removed)"
    return f"{before} -> {after}"


def _collection(name: str, change: dict[str, Any]) -> list[str]:
    parts = [
        f"{len(change[kind])} {kind} ({_ids(change[kind])})"
        for kind in ("added", "removed", "changed")
        if change.get(kind)
    ]
    lines = [f"  {name}: {'; '.join(parts)}"]
    for record, entries in change.get("fields", {}).items():
        for entry in entries:
            path = f"{record}.{entry['path']}" if entry["path"] else record
            path = path.replace(".[", "[")
            lines.append(f"    {path}  {_change(entry)}")
    omitted = change.get("fieldsOmitted")
    if omitted:
        lines.append(
            f"    ({omitted['records']} more changed records and {omitted['fields']} more "
            "fields not detailed)"
        )
    return lines


def diff_lines(diff: dict[str, Any]) -> list[str]:
    """The diff as indented lines (empty when the rollout changed nothing)."""
    lines = []
    for name, change in diff.get("collections", {}).items():
        lines += _collection(name, change)
    for scalar in diff.get("scalars", []):
        lines.append(f"  {scalar.get('field') or '(world)'}  {_change(scalar)}")
    return lines
