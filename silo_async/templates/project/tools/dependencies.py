"""Dependencies: "X blocks Y" links between work items."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Record, State, is_done
from .helpers import ACTOR, DEPENDENCY, ITEM_ID, assert_item_writable, require, state_name

__all__ = ["add_dependency", "list_dependencies", "remove_dependency"]


def _link_view(state: State, dep: Record, other_id: str) -> dict[str, Any]:
    other = state["workItems"][other_id]
    return {
        **dep,
        "otherId": other_id,
        "otherTitle": other["title"],
        "otherStatusId": other["statusId"],
        "otherDone": is_done(state, other),
    }


class _Item(w.Input):
    workItemId = ITEM_ID


@w.define_tool(_Item)
def list_dependencies(state: State, args: _Item) -> dict[str, Any]:
    """List a work item's dependencies: the items blocking it (with whether each is done) and the
    items it blocks.
    """
    item = require(state, "workItems", args.workItemId)
    deps = state["dependencies"].values()
    return {
        "workItemId": item["id"],
        "blockedBy": [
            _link_view(state, d, d["blockerId"]) for d in deps if d["blockedId"] == item["id"]
        ],
        "blocks": [
            _link_view(state, d, d["blockedId"]) for d in deps if d["blockerId"] == item["id"]
        ],
    }


def _reaches(state: State, start: str, goal: str) -> bool:
    """Whether ``goal`` blocks ``start`` through a chain of links (depth-first)."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        current = stack.pop()
        if current == goal:
            return True
        if current in seen:
            continue
        seen.add(current)
        stack.extend(
            d["blockerId"] for d in state["dependencies"].values() if d["blockedId"] == current
        )
    return False


class _Link(w.Input):
    blockerId = w.fields.string("The item that must be done first.", raw=True)
    blockedId = w.fields.string("The item that waits for it.", raw=True)


@ACTOR.write_tool(_Link)
def add_dependency(call: w.Write[_Link]) -> dict[str, Any]:
    """Record that one work item blocks another. Self-links, duplicates and cycles are refused."""
    state = call.state
    blocker = require(state, "workItems", call.args.blockerId)
    blocked = require(state, "workItems", call.args.blockedId)
    assert_item_writable(state, blocked)
    if blocker["id"] == blocked["id"]:
        raise silo.tool_error("invalid_input", f"{blocker['id']} cannot block itself.")
    for dep in state["dependencies"].values():
        if dep["blockerId"] == blocker["id"] and dep["blockedId"] == blocked["id"]:
            raise silo.tool_error(
                "conflict", f"{blocker['id']} already blocks {blocked['id']} ({dep['id']})."
            )
    if _reaches(state, blocker["id"], blocked["id"]):
        raise silo.tool_error(
            "invalid_state",
            f"{blocked['id']} already (directly or indirectly) blocks {blocker['id']}; linking "
            "them the other way would make a cycle.",
        )
    link: Record = {
        "id": w.records.next_id(state, "DEP"),
        "blockerId": blocker["id"],
        "blockedId": blocked["id"],
        "createdOn": w.clock.today(state),
    }
    detail = f"{blocker['id']} blocks {blocked['id']} ({state_name(state, blocker['statusId'])})"
    return {"created": link, "auditId": call.add(DEPENDENCY, link, detail)}


@ACTOR.write_tool(target=DEPENDENCY)
def remove_dependency(call: w.Write) -> dict[str, Any]:
    """Delete a dependency link by its id (DEP-...)."""
    dep = call.record
    del call.state["dependencies"][dep["id"]]
    detail = f"{dep['blockerId']} no longer blocks {dep['blockedId']}"
    return {"removed": dep, "auditId": call.audit(detail)}
