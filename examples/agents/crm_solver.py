"""A scripted agent that solves every task of the ``crm`` template through its tools.

It recognises the task from the instruction, then works only through ``ctx.call_tool``: every id,
owner and figure in its actions and answers comes from tool outputs, never from the seed files.
The template's tests require it to pass every task with reward 1.0, which proves each task is
solvable with the tools the template ships.

Run it: ``silo-async run --env crm --task TASK-007 --agent examples/agents/crm_solver.py``.

It retries a call that met a transient fault (``unavailable``, ``rate_limited`` — after the
``retryAfterMs`` it was given — or ``timeout``): such a call did nothing, so trying again is
right. ``examples/agents/crm_solver.py:no_retries`` is the same solver without retries, to see
what they are worth under ``--faults`` (docs/faults.md).
"""

from __future__ import annotations

import contextvars
import datetime as dt
import re
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

import silo_async as silo

Solver = Callable[[silo.AgentContext], Awaitable[str]]


class ToolFailed(RuntimeError):
    """A tool rejected a call the script expected to succeed."""


#: Error codes of a call that did nothing and may work if tried again.
TRANSIENT = frozenset({"unavailable", "rate_limited", "timeout"})
#: Further tries of a call that met a transient fault (``no_retries`` sets 0).
RETRIES: contextvars.ContextVar[int] = contextvars.ContextVar("RETRIES", default=3)


async def call(ctx: silo.AgentContext, name: str, args: dict[str, Any] | None = None) -> Any:
    """Call a tool and return its output, raising if the call was rejected.

    A transient fault is retried up to ``RETRIES`` times (after ``retryAfterMs`` when given).
    """
    for _ in range(RETRIES.get() + 1):
        result = await ctx.call_tool(name, args or {})
        error = result.output if result.is_error and isinstance(result.output, dict) else {}
        if error.get("code") not in TRANSIENT:
            break
        await anyio.sleep((error.get("details") or {}).get("retryAfterMs", 0) / 1000)
    if result.is_error:
        raise ToolFailed(f"{name}: {result.output}")
    return result.output


def actor_of(instruction: str) -> str:
    """The first user id named in the instruction (who acts)."""
    found = re.search(r"\bUSR-\d+\b", instruction)
    if found is None:
        raise ValueError("The instruction names no acting user.")
    return found.group(0)


def money_in(instruction: str) -> float:
    """The first dollar figure in the instruction."""
    found = re.search(r"\$([\d,]+(?:\.\d+)?)", instruction)
    if found is None:
        raise ValueError("The instruction states no amount.")
    return float(found.group(1).replace(",", ""))


def date_in(instruction: str) -> str:
    """The first YYYY-MM-DD date in the instruction."""
    found = re.search(r"\b\d{4}-\d{2}-\d{2}\b", instruction)
    if found is None:
        raise ValueError("The instruction states no date.")
    return found.group(0)


async def find_one(ctx: silo.AgentContext, tool: str, query: str) -> dict[str, Any]:
    """The single search hit for ``query``."""
    page = await call(ctx, tool, {"query": query})
    if page["count"] != 1:
        raise ToolFailed(f"{tool}({query!r}) found {page['count']} results, expected 1.")
    hit: dict[str, Any] = page["results"][0]
    return hit


async def user_id_named(ctx: silo.AgentContext, name: str) -> str:
    """The id of the user with this name."""
    return str((await find_one(ctx, "search_users", name))["id"])


# --- state-changing tasks ---------------------------------------------------------------------


async def convert_new_lead(ctx: silo.AgentContext) -> str:
    lead = await find_one(ctx, "search_leads", "Tomasz Wierzbicki")
    out = await call(
        ctx,
        "convert_lead",
        {
            "leadId": lead["id"],
            "amount": money_in(ctx.task),
            "expectedCloseDate": date_in(ctx.task),
            "opportunityName": f"{lead['company']} soil LIMS",
            "actorId": actor_of(ctx.task),
        },
    )
    return (
        f"Converted {lead['id']} into account {out['account']['id']}, contact "
        f"{out['contact']['id']} and opportunity {out['opportunity']['id']}."
    )


