"""The ERP world's shape and the rules about people every area shares.

``State`` is the whole world: ``clock``, ``company``, ``policies`` and ``sequences`` are objects,
``auditLog`` is a list, and every other key is a collection mapping id to record (see
``data/``). Records are plain JSON objects (``Record``); the derived figures (stock available,
invoice outstanding, budget remaining, ...) are computed on read by the modules of ``domain/``
from the stored facts, so they can never go stale. Nothing here reads the wall clock: "today"
is the date part of ``state["clock"]["now"]``.

Amounts are EUR. Approval limits belong to roles, one per kind of document
(:data:`APPROVAL_KINDS`); a role without a limit for a kind cannot approve it. Limits compare with
the net amount (excluding VAT) of requisitions and purchase orders, and with the amount payable
(including VAT) of vendor invoices and payments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from silo_async.world.amounts import multiply_money, sum_money

__all__ = [
    "APPROVAL_KINDS",
    "Record",
    "State",
    "approval_limit",
    "authorised_approvers",
    "department_of",
    "find_line",
    "full_name",
    "gross",
    "has_permission",
    "is_authorised",
    "lines_net",
    "money_text",
    "role_of",
    "terms_days",
    "vat_of",
]

State = dict[str, Any]
Record = dict[str, Any]

#: The kinds of decision an approval limit can cover.
APPROVAL_KINDS: tuple[str, ...] = (
    "requisition",
    "purchase_order",
    "vendor_invoice",
    "payment",
    "expense",
    "budget_transfer",
    "credit_limit",
    "write_off",
)

# --- money -------------------------------------------------------------------------------------


def lines_net(lines: Iterable[Mapping[str, Any]], price_key: str = "unitPrice") -> float:
    """The net (VAT-exclusive) total of document lines: the sum of the rounded line totals."""
    return sum_money(multiply_money(ln["quantity"], ln[price_key]) for ln in lines)


def find_line(document: Mapping[str, Any], line_no: int) -> Record | None:
    """One line of a document (requisition, order, invoice) by its number, or None."""
    for line in document["lines"]:
        if line["lineNo"] == line_no:
            found: Record = line
            return found
    return None


def vat_of(state: State, net: float) -> float:
    """The VAT on ``net`` at the company rate, rounded half up to cents."""
    return multiply_money(net, state["policies"]["vatRate"])


def gross(state: State, net: float) -> float:
    """``net`` plus its VAT."""
    return sum_money([net, vat_of(state, net)])


def money_text(amount: float) -> str:
    """``6,920.00 EUR``: how messages show an amount."""
    return f"{amount:,.2f} EUR"


def terms_days(state: State, terms: str) -> int:
    """Days of a payment term such as ``NET_30``."""
    return int(state["policies"]["paymentTermsDays"][terms])


# --- people -------------------------------------------------------------------------------------


def full_name(user: Mapping[str, Any]) -> str:
    """``Sanne Verbeek``."""
    return f"{user['firstName']} {user['lastName']}"


def role_of(state: State, user: Mapping[str, Any]) -> Record:
    """The role record of ``user``."""
    role: Record = state["roles"][user["roleId"]]
    return role


def department_of(state: State, user: Mapping[str, Any]) -> Record:
    """The department record of ``user``."""
    department: Record = state["departments"][user["departmentId"]]
    return department


def approval_limit(state: State, user: Mapping[str, Any], kind: str) -> float | None:
    """The most ``user`` may approve for ``kind``; None when their role cannot approve it."""
    limit = role_of(state, user)["approvalLimits"].get(kind)
    return None if limit is None else float(limit)


def is_authorised(state: State, user: Mapping[str, Any], kind: str, amount: float) -> bool:
    """Whether ``user`` is active and their role's limit for ``kind`` covers ``amount``."""
    limit = approval_limit(state, user, kind)
    return bool(user["active"]) and limit is not None and amount <= limit


def authorised_approvers(
    state: State, kind: str, amount: float, exclude: Iterable[str] = ()
) -> list[Record]:
    """Active users who may approve ``amount`` of ``kind``: lowest limit first, then by id."""
    skipped = set(exclude)
    found = [
        u
        for u in state["users"].values()
        if u["id"] not in skipped and is_authorised(state, u, kind, amount)
    ]
    return sorted(found, key=lambda u: (approval_limit(state, u, kind) or 0.0, u["id"]))


def has_permission(state: State, user: Mapping[str, Any], area: str) -> bool:
    """Whether ``user``'s role may work in ``area`` (see ``policies.permissions``)."""
    return user["roleId"] in state["policies"]["permissions"][area]
