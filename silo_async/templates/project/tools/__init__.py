"""The tool registry: only what is listed here becomes a capability, in this order."""

from __future__ import annotations

import silo_async as silo
from silo_async.world.tools import (
    advance_clock,
    get_audit_entry,
    get_current_time,
    list_audit_entries,
)

from .comments import add_comment, list_comments
from .dependencies import add_dependency, list_dependencies, remove_dependency
from .members import (
    create_member,
    get_member,
    list_members,
    offboard_member,
    search_members,
    update_member,
)
from .projects import (
    archive_project,
    create_project,
    get_project,
    list_projects,
    search_projects,
    set_project_lead,
    set_project_status,
    update_project,
)
from .reporting import (
    blocked_items_report,
    member_load_report,
    overdue_items_report,
    project_time_report,
    sprint_budget_report,
    sprint_report,
    velocity_report,
)
from .sprints import (
    add_item_to_sprint,
    complete_sprint,
    create_sprint,
    get_sprint,
    list_sprints,
    remove_item_from_sprint,
    start_sprint,
    update_sprint,
)
from .teams import create_team, get_team, list_teams, move_member_to_team, set_team_lead
from .time import delete_time_log, get_time_log, list_time_logs, log_time, update_time_log
from .work_items import (
    assign_work_item,
    create_work_item,
    get_work_item,
    list_work_items,
    search_work_items,
    set_due_date,
    transition_work_item,
    unassign_work_item,
    update_work_item,
)
from .workflow import get_workflow_state, list_workflow_states

__all__ = ["tools"]

tools: list[silo.Tool] = [
    # clock
    get_current_time,
    advance_clock,
    # members
    list_members,
    search_members,
    get_member,
    create_member,
    update_member,
    offboard_member,
    # teams
    list_teams,
    get_team,
    create_team,
    set_team_lead,
    move_member_to_team,
    # projects
    list_projects,
    search_projects,
    get_project,
    create_project,
    update_project,
    set_project_status,
    archive_project,
    set_project_lead,
    # sprints
    list_sprints,
    get_sprint,
    create_sprint,
    update_sprint,
    start_sprint,
    complete_sprint,
    add_item_to_sprint,
    remove_item_from_sprint,
    # workflow
    list_workflow_states,
    get_workflow_state,
    # work items
    list_work_items,
    search_work_items,
    get_work_item,
    create_work_item,
    update_work_item,
    assign_work_item,
    unassign_work_item,
    transition_work_item,
    set_due_date,
    # comments
    add_comment,
    list_comments,
    # dependencies
    list_dependencies,
    add_dependency,
    remove_dependency,
    # time
    log_time,
    list_time_logs,
    get_time_log,
    update_time_log,
    delete_time_log,
    # reporting
    sprint_report,
    member_load_report,
    blocked_items_report,
    overdue_items_report,
    velocity_report,
    project_time_report,
    sprint_budget_report,
    # audit
    list_audit_entries,
    get_audit_entry,
]
