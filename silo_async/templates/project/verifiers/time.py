"""Verifiers for time tracking: a new entry, and clean-up of entries on closed work."""

from __future__ import annotations

import silo_async as silo
from silo_async.world import every
from silo_async.world.clock import today
from silo_async.world.grade import modified_ids, new_records

from ..state import State, logs_after_close
from .seed import acting, needs_seed, seed_record

__all__ = ["ver_006", "ver_007"]


@silo.verifier(id="VER-006", task_id="TASK-006")
@needs_seed("the item and the member exist in the seed")
def ver_006(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """One new 2.5-hour entry for Ruth Abebe, today, on the Rate API client retries."""
    item = seed_record(initial, "workItems", "title", "Rate API client retries")
    ruth = seed_record(initial, "members", "name", "Ruth Abebe")
    added = new_records(final, initial, "timeLogs")
    log = added[0] if len(added) == 1 else {}
    return [
        silo.check("exactly one time log was added", len(added) == 1, f"{len(added)} added"),
        silo.check(
            "it is on the Rate API client retries, for Ruth Abebe",
            log.get("workItemId") == item["id"] and log.get("memberId") == ruth["id"],
            f"item {log.get('workItemId')}, member {log.get('memberId')}",
        ),
        silo.check("it records 2.5 hours", log.get("hours") == 2.5, f"hours {log.get('hours')}"),
        silo.check(
            "it is dated today", log.get("date") == today(initial), f"date {log.get('date')}"
        ),
        silo.optional(
            "no existing log was changed or removed", not modified_ids(final, initial, "timeLogs")
        ),
    ]


@silo.verifier(id="VER-007", task_id="TASK-007")
def ver_007(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Exactly the entries logged after their item closed are gone; all else is intact."""
    offending = logs_after_close(initial)
    keep = [i for i in initial["timeLogs"] if i not in offending]
    logs = final["timeLogs"]
    intact = [i for i in keep if i in logs and silo.json_equal(logs[i], initial["timeLogs"][i])]
    closing_day = [
        i
        for i in keep
        if initial["timeLogs"][i]["date"]
        == initial["workItems"][initial["timeLogs"][i]["workItemId"]]["statusChangedOn"]
    ]
    return [
        acting(final, initial, "Yara Benali"),
        silo.check(
            "every entry logged after its item closed was removed",
            bool(offending) and not any(i in logs for i in offending),
            f"to remove: {', '.join(offending)}; left: {[i for i in offending if i in logs]}",
        ),
        every(
            "every other entry is still there, unchanged", intact, keep, "intact", allow_empty=True
        ),
        silo.optional(
            "entries from the closing day itself were kept", all(i in logs for i in closing_day)
        ),
        silo.optional("no new entries were logged", set(logs) <= set(initial["timeLogs"])),
    ]
