"""Comments: notes people leave on work items."""

from __future__ import annotations

from typing import Any

from silo_async import world as w

from ..state import Record, State
from .helpers import ACTOR, ITEM, ITEM_ID, require

__all__ = ["add_comment", "list_comments"]


class _Comment(w.Input):
    body = w.fields.string("Comment text.", raw=True)


@ACTOR.write_tool(_Comment, target=ITEM)
def add_comment(call: w.Write[_Comment]) -> dict[str, Any]:
    """Add a comment to a work item; the actor is its author."""
    state, item = call.state, call.record
    comment: Record = {
        "id": w.records.next_id(state, "CMT"),
        "workItemId": item["id"],
        "authorId": call.actor["id"],
        "body": call.args.body.strip(),
        "createdAt": state["clock"]["now"],
    }
    state["comments"][comment["id"]] = comment
    return {"created": comment, "auditId": call.audit(comment["id"])}


class _Comments(w.Input):
    workItemId = ITEM_ID
    limit = w.fields.LIMIT
    offset = w.fields.OFFSET


@w.define_tool(_Comments)
def list_comments(state: State, args: _Comments) -> dict[str, Any]:
    """List a work item's comments, oldest first, with author names."""
    item = require(state, "workItems", args.workItemId)
    members = state["members"]
    rows = [
        {**c, "authorName": members[c["authorId"]]["name"] if c["authorId"] in members else None}
        for c in state["comments"].values()
        if c["workItemId"] == item["id"]
    ]
    return w.tools.paginate(rows, args)
