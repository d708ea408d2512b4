"""ERP: a Dutch outdoor-gear wholesaler's procure-to-pay, order-to-cash, stock and budgets.

Fenmoor Outdoor Supply B.V. (Utrecht) buys tents, sleeping bags, stoves, lights, ropes and packs
from a dozen vendors and sells them to retailers in the Netherlands and Belgium from three
warehouses (Utrecht, Rotterdam, Antwerp). Sixteen people in six departments work requisitions,
approvals within role limits, RFQs and quotations, purchase orders, goods receipts, vendor
invoices with a three-way match, payments, sales orders with credit checks, reservations,
shipments, customer invoices and collections, expenses and budgets, on a simulated clock. The
seed is deliberately messy: a vendor registered twice, invoices that fail the match, an order
approved above the approver's limit, stock reserved twice, a cost centre over budget, a payment
that bounced, shipments never invoiced, overdue customers, duplicate expense claims.

The entrypoint exports what the runtime loads: ``create_state`` (a fresh world per rollout),
``bind_tools`` (the tools closed over one world) and ``verifiers``. Tasks are discovered from
``tasks/*.json``; tools and verifiers are only what their registries list.
"""

from __future__ import annotations

import silo_async as silo

from .environment import create_state
from .families import families
from .state import State
from .tools import tools
from .verifiers import verifiers

__all__ = ["State", "bind_tools", "create_state", "families", "tools", "verifiers"]


def bind_tools(state: State) -> list[silo.BoundTool]:
    """The runtime tools for one world, in registry order."""
    return silo.bind_tools(state, tools)