async def convert_existing_customer_lead(ctx: silo.AgentContext) -> str:
    lead = await find_one(ctx, "search_leads", "Felix Amadi")
    accounts = await call(ctx, "search_accounts", {"query": "Corvane"})
    # The lead's company carries a legal suffix; the customer is the account whose name it extends.
    account = next(
        a for a in accounts["results"] if lead["company"].lower().startswith(a["name"].lower())
    )
    out = await call(
        ctx,
        "convert_lead",
        {
            "leadId": lead["id"],
            "accountId": account["id"],
            "ownerId": account["ownerId"],
            "amount": money_in(ctx.task),
            "expectedCloseDate": date_in(ctx.task),
            "opportunityName": "Corvane microbiology LIMS extension",
            "actorId": actor_of(ctx.task),
        },
    )
    return f"Converted {lead['id']} onto {account['id']} as {out['opportunity']['id']}."


async def rehome_departed_rep(ctx: silo.AgentContext) -> str:
    actor = actor_of(ctx.task)
    gone = await user_id_named(ctx, "Jasper Lindqvist")
    heir = await user_id_named(ctx, "Ottilie Brandt")
    moved: list[str] = []
    plan: list[tuple[str, dict[str, Any], str, str, tuple[str, ...] | None]] = [
        ("list_accounts", {"ownerId": gone}, "reassign_account", "accountId", None),
        (
            "list_opportunities",
            {"ownerId": gone, "status": "open"},
            "reassign_opportunity",
            "opportunityId",
            None,
        ),
        (
            "list_leads",
            {"ownerId": gone},
            "reassign_lead",
            "leadId",
            ("new", "working", "qualified"),
        ),
        (
            "list_activities",
            {"ownerId": gone, "openOnly": True},
            "reassign_activity",
            "activityId",
            None,
        ),
    ]
    for list_tool, filters, move_tool, key, statuses in plan:
        page = await call(ctx, list_tool, {**filters, "limit": 500})
        for item in page["results"]:
            if statuses is not None and item["status"] not in statuses:
                continue
            await call(ctx, move_tool, {key: item["id"], "newOwnerId": heir, "actorId": actor})
            moved.append(item["id"])
    return f"Moved {len(moved)} records from {gone} to {heir}: {', '.join(moved)}."


async def book_won_deal(ctx: silo.AgentContext) -> str:
    actor = actor_of(ctx.task)
    page = await call(ctx, "search_opportunities", {"query": "chain-of-custody"})
    deal = next(o for o in page["results"] if o["status"] == "open")
    await call(
        ctx,
        "close_opportunity_won",
        {"opportunityId": deal["id"], "finalAmount": money_in(ctx.task), "actorId": actor},
    )
    await call(
        ctx,
        "log_activity",
        {
            "type": "note",
            "subject": "Countersigned contract received",
            "relatedType": "opportunity",
            "relatedId": deal["id"],
            "notes": "The countersigned contract arrived today.",
            "actorId": actor,
        },
    )
    return f"Closed {deal['id']} as won and logged the contract note."


async def record_lost_deal(ctx: silo.AgentContext) -> str:
    page = await call(ctx, "search_opportunities", {"query": "Brackwater"})
    deal = next(o for o in page["results"] if o["status"] == "open")
    await call(
        ctx,
        "close_opportunity_lost",
        {"opportunityId": deal["id"], "reason": "competitor", "actorId": actor_of(ctx.task)},
    )
    return f"Closed {deal['id']} as lost to a competitor."


