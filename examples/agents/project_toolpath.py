"""Walks every path through tool dispatch once, on the project template's TASK-006.

Read, write, read-back, then three calls the runtime must reject as values: an undeclared
argument, a missing required field, and a tool that does not exist. The write is the task's
real objective (2.5 hours for Ruth Abebe today), so the run also passes.

    silo-async run --env project --task TASK-006 --agent examples/agents/project_toolpath.py
"""

from __future__ import annotations

from typing import Any

import silo_async as silo


def _code(result: silo.ToolResult) -> str:
    output: Any = result.output
    return str(output.get("code")) if result.is_error and isinstance(output, dict) else "ok"


async def agent(ctx: silo.AgentContext) -> str:
    """Read, write, read back, then provoke three rejections; summarise what came back."""
    people = await ctx.call_tool("search_members", {"query": "Ruth Abebe"})
    ruth = people.output["results"][0]["id"]
    items = await ctx.call_tool("search_work_items", {"query": "Rate API client retries"})
    item = items.output["results"][0]["id"]

    wrote = await ctx.call_tool(
        "log_time", {"actorId": ruth, "workItemId": item, "hours": 2.5, "note": "Review fixes"}
    )
    log_id = wrote.output["created"]["id"]
    back = await ctx.call_tool("get_time_log", {"timeLogId": log_id})

    undeclared = await ctx.call_tool("get_work_item", {"workItemId": item, "verbose": True})
    missing = await ctx.call_tool("log_time", {"actorId": ruth, "workItemId": item})
    unknown = await ctx.call_tool("get_workitem", {"workItemId": item})

    return (
        f"read {ruth} and {item}; wrote {log_id} ({_code(wrote)}); "
        f"read back {back.output.get('hours')} h ({_code(back)}); "
        f"undeclared argument -> {_code(undeclared)}; "
        f"missing field -> {_code(missing)}; "
        f"unknown tool -> {_code(unknown)}"
    )
