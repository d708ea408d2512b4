"""A tool-path agent for the ``crm`` template's TASK-005 (record the Brackwater loss).

It walks the whole tool path once: a read, a write, a read-back, then three calls the runtime
must reject as values — an undeclared argument, a missing required field and an unknown tool
name. It returns a one-line summary of what each step gave back, so a trace or a test can check
binding, schema validation, error mapping and dispatch in one rollout.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo


def _code(output: Any) -> str:
    return str(output.get("code")) if isinstance(output, dict) else "?"


async def agent(ctx: silo.AgentContext) -> str:
    """Read, write, read back, then provoke three rejections."""
    found = await ctx.call_tool("search_opportunities", {"query": "Brackwater QC lab expansion"})
    deal = found.output["results"][0]
    closed = await ctx.call_tool(
        "close_opportunity_lost",
        {"opportunityId": deal["id"], "reason": "competitor", "actorId": "USR-006"},
    )
    back = await ctx.call_tool("get_opportunity", {"opportunityId": deal["id"]})
    undeclared = await ctx.call_tool("get_opportunity", {"opportunityID": deal["id"]})
    missing = await ctx.call_tool(
        "close_opportunity_lost", {"opportunityId": deal["id"], "actorId": "USR-006"}
    )
    unknown = await ctx.call_tool("get_oportunity", {"opportunityId": deal["id"]})
    return (
        f"read {deal['id']} {deal['status']}; "
        f"write {'error ' + _code(closed.output) if closed.is_error else 'ok'}; "
        f"read-back {back.output['status']}; "
        f"undeclared argument {_code(undeclared.output)}; "
        f"missing field {_code(missing.output)}; "
        f"unknown tool {_code(unknown.output)}"
    )