async def merge_duplicate_contact(ctx: silo.AgentContext) -> str:
    account = await find_one(ctx, "search_accounts", "Tessaline")
    dupes = await call(ctx, "find_duplicate_contacts", {"accountId": account["id"]})
    group = dupes["groups"][0]
    keep = min(group, key=lambda c: (c["createdDate"], c["id"]))
    for other in group:
        if other["id"] != keep["id"]:
            await call(
                ctx,
                "merge_contacts",
                {
                    "survivorId": keep["id"],
                    "duplicateId": other["id"],
                    "actorId": actor_of(ctx.task),
                },
            )
    return f"Merged the duplicates into {keep['id']}."


async def stale_deal_followups(ctx: silo.AgentContext) -> str:
    actor = actor_of(ctx.task)
    clock = await call(ctx, "get_current_time")
    due = (dt.date.fromisoformat(clock["today"]) + dt.timedelta(days=2)).isoformat()
    directors = await call(ctx, "list_users", {"role": "director", "activeOnly": True})
    director = directors["results"][0]["id"]
    report = await call(ctx, "stale_opportunities", {"thresholdDays": 30})
    for deal in report["opportunities"]:
        owner = await call(ctx, "get_user", {"userId": deal["ownerId"]})
        await call(
            ctx,
            "schedule_activity",
            {
                "type": "call",
                "subject": f"Follow up: {deal['name']} stalled {deal['daysInStage']} days",
                "relatedType": "opportunity",
                "relatedId": deal["id"],
                "ownerId": owner["id"] if owner["active"] else director,
                "dueDate": due,
                "actorId": actor,
            },
        )
    return f"Scheduled {report['count']} follow-up calls due {due}."


# --- answer-producing tasks -------------------------------------------------------------------


async def weighted_pipeline(ctx: silo.AgentContext) -> str:
    summary = await call(ctx, "pipeline_summary")
    return f"The probability-weighted open pipeline is ${summary['totalWeightedAmount']:,.0f}."


async def weakest_active_rep(ctx: silo.AgentContext) -> str:
    report = await call(ctx, "rep_performance", {"year": 2026, "activeOnly": True})
    rated = [r for r in report["reps"] if r["attainmentPercent"] is not None]
    low = min(rated, key=lambda r: (r["attainmentPercent"], r["userId"]))
    return f"{low['name']} is furthest behind, at {low['attainmentPercent']}% of quota."


async def past_due_deals(ctx: silo.AgentContext) -> str:
    page = await call(ctx, "list_opportunities", {"pastDueOnly": True, "limit": 500})
    total = sum(o["amount"] for o in page["results"])
    return f"{page['total']} open deals are past due, worth ${total:,.0f} in total."


async def longest_in_stage(ctx: silo.AgentContext) -> str:
    page = await call(ctx, "list_opportunities", {"status": "open", "limit": 500})
    top = max(page["results"], key=lambda o: o["daysInStage"])
    return f"{top['name']} ({top['id']}) has been in its stage for {top['daysInStage']} days."


# Most specific phrases first: each instruction matches exactly one entry.
SOLVERS: list[tuple[str, Solver]] = [
    ("Harrowgate Soil Labs", convert_new_lead),
    ("Felix Amadi", convert_existing_customer_lead),
    ("Jasper Lindqvist has left", rehome_departed_rep),
    ("countersigned", book_won_deal),
    ("chosen a competitor", record_lost_deal),
    ("two contact records", merge_duplicate_contact),
    ("more than 30 days", stale_deal_followups),
    ("probability-weighted", weighted_pipeline),
    ("lowest quota attainment", weakest_active_rep),
    ("past their expected close date", past_due_deals),
    ("current stage the longest", longest_in_stage),
]


async def agent(ctx: silo.AgentContext) -> str:
    """Dispatch on the instruction and solve the task through tools only."""
    for phrase, solve in SOLVERS:
        if phrase in ctx.task:
            return await solve(ctx)
    return "I do not recognise this task."


async def no_retries(ctx: silo.AgentContext) -> str:
    """The same solver, giving up at the first transient fault."""
    token = RETRIES.set(0)
    try:
        return await agent(ctx)
    finally:
        RETRIES.reset(token)
