"""Verifiers for project lifecycle: winding a project down."""

from __future__ import annotations

import silo_async as silo
from silo_async.world import every
from silo_async.world.grade import find_by

from ..state import State, is_closed, is_done
from .seed import acting

__all__ = ["ver_009"]


@silo.verifier(id="VER-009", task_id="TASK-009")
def ver_009(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Carrier API Sunset is archived, its open work cancelled (not passed off as done)."""
    project = find_by(initial, "projects", "key", "SUNS")
    if project is None:
        return [silo.check("the sunset project exists in the seed", False)]
    mine = [i for i in initial["workItems"].values() if i["projectId"] == project["id"]]
    open_ids = [i["id"] for i in mine if not is_closed(initial, i)]
    done_ids = [i["id"] for i in mine if is_done(initial, i)]
    items = final["workItems"]
    cancelled = [i for i in open_ids if items[i]["statusId"] == "cancelled"]
    faked = [i for i in open_ids if is_done(final, items[i])]
    other_status = sorted(
        p
        for p, rec in initial["projects"].items()
        if p != project["id"] and final["projects"][p]["status"] != rec["status"]
    )
    return [
        acting(final, initial, "Yara Benali"),
        silo.check(
            "the project is archived", final["projects"][project["id"]]["status"] == "archived"
        ),
        every("all its open work was cancelled", cancelled, open_ids, "cancelled", listed=True),
        silo.check("no unfinished item was marked done", not faked, f"marked done: {faked}"),
        silo.check("it was not archived before the rollout", project["status"] != "archived"),
        silo.optional(
            "its finished work is still done", all(is_done(final, items[i]) for i in done_ids)
        ),
        silo.optional("no other project changed status", not other_status, str(other_status)),
    ]
