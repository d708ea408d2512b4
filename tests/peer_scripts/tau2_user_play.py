"""tau2's user simulator on a scripted model, playing an imported tau2 task (tau2 virtualenv).

``python tau2_user_play.py PROJECT``: imports tau2's mock domain into PROJECT, then plays
TASK-001 with a model agent and ``model_user`` (what ``--user-model`` builds) against one
``ScriptedModelServer`` speaking for both. The user's model writes the first message after
tau2's greeting, the agent creates the task and says so, the user ends with tau2's stop word.
Prints one JSON line: the requests both models got and the rollout's grade.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio

import silo_async as silo
from silo_async import agents
from silo_async.integrations.tau2 import import_tau2
from silo_async.project import load_environment
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall
from silo_async.users import model_user

OPENING = "Hi, I'm user_1 and I need a task called Important Meeting."
CREATE = ToolCall("create_task", {"user_id": "user_1", "title": "Important Meeting"})


def script(request: ModelRequest) -> Reply:
    system = request.body["messages"][0]
    is_user = system["role"] == "system" and "<scenario>" in system["content"]
    if is_user:
        if request.task.endswith("Write your first message to the agent."):
            return Reply(text=OPENING)
        return Reply(text="Great, thanks! ###STOP###")
    if request.turn == 0:
        return Reply(tool_calls=[CREATE])
    if request.turn == 1:
        return Reply(tool_calls=[ToolCall("message_user", {"text": "Your task is created."})])
    return Reply(text="Done.")


async def main(project: Path) -> dict[str, Any]:
    env_dir, _ = import_tau2(project, "mock")
    env = load_environment(env_dir.name, project)
    os.environ["SILO_SCRIPTED_KEY"] = "scripted"
    async with ScriptedModelServer(script) as server:
        agent = agents.openai_chat("scripted-agent", base_url=server.base_url)
        user = model_user("openai/scripted-user", server.base_url)
        result = await silo.run(env, "TASK-001", agent, user=user)
        requests = [
            {"messages": r.body["messages"], "tools": r.tool_names} for r in server.requests
        ]
    return {
        "passed": result.passed,
        "checks": [c.to_dict() for c in result.checks],
        "error": result.error,
        "userTurns": result.user_turns,
        "trace": [e for e in result.trace if e["type"] in ("user_opening", "user_turn")],
        "requests": requests,
        "policy": env.policy,
        "tools": [t.spec.to_dict() for t in env.bind_tools(env.create_state())],
        "tau2": _published(),
    }


def _published() -> dict[str, Any]:
    """What tau2 itself gives its agents for the mock domain: policy and tools."""
    from tau2.domains.mock.environment import get_environment

    tau2_env = get_environment()
    tools = [tool.openai_schema["function"] for tool in tau2_env.get_tools()]
    return {"policy": tau2_env.get_policy(), "tools": tools}


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, Path(sys.argv[1]))))
