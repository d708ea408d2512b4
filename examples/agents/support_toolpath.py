"""A tool-path agent for the ``support`` template's TASK-001 (the phone with no service).

It walks the whole tool path once: a read, a write, a read-back, then three calls the runtime
must reject as values: an undeclared argument, a missing required field, and a tool the agent
does not have (``set_airplane_mode`` is the customer's own tool on this task: only the
customer may touch their phone). It returns a one-line summary of what each step gave back, so
a trace or a test can check binding, schema validation, error mapping, dispatch and the
separation of the customer's tools in one rollout.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo


def _code(output: Any) -> str:
    return str(output.get("code")) if isinstance(output, dict) else "?"


async def agent(ctx: silo.AgentContext) -> str:
    """Read, write, read back, then provoke three rejections."""
    line = (await ctx.call_tool("find_line", {"phoneNumber": "087 210 4411"})).output
    opened = await ctx.call_tool(
        "open_case",
        {"customerId": line["customerId"], "subject": "No service", "actorId": "STF-001"},
    )
    case_id = opened.output["created"]["id"]
    back = await ctx.call_tool("get_case", {"caseId": case_id})
    undeclared = await ctx.call_tool("get_case", {"caseID": case_id})
    missing = await ctx.call_tool(
        "open_case", {"customerId": line["customerId"], "actorId": "STF-001"}
    )
    theirs = await ctx.call_tool("set_airplane_mode", {"deviceId": "DEV-001", "enabled": False})
    return (
        f"read {line['id']} {line['status']}; "
        f"write {'error ' + _code(opened.output) if opened.is_error else 'ok'}; "
        f"read-back {back.output['status']}; "
        f"undeclared argument {_code(undeclared.output)}; "
        f"missing field {_code(missing.output)}; "
        f"customer's tool {_code(theirs.output)}"
    )
