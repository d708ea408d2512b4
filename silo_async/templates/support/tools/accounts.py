"""Accounts: customers, their lines, the add-ons on a line and the SIM cards."""

from __future__ import annotations

from typing import Any

from silo_async import world as w
from silo_async.world.tools import sorted_by_id

from ..state import Line, State, full_name, normalise_number
from .views import customer_view, line_addon_view, line_view

__all__ = [
    "find_line",
    "get_customer",
    "get_line",
    "get_sim",
    "list_line_addons",
    "list_lines",
    "search_customers",
    "search_sims",
]

CUSTOMERS = w.Collection("customers", "customerId", "CUS-004", view=customer_view)
search_customers = CUSTOMERS.search_tool(
    "Find customers whose id, name, email or eircode contains the query (case-insensitive). "
    "To find someone by phone number use find_line. Paged.",
    lambda state, c: [full_name(c), c["email"], c["address"]["eircode"]],
)
get_customer = CUSTOMERS.get_tool(
    "One customer: name, contact details, address, their line ids and any overdue amount. The "
    "security PIN is never shown: the caller must say it."
)

LINES = w.Collection("lines", "lineId", "LIN-004", view=line_view)
list_lines = LINES.list_tool(
    "List lines sorted by id, optionally one customer's or in one status. Paged.",
    filters={
        "customerId": w.fields.string("Only this customer's lines.", default=None),
        "status": w.fields.enum(
            "Only lines in this status.", ["active", "suspended", "cancelled"], default=None
        ),
    },
    references={"customerId": "customers"},
)
get_line = LINES.get_tool(
    "One line: its number, holder, SIM, status and suspension, roaming bar, plan in force and "
    "any scheduled plan change, data used this cycle and any hold."
)


class _Number(w.Input):
    phoneNumber = w.fields.string(
        "The phone number in any usual form: 087 210 4411, +353 87 210 4411, 00353872104411."
    )


@w.define_tool(_Number)
def find_line(state: State, args: _Number) -> dict[str, Any]:
    """The line with this phone number (any usual format), with its holder."""
    wanted = normalise_number(args.phoneNumber)
    for line in sorted_by_id(state["lines"]):
        if line["msisdn"] == wanted:
            return line_view(state, line)
    raise w.records.not_found("lines", wanted, "Line with number")


class _LineOnly(w.Input):
    lineId = w.fields.string("Line id, e.g. LIN-004.")
    limit = w.fields.LIMIT
    offset = w.fields.OFFSET


@w.define_tool(_LineOnly)
def list_line_addons(state: State, args: _LineOnly) -> dict[str, Any]:
    """The add-ons bought for a line (roaming passes, data boosts), oldest first, each with its
    last day and whether it is in force today. Paged.
    """
    line: Line = w.records.require_record(state, "lines", args.lineId)
    items = [i for i in sorted_by_id(state["lineAddons"]) if i["lineId"] == line["id"]]
    return w.tools.paginate(items, args, lambda i: line_addon_view(state, i))


SIMS = w.Collection("sims", "simId", "SIM-004")
search_sims = SIMS.search_tool(
    "Find SIM cards whose id or ICCID (the long number printed on the card) contains the query. "
    "Paged.",
    ["iccid"],
)
get_sim = SIMS.get_tool("One SIM card: its ICCID, status and the line it serves, if any.")
