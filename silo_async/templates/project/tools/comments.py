"""Comments: notes people leave on work items."""

from __future__ import annotations

from typing import Any

from silo_async import world as w

from ..state import Record, State
from .helpers import ACTOR, ITEM, require

__all__ = ["add_comment", "list_comments"]


@ACTOR.write_tool({"body": w.schema.string("Comment text.")}, ["body"], target=ITEM)
def add_comment(call: w.Write) -> dict[str, Any]:
    """Add a comment to a work item; the actor is its author."""
    state, item = call.state, call.record
    comment: Record = {
        "id": w.records.next_id(state, "CMT"),
        "workItemId": item["id"],
        "authorId": call.actor["id"],
        "body": call.input["body"].strip(),
        "createdAt": state["clock"]["now"],
    }
    state["comments"][comment["id"]] = comment
    return {"created": comment, "auditId": call.audit(comment["id"])}


@w.define_tool({ITEM.key: ITEM.schema, **w.schema.PAGING}, [ITEM.key])
def list_comments(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """List a work item's comments, oldest first, with author names."""
    item = require(state, "workItems", input["workItemId"])
    members = state["members"]
    rows = [
        {**c, "authorName": members[c["authorId"]]["name"] if c["authorId"] in members else None}
        for c in state["comments"].values()
        if c["workItemId"] == item["id"]
    ]
    return w.tools.paginate(rows, input)
