"""Workflow: the states a work item moves through and the allowed transitions."""

from __future__ import annotations

from typing import Any

from silo_async import world as w

from ..state import State
from .helpers import require

__all__ = ["get_workflow_state", "list_workflow_states"]


class _Page(w.Input):
    limit = w.fields.LIMIT
    offset = w.fields.OFFSET


@w.define_tool(_Page)
def list_workflow_states(state: State, args: _Page) -> dict[str, Any]:
    """List the workflow states in order, each with the states it may move to (transitions), and
    whether it counts as done or closed.
    """
    states = sorted(state["workflowStates"].values(), key=lambda s: s["order"])
    return w.tools.paginate(states, args)


class _State(w.Input):
    statusId = w.fields.string("Workflow state id, e.g. in_review.", raw=True)


@w.define_tool(_State)
def get_workflow_state(state: State, args: _State) -> dict[str, Any]:
    """Read one workflow state and its allowed transitions."""
    return dict(require(state, "workflowStates", args.statusId))
