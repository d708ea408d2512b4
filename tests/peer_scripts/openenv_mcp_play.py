"""Play a silo world with OpenEnv's ``MCPToolClient`` (run in the OpenEnv virtualenv).

``python openenv_mcp_play.py URL '{"task": ..., "calls": [[tool, input]...], "answer": ...}'``:
the client creates an HTTP MCP session (``POST /mcp``), joins it over ``/ws?session_id=`` to
reset with the task, lists the tools and calls them over ``/mcp``, submits the answer, reads the
state, and closes the session. Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from openenv.core.mcp_client import MCPToolClient


async def play(url: str, spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with MCPToolClient(base_url=url) as env:
        out["session"] = env._production_session_id is not None
        reset = await env.reset(task=spec["task"])
        out["reset"] = {"observation": reset.observation.model_dump(), "done": reset.done}
        out["tools"] = [tool.name for tool in await env.list_tools()]
        out["calls"] = [await env.call_tool(name, **arguments) for name, arguments in spec["calls"]]
        out["submit"] = await env.call_tool("submit", answer=spec["answer"])
        out["state"] = (await env.state()).model_dump()
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(play(sys.argv[1], json.loads(sys.argv[2]))), default=str))
