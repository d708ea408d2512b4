"""The CRM tool registry: exactly the tools listed here exist, in this order."""

from __future__ import annotations

import silo_async as silo
from silo_async.world.tools import (
    advance_clock,
    get_audit_entry,
    get_current_time,
    list_audit_entries,
)

from .accounts import (
    create_account,
    get_account,
    list_accounts,
    reassign_account,
    search_accounts,
    update_account,
)
from .activities import (
    complete_activity,
    get_activity,
    list_activities,
    log_activity,
    reassign_activity,
    reschedule_activity,
    schedule_activity,
)
from .contacts import (
    create_contact,
    find_duplicate_contacts,
    get_contact,
    list_contacts,
    merge_contacts,
    search_contacts,
    update_contact,
)
from .leads import (
    convert_lead,
    create_lead,
    disqualify_lead,
    get_lead,
    list_leads,
    qualify_lead,
    reassign_lead,
    search_leads,
    update_lead,
)
from .opportunities import (
    advance_opportunity_stage,
    close_opportunity_lost,
    close_opportunity_won,
    create_opportunity,
    get_opportunity,
    list_opportunities,
    list_stages,
    move_opportunity_stage,
    reassign_opportunity,
    search_opportunities,
    update_opportunity,
)
from .reporting import forecast_report, pipeline_summary, rep_performance, stale_deals_report
from .users import get_user, list_users, search_users

__all__ = ["tools"]

tools: list[silo.Tool] = [
    # clock
    get_current_time,
    advance_clock,
    # users
    list_users,
    search_users,
    get_user,
    # accounts
    list_accounts,
    search_accounts,
    get_account,
    create_account,
    update_account,
    reassign_account,
    # contacts
    list_contacts,
    search_contacts,
    get_contact,
    create_contact,
    update_contact,
    find_duplicate_contacts,
    merge_contacts,
    # leads
    list_leads,
    search_leads,
    get_lead,
    create_lead,
    update_lead,
    reassign_lead,
    qualify_lead,
    disqualify_lead,
    convert_lead,
    # opportunities
    list_stages,
    list_opportunities,
    search_opportunities,
    get_opportunity,
    create_opportunity,
    update_opportunity,
    move_opportunity_stage,
    advance_opportunity_stage,
    close_opportunity_won,
    close_opportunity_lost,
    reassign_opportunity,
    # activities
    list_activities,
    get_activity,
    log_activity,
    schedule_activity,
    complete_activity,
    reschedule_activity,
    reassign_activity,
    # reporting
    pipeline_summary,
    forecast_report,
    rep_performance,
    stale_deals_report,
    # audit
    list_audit_entries,
    get_audit_entry,
]
