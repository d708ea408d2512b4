"""Play a silo world with OpenEnv's own client (run in the OpenEnv virtualenv).

``python openenv_play.py URL '{"task": ..., "calls": [[tool, input]...], "answer": ...}'``:
``GenericEnvClient`` (OpenEnv's client for any server speaking its ``/ws`` protocol) resets
with the task, lists the tools, makes the calls, submits the answer and reads the state; a
``reset`` of an unknown task and a step before any reset are tried first. Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from openenv.core import GenericEnvClient


async def play(url: str, spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with GenericEnvClient(base_url=url) as env:
        try:
            await env.step({"type": "call_tool", "tool_name": "search_leads", "arguments": {}})
        except RuntimeError as exc:  # the server's error frame, raised by the client
            out["before_reset"] = str(exc)
        try:
            await env.reset(task="TASK-999")
        except RuntimeError as exc:
            out["unknown_task"] = str(exc)
        reset = await env.reset(task=spec["task"])
        out["reset"] = {"observation": reset.observation, "done": reset.done}
        tools = await env.step({"type": "list_tools"})
        out["tools"] = tools.observation["tools"]
        out["calls"] = []
        for name, arguments in spec["calls"]:
            step = await env.step({"type": "call_tool", "tool_name": name, "arguments": arguments})
            out["calls"].append(
                {"observation": step.observation, "reward": step.reward, "done": step.done}
            )
        submit = await env.step(
            {"type": "call_tool", "tool_name": "submit", "arguments": {"answer": spec["answer"]}}
        )
        out["submit"] = {
            "observation": submit.observation,
            "reward": submit.reward,
            "done": submit.done,
        }
        out["state"] = await env.state()
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(play(sys.argv[1], json.loads(sys.argv[2])))))
