"""Ten lines: an agent and a run (README, docs/getting-started.md).

``.venv/bin/python examples/quickstart.py``.
"""

import anyio
from customer import ENV  # a code-first environment: examples/customer.py

import silo_async as silo


async def agent(ctx: silo.AgentContext) -> str:
    print(ctx.task)  # the instruction, nothing else
    print([tool.name for tool in ctx.tools])  # ToolSpec: .to_dict() for a model
    result = await ctx.call_tool("block_customer", {"customerId": "CUS-001", "reason": "fraud"})
    return "done" if not result.is_error else result.output["message"]


result = anyio.run(silo.run, ENV, "TASK-001", agent)
print(result.passed, result.reward, result.termination_reason)  # True 1.0 completed
