"""The no-op agent: calls nothing and answers nothing.

Run every task with it to pin the verifiers on the pristine seed: no task may pass.
"""

from __future__ import annotations

import silo_async as silo


async def agent(ctx: silo.AgentContext) -> None:
    """Do nothing."""
    return None
