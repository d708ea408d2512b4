"""Walks every path through tool dispatch once, on the erp template's TASK-021.

Read, write, read-back, then three calls the runtime must reject as values: an undeclared
argument, a missing required field, and a tool that does not exist. The write is the task's
real objective (post the Utrecht count of 41 Lumora 900 headlamps), so the run also passes.

    silo-async run --env erp --task TASK-021 --agent examples/agents/erp_toolpath.py
"""

from __future__ import annotations

from typing import Any

import silo_async as silo


def _code(result: silo.ToolResult) -> str:
    output: Any = result.output
    return str(output.get("code")) if result.is_error and isinstance(output, dict) else "ok"


async def agent(ctx: silo.AgentContext) -> str:
    """Read, write, read back, then provoke three rejections; summarise what came back."""
    found = await ctx.call_tool("search_products", {"query": "Lumora 900"})
    product = found.output["results"][0]["id"]
    where = {"productId": product, "warehouseId": "WH-001"}
    before = await ctx.call_tool("get_stock_level", where)

    wrote = await ctx.call_tool(
        "count_stock", {**where, "countedQuantity": 41, "actorId": "USR-009"}
    )
    back = await ctx.call_tool("get_stock_level", where)

    undeclared = await ctx.call_tool("get_stock_level", {**where, "bin": "U-02-06"})
    missing = await ctx.call_tool("count_stock", {**where, "actorId": "USR-009"})
    unknown = await ctx.call_tool("get_stock_levels", where)

    return (
        f"read {product} on hand {before.output['onHand']}; "
        f"counted ({_code(wrote)}, variance {wrote.output.get('variance')}); "
        f"read back {back.output['onHand']} ({_code(back)}); "
        f"undeclared argument -> {_code(undeclared)}; "
        f"missing field -> {_code(missing)}; "
        f"unknown tool -> {_code(unknown)}"
    )
