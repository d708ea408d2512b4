"""The support tool registry: exactly the tools listed here exist, in this order.

The staff's tools come first; the customer's own tools (their phone and banking app) come last.
Every conversational task names the customer's tools in ``user.tools``, so on those tasks the
agent never gets them: only the simulated customer uses them.
"""

from __future__ import annotations

import silo_async as silo
from silo_async.world.tools import get_audit_entry, get_current_time, list_audit_entries

from .accounts import (
    find_line,
    get_customer,
    get_line,
    get_sim,
    list_line_addons,
    list_lines,
    search_customers,
    search_sims,
)
from .billing import (
    get_bill,
    get_payment,
    issue_credit,
    list_bills,
    list_cards,
    list_credits,
    list_unbilled_charges,
    request_card_payment,
)
from .cases import (
    add_case_note,
    escalate_case,
    get_case,
    list_cases,
    open_case,
    resolve_case,
    send_verification_code,
    verify_caller,
)
from .catalogue import get_country, get_support_policy, list_addons, list_countries, list_plans
from .lines import (
    add_line_addon,
    cancel_line,
    change_plan,
    order_replacement_sim,
    resume_line,
    set_line_roaming,
    suspend_line,
    swap_sim,
)
from .network import (
    get_incident,
    get_network_settings,
    list_incidents,
    run_line_diagnostics,
    subscribe_line_to_incident,
)
from .phone import USER_TOOLS

__all__ = ["USER_TOOL_NAMES", "tools"]

tools: list[silo.Tool] = [
    # clock and policy
    get_current_time,
    get_support_policy,
    # customers and lines
    search_customers,
    get_customer,
    find_line,
    list_lines,
    get_line,
    list_line_addons,
    search_sims,
    get_sim,
    # cases and identity
    list_cases,
    get_case,
    open_case,
    verify_caller,
    send_verification_code,
    add_case_note,
    escalate_case,
    resolve_case,
    # network
    run_line_diagnostics,
    get_network_settings,
    list_incidents,
    get_incident,
    subscribe_line_to_incident,
    # catalogue
    list_plans,
    list_addons,
    list_countries,
    get_country,
    # line changes
    suspend_line,
    resume_line,
    set_line_roaming,
    change_plan,
    add_line_addon,
    swap_sim,
    order_replacement_sim,
    cancel_line,
    # billing
    list_bills,
    get_bill,
    list_credits,
    list_cards,
    list_unbilled_charges,
    request_card_payment,
    get_payment,
    issue_credit,
    # audit
    list_audit_entries,
    get_audit_entry,
    # the customer's own (a conversational task's user.tools)
    *USER_TOOLS,
]

#: The names of the customer's tools: what every task's ``user.tools`` lists.
USER_TOOL_NAMES: list[str] = [t.name for t in USER_TOOLS]
