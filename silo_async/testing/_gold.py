"""gold_agent: plays an instance of a task family as its gold solution says.

What validation and the audit use as a family's solver, and what a smoke test of a family (or
a benchmark of the harness) runs: ``--agent silo_async.testing:gold_agent``.
"""

from __future__ import annotations

from typing import Any

from .._context import AgentContext, rollout_setup
from .._errors import SiloError

__all__ = ["gold_agent"]


async def gold_agent(ctx: AgentContext) -> Any:
    """Play the rollout's instance as its family's gold solution says.

    ``solve(ctx, params)`` when the family has one; else the gold calls of the agent's tools,
    in order, then ``answer(params)`` as the answer.

    A conversational family needs ``solve``: its user acts only when asked, so the gold calls
    of the user's tools are not the agent's to make.

    Raises:
        SiloError: ``task_invalid`` when the rollout's task is hand-written (it has no gold).
    """
    setup = rollout_setup(ctx)
    task = setup.task
    if task.family is None:
        raise SiloError(
            "task_invalid",
            f'gold_agent plays instances of task families (FAMILY#SEED); task "{task.id}" is '
            "hand-written and has no gold solution.",
            {"task": task.id},
        )
    instance = setup.env.instance(task.id)
    family = instance.family
    if family.solve is not None:
        return await family.solve(ctx, dict(instance.params))
    mine = {spec.name for spec in ctx.tools}
    for call in instance.gold_calls():
        if call.tool in mine:
            await ctx.call_tool(call.tool, call.input)
    return instance.answer()
