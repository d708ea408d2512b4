"""Workflow: the states a work item moves through and the allowed transitions."""

from __future__ import annotations

from typing import Any

from silo_async import world as w

from ..state import State
from .helpers import require

__all__ = ["get_workflow_state", "list_workflow_states"]


@w.define_tool({**w.schema.PAGING})
def list_workflow_states(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """List the workflow states in order, each with the states it may move to (transitions), and
    whether it counts as done or closed.
    """
    states = sorted(state["workflowStates"].values(), key=lambda s: s["order"])
    return w.tools.paginate(states, input)


@w.define_tool({"statusId": w.schema.string("Workflow state id, e.g. in_review.")}, ["statusId"])
def get_workflow_state(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Read one workflow state and its allowed transitions."""
    return dict(require(state, "workflowStates", input["statusId"]))
