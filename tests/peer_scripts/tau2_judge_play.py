"""A tau2 task graded on natural-language assertions, judged by a scripted model (tau2 venv).

``python tau2_judge_play.py WORKDIR``: makes a tau2-bench checkout in WORKDIR from the installed
package (for this test only) whose mock task ``create_task_1`` has ``NL_ASSERTION`` in its
reward basis, imports it with ``--judge-model`` pointed at a ``ScriptedModelServer``, and plays
the task's gold actions twice: the judge says the assertion is met, then that it is not. Also
imports it without a judge, and plays an added task graded on its actions alone whose gold
action raises, grading that play with tau2's own evaluator too. Prints one JSON line.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio

import silo_async as silo
from silo_async.integrations.tau2 import import_tau2
from silo_async.project import load_environment
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer

VERDICTS = [True, False]

#: A task graded on its actions alone whose gold action raises in tau2 (there is no task_99):
#: tau2 logs it, grades on and passes an agent that repeats the broken call.
BROKEN_CALL = {"task_id": "task_99", "status": "completed"}
BROKEN = {
    "id": "broken_gold_action",
    "user_scenario": {"instructions": "Ask the agent to mark task_99 completed."},
    "evaluation_criteria": {
        "actions": [{"action_id": "1", "name": "update_task_status", "arguments": BROKEN_CALL}],
        "reward_basis": ["ACTION"],
    },
}


def checkout(where: Path) -> Path:
    spec = importlib.util.find_spec("tau2")  # found, not imported: silo imports the checkout
    assert spec is not None and spec.submodule_search_locations
    package = Path(next(iter(spec.submodule_search_locations)))
    root = where / "tau2-bench"
    shutil.copytree(
        package,
        root / "src" / "tau2",
        ignore=shutil.ignore_patterns("__pycache__", "workflows", "tasks*.json", "*.png"),
    )
    tasks_file = package / "data" / "tau2" / "domains" / "mock" / "tasks.json"
    tasks = json.loads(tasks_file.read_text())
    tasks[0]["evaluation_criteria"]["reward_basis"] = ["DB", "NL_ASSERTION"]
    tasks.append(BROKEN)
    mine = root / "src" / "tau2" / "data" / "tau2" / "domains" / "mock" / "tasks.json"
    mine.write_text(json.dumps(tasks))
    return root


async def gold(ctx: silo.AgentContext) -> str:
    await ctx.call_tool("create_task", {"user_id": "user_1", "title": "Important Meeting"})
    await ctx.call_tool("message_user", {"text": "Your task Important Meeting is created."})
    return "It is done."


async def repeats_the_broken_call(ctx: silo.AgentContext) -> str:
    await ctx.call_tool("update_task_status", BROKEN_CALL)
    return "It is done."


async def broken_gold(env: silo.Environment) -> dict[str, Any]:
    """The broken task played by an agent repeating its gold call: silo's verdict, tau2's."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tau2.domains.mock.environment import get_tasks  # the checkout's, as silo loaded it

    from tests.peer_scripts.tau2_play import _tau2, tau2_verdict

    number = len(get_tasks())
    result = await silo.run(env, f"TASK-{number:03d}", repeats_the_broken_call,
                            user=lambda task: Opens())  # fmt: skip
    theirs, _ = tau2_verdict(_tau2(), "mock", result, get_tasks()[-1])
    return {"silo": {"passed": result.passed, "rewardValid": result.reward_valid,
                     "invalidReason": result.invalid_reason, "error": result.error},
            "tau2": theirs, "task": f"TASK-{number:03d}"}  # fmt: skip


class Opens:
    async def reply(self, turn: silo.UserTurn) -> silo.UserReply:
        return silo.UserReply("Please create my task." if turn.number == 0 else "Thanks.")


async def main(where: Path) -> dict[str, Any]:
    root = checkout(where)
    calls: list[dict[str, Any]] = []

    def judge(request: ModelRequest) -> Reply:
        met = VERDICTS[min(len(calls), len(VERDICTS) - 1)]
        calls.append({"messages": request.body["messages"]})
        verdict = {"expectedOutcome": "The agent confirmed the task was created successfully",
                   "reasoning": "scripted", "metExpectation": met}  # fmt: skip
        return Reply(text=json.dumps({"results": [verdict]}))

    os.environ.setdefault("OPENAI_API_KEY", "scripted")
    results = []
    async with ScriptedModelServer(judge) as server:
        project = where / "judged"
        project.mkdir()
        env_dir, record = import_tau2(
            project, "mock", path=root, judge_model="openai/judge", judge_base_url=server.base_url
        )
        env = load_environment(env_dir.name, project)
        for _ in VERDICTS:
            result = await silo.run(env, "TASK-001", gold, user=lambda task: Opens())
            results.append({"passed": result.passed, "checks": [c.to_dict() for c in result.checks],
                            "error": result.error})  # fmt: skip
    plain = where / "plain"
    plain.mkdir()
    plain_dir, _ = import_tau2(plain, "mock", path=root)
    plain_env = load_environment(plain_dir.name, plain)
    unjudged = await silo.run(plain_env, "TASK-001", gold, user=lambda task: Opens())
    broken = await broken_gold(plain_env)
    return {
        "record": record,
        "judged": results,
        "calls": calls,
        "unjudged": {"passed": unjudged.passed, "reward": unjudged.reward,
                     "checks": [c.to_dict() for c in unjudged.checks]},
        "brokenGold": broken,
    }  # fmt: skip


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, Path(sys.argv[1]))))
