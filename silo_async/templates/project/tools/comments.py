"""Comments: notes people leave on work items."""

from __future__ import annotations

from typing import Any

from silo_async.world import PAGING, audit, define_tool, next_id, paginate, string

from ..state import Record, State
from .helpers import ACTOR, acting_member, require, writable_item

__all__ = ["add_comment", "list_comments"]

_ITEM_ID = {"workItemId": string("Work item id, e.g. WI-012.")}


@define_tool(
    "add_comment",
    "Add a comment to a work item; the actor is its author.",
    {**ACTOR, **_ITEM_ID, "body": string("Comment text.")},
    ["actorId", "workItemId", "body"],
)
def add_comment(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Append a comment."""
    actor = acting_member(state, input)
    item = writable_item(state, input["workItemId"])
    comment: Record = {
        "id": next_id(state, "CMT"),
        "workItemId": item["id"],
        "authorId": actor["id"],
        "body": input["body"].strip(),
        "createdAt": state["clock"]["now"],
    }
    state["comments"][comment["id"]] = comment
    audit_id = audit(state, actor["id"], "add_comment", "work_item", item["id"], comment["id"])
    return {"created": comment, "auditId": audit_id}


@define_tool(
    "list_comments",
    "List a work item's comments, oldest first, with author names.",
    {**_ITEM_ID, **PAGING},
    ["workItemId"],
)
def list_comments(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Paged comments of one item."""
    item = require(state, "workItems", input["workItemId"])
    members = state["members"]
    rows = [
        {**c, "authorName": members[c["authorId"]]["name"] if c["authorId"] in members else None}
        for c in state["comments"].values()
        if c["workItemId"] == item["id"]
    ]
    return paginate(rows, input)
