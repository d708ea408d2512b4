"""A tau2 task graded on natural-language assertions, judged by a scripted model (tau2 venv).

``python tau2_judge_play.py WORKDIR``: makes a tau2-bench checkout in WORKDIR from the installed
package (for this test only) whose mock task ``create_task_1`` has ``NL_ASSERTION`` in its
reward basis, imports it with ``--judge-model`` pointed at a ``ScriptedModelServer``, and plays
the task's gold actions twice: the judge says the assertion is met, then that it is not. Also
imports it without a judge. Prints one JSON line.
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
    mine = root / "src" / "tau2" / "data" / "tau2" / "domains" / "mock" / "tasks.json"
    mine.write_text(json.dumps(tasks))
    return root


async def gold(ctx: silo.AgentContext) -> str:
    await ctx.call_tool("create_task", {"user_id": "user_1", "title": "Important Meeting"})
    await ctx.call_tool("message_user", {"text": "Your task Important Meeting is created."})
    return "It is done."


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
    unjudged = await silo.run(load_environment(plain_dir.name, plain), "TASK-001", gold,
                              user=lambda task: Opens())  # fmt: skip
    return {
        "record": record,
        "judged": results,
        "calls": calls,
        "unjudged": {"passed": unjudged.passed, "reward": unjudged.reward,
                     "checks": [c.to_dict() for c in unjudged.checks]},
    }  # fmt: skip


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, Path(sys.argv[1]))))
