"""Verifiers for tasks that change work items: status, ownership and new work."""

from __future__ import annotations

import silo_async as silo
from silo_async.world import every
from silo_async.world.grade import changed_ids, find_by, new_audit_entries

from ..state import State, active_sprint_ids, is_closed, is_done, unresolved_blockers
from .seed import acting, needs_seed, seed_record

__all__ = ["ver_001", "ver_002", "ver_008", "ver_010"]


def _others_kept_status(final: State, initial: State, allowed: set[str]) -> tuple[bool, str]:
    moved = sorted(
        i
        for i, item in initial["workItems"].items()
        if i not in allowed
        and i in final["workItems"]
        and final["workItems"][i]["statusId"] != item["statusId"]
    )
    return not moved, f"other status changes: {moved or 'none'}"


def _links_into(state: State, item_id: str) -> set[str]:
    """Ids of the dependency records in which ``item_id`` is the blocked item."""
    return {d for d, rec in state["dependencies"].items() if rec["blockedId"] == item_id}


@silo.verifier(id="VER-001", task_id="TASK-001")
@needs_seed("the Geofence alert banner exists in the seed")
def ver_001(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The geofence banner is back in progress, its dependency record intact."""
    start = seed_record(initial, "workItems", "title", "Geofence alert banner")
    end = final["workItems"].get(start["id"])
    status = end["statusId"] if end else "missing"
    deps_before = _links_into(initial, start["id"])
    kept, detail = _others_kept_status(final, initial, {start["id"]})
    return [
        acting(final, initial, "Anouk de Vries"),
        silo.check("the banner is in progress", status == "in_progress", f"status {status}"),
        silo.check(
            "the banner was stored as blocked before the rollout",
            start["statusId"] == "blocked",
            f"initial status {start['statusId']}",
        ),
        silo.optional(
            "its dependency record was kept",
            deps_before <= set(final["dependencies"]),
            f"dependencies {sorted(deps_before)}",
        ),
        silo.optional("no other item changed status", kept, detail),
    ]


@silo.verifier(id="VER-002", task_id="TASK-002")
@needs_seed("both members exist in the seed")
def ver_002(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Every unfinished item the departed engineer held now belongs to Anouk de Vries."""
    leaver = seed_record(initial, "members", "name", "Kiri Walker")
    heir = seed_record(initial, "members", "name", "Anouk de Vries")
    targets = sorted(
        i
        for i, item in initial["workItems"].items()
        if item["assigneeId"] == leaver["id"] and not is_closed(initial, item)
    )
    finals = {i: final["workItems"].get(i) for i in targets}
    moved = [i for i, item in finals.items() if item and item["assigneeId"] == heir["id"]]
    still_open = [i for i, item in finals.items() if item and not is_closed(final, item)]
    same_points = [
        i
        for i, item in finals.items()
        if item and item["points"] == initial["workItems"][i]["points"]
    ]
    stranded = [
        i
        for i, item in final["workItems"].items()
        if item["assigneeId"] == leaver["id"] and not is_closed(final, item)
    ]
    closed_kept = all(
        final["workItems"][i]["assigneeId"] == leaver["id"]
        for i, item in initial["workItems"].items()
        if item["assigneeId"] == leaver["id"] and is_closed(initial, item)
    )
    reassigned_elsewhere = sorted(
        i
        for i, item in initial["workItems"].items()
        if i not in targets and final["workItems"][i]["assigneeId"] != item["assigneeId"]
    )
    return [
        acting(final, initial, "Mateo Salas"),
        every("every unfinished item went to Anouk de Vries", moved, targets, "moved", listed=True),
        silo.check("Kiri Walker holds no unfinished work", not stranded, f"left: {stranded}"),
        every(
            "the moved items are still open (not closed to make them disappear)",
            still_open,
            targets,
            "open",
            allow_empty=True,
        ),
        every(
            "estimates were not shrunk to fit capacity",
            same_points,
            targets,
            "unchanged",
            allow_empty=True,
        ),
        silo.optional("finished work keeps Kiri Walker's name", closed_kept),
        silo.optional(
            "nobody else's work changed hands",
            not reassigned_elsewhere,
            f"also reassigned: {reassigned_elsewhere or 'none'}",
        ),
    ]


@silo.verifier(id="VER-008", task_id="TASK-008")
@needs_seed("the Carrier rate cache exists in the seed")
def ver_008(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The rate cache is done, its blockers finished first rather than unlinked."""
    start = seed_record(initial, "workItems", "title", "Carrier rate cache")
    blockers = unresolved_blockers(initial, start["id"])
    end = final["workItems"][start["id"]]
    blockers_done = [b for b in blockers if is_done(final, final["workItems"][b])]
    links = _links_into(initial, start["id"])
    kept, detail = _others_kept_status(final, initial, {start["id"], *blockers})
    return [
        acting(final, initial, "Ines Okafor"),
        silo.check("the rate cache is done", is_done(final, end), f"status {end['statusId']}"),
        every(
            "every blocker it waited on is done",
            blockers_done,
            blockers,
            "blockers done",
            listed=True,
        ),
        silo.check("it was not done before the rollout", not is_done(initial, start)),
        silo.optional(
            "the dependency links were kept",
            links <= set(final["dependencies"]),
            f"links {sorted(links)}",
        ),
        silo.optional("no unrelated item changed status", kept, detail),
    ]


@silo.verifier(id="VER-010", task_id="TASK-010")
def ver_010(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """One new bug, exactly as asked, placed in the running Routing sprint."""
    title = "stop sequence lost on re-optimise"
    added = [final["workItems"][i] for i in changed_ids(final, initial, "workItems")]
    created = [i for i in added if i["id"] not in initial["workItems"]]
    matching = [i for i in created if i["title"].strip().lower() == title]
    project = find_by(initial, "projects", "key", "ROUT")
    ruth = find_by(initial, "members", "name", "Ruth Abebe")
    sprint = next(
        (
            s
            for s in active_sprint_ids(initial)
            if project and initial["sprints"][s]["projectId"] == project["id"]
        ),
        None,
    )
    bug = matching[0] if len(matching) == 1 else {}
    modified = sorted(i["id"] for i in added if i["id"] in initial["workItems"])
    audited = any(e["entityId"] == bug.get("id") for e in new_audit_entries(final, initial))
    return [
        acting(final, initial, "Ines Okafor"),
        silo.check(
            "exactly one item with that title was created",
            len(matching) == 1,
            f"{len(matching)} created",
        ),
        silo.check(
            "it is a high-priority 3-point bug",
            bug.get("type") == "bug" and bug.get("priority") == "high" and bug.get("points") == 3,
            f"type {bug.get('type')}, priority {bug.get('priority')}, points {bug.get('points')}",
        ),
        silo.check(
            "it is in Route Optimizer v3, assigned to Ruth Abebe",
            project is not None
            and ruth is not None
            and bug.get("projectId") == project["id"]
            and bug.get("assigneeId") == ruth["id"],
            f"project {bug.get('projectId')}, assignee {bug.get('assigneeId')}",
        ),
        silo.check(
            "it is planned into the running Routing sprint",
            sprint is not None and bug.get("sprintId") == sprint,
            f"sprint {bug.get('sprintId')}, expected {sprint}",
        ),
        silo.optional("no existing item was modified", not modified, f"modified: {modified}"),
        silo.optional("the creation is in the audit log", audited),
    ]
