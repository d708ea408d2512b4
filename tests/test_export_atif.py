"""``runs export --format atif``: one ATIF v1.7 trajectory per rollout.

Every line is checked by Harbor's own validator, in Harbor's own virtualenv (``.peers/harbor``,
built by ``make peers``): a model agent with exact tokens, a scripted agent, a conversational
task with its user, a failed rollout, and a task family's instance.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async import agents
from silo_async.export import export_runs, trajectories
from silo_async.testing import Reply, ScriptedModelServer, ToolCall

from . import chat_world, family_worlds
from .cli_support import cli
from .peers import extra, peer_python
from .worlds import ENV

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ENVS = {"shop": ENV, "bakery": chat_world.ENV, "tiers": family_worlds.environment(name="tiers")}
VALIDATE = HERE / "peer_scripts" / "harbor_validate.py"

BLOCK = ToolCall("block_customer", {"customerId": "CUS-001"}, id="call_block")
MISS = ToolCall("get_customer", {"customerId": "CUS-404"}, id="call_miss")
SCRIPT = [
    Reply(
        text="Checking.",
        tool_calls=[MISS, BLOCK],
        input_tokens=40,
        output_tokens=9,
        prompt_token_ids=[1, 2, 3],
        token_ids=[4, 5],
        logprobs=[-0.5, -0.25],
    ),
    Reply(text="Blocked CUS-001.", input_tokens=50, output_tokens=4, token_ids=[6]),
]


def harbor_errors(path: Path) -> dict[str, Any]:
    """Harbor's verdict on every line of ``path``."""
    done = subprocess.run(
        [str(peer_python("harbor")), str(VALIDATE), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    verdict: dict[str, Any] = json.loads(done.stdout)
    return verdict


async def scripted(ctx: silo.AgentContext) -> str:
    await ctx.call_tool("get_customer", {"customerId": "CUS-001"})
    await ctx.call_tool("block_customer", {"customerId": "CUS-001"})
    return "Blocked CUS-001."


async def wrong(ctx: silo.AgentContext) -> str:
    await ctx.call_tool("get_customer", "not an object")  # type: ignore[arg-type]
    return "no"


async def rollouts(runs: Path) -> list[silo.RunResult]:
    """A rollout of every kind the export must tell, written under ``runs``."""
    done: list[silo.RunResult] = []
    with ScriptedModelServer(SCRIPT) as server:
        agent = agents.openai_chat("scripted", base_url=server.base_url, token_ids=True)
        how = silo.RunOptions(policy_version="v3")
        done.append(await silo.run(ENV, "TASK-BLOCK", agent, runs_dir=runs, options=how))
    done.append(await silo.run(ENV, "TASK-BLOCK", scripted, runs_dir=runs))
    done.append(await silo.run(ENV, "TASK-BLOCK", wrong, runs_dir=runs))
    done.append(await silo.run(chat_world.ENV, "CHAT-ORDER", chat_world.solver, runs_dir=runs))
    shop = ENVS["tiers"]
    done.append(await silo.run(shop, "set-tier#3", family_worlds.noop, runs_dir=runs))
    return done


def lines_of(
    results: list[silo.RunResult], envs: dict[str, silo.Environment]
) -> list[dict[str, Any]]:
    found = []
    for result in results:
        assert result.run_dir is not None
        (line,) = trajectories(
            [str(result.run_dir)], format="atif", environment=envs[result.environment]
        )
        found.append(line)
    return found


@extra("openai")
async def test_every_line_passes_harbors_own_validator(tmp_path: Path) -> None:
    results = await rollouts(tmp_path / "runs")
    out = tmp_path / "atif.jsonl"
    with out.open("w") as file:
        for result in results:
            env = ENVS[result.environment]
            stats = export_runs([str(result.run_dir)], out=file, format="atif", environment=env)
            assert stats.written == 1
    verdict = harbor_errors(out)
    assert verdict["errors"] == {}
    assert verdict["lines"] == 5 and verdict["versions"] == ["ATIF-v1.7"] * 5


@extra("openai")
async def test_steps_are_atifs_own(tmp_path: Path) -> None:
    model, script, bad, chat, family = lines_of(await rollouts(tmp_path / "runs"), ENVS)
    # The instruction is the first user step; each model response an agent step with the
    # calls it made and what they returned; exact tokens in its metrics.
    steps = model["steps"]
    assert [s["source"] for s in steps] == ["user", "agent", "agent"]
    assert steps[0]["message"] == "Block customer CUS-001."
    first = steps[1]
    assert [c["function_name"] for c in first["tool_calls"]] == ["get_customer", "block_customer"]
    assert first["tool_calls"][1] == {
        "tool_call_id": "call_block",
        "function_name": "block_customer",
        "arguments": {"customerId": "CUS-001"},
    }
    results = first["observation"]["results"]
    assert [r["source_call_id"] for r in results] == ["call_miss", "call_block"]
    assert json.loads(results[0]["content"])["code"] == "not_found"
    assert first["metrics"] == {
        "prompt_tokens": 40,
        "completion_tokens": 9,
        "prompt_token_ids": [1, 2, 3],
        "completion_token_ids": [4, 5],
        "logprobs": [-0.5, -0.25],
    }
    assert first["model_name"] == "scripted" and first["llm_call_count"] == 1
    assert first["extra"]["policyVersion"] == "v3"
    assert steps[2]["message"] == "Blocked CUS-001."
    assert steps[2]["metrics"]["completion_token_ids"] == [6]
    assert "prompt_token_ids" not in steps[2]["metrics"]  # the server sent none: not invented
    assert [s["step_id"] for s in steps] == [1, 2, 3]
    assert model["final_metrics"]["total_prompt_tokens"] == 90
    assert model["final_metrics"]["total_completion_tokens"] == 13
    assert model["final_metrics"]["total_steps"] == 3
    assert model["agent"]["name"] == "silo_async" and model["agent"]["model_name"] == "scripted"
    tools = {t["function"]["name"] for t in model["agent"]["tool_definitions"]}
    assert {"get_customer", "block_customer"} <= tools
    # A scripted agent's calls: deterministic dispatches (no model), then its answer.
    sources = [(s["source"], s.get("llm_call_count")) for s in script["steps"]]
    assert sources == [("user", None), ("agent", 0), ("agent", 0), ("agent", 0)]
    assert script["steps"][-1]["message"] == "Blocked CUS-001."
    assert "metrics" not in script["steps"][1]
    # A rejected call keeps its raw arguments.
    call = bad["steps"][1]["tool_calls"][0]
    assert call["arguments"] == {} and call["extra"] == {"rawArguments": "not an object"}
    # Each user turn is a user step after the agent step that spoke to it.
    said = [(s["source"], s["message"]) for s in chat["steps"] if s["source"] == "user"]
    assert said[0][1].startswith("Serve the customer.")
    assert said[1:] == [("user", "It's ada@example.com."), ("user", "Perfect, thank you!")]
    assert family["steps"][0]["message"].startswith("Move ")


@extra("openai")
async def test_the_grade_is_in_extra(tmp_path: Path) -> None:
    results = await rollouts(tmp_path / "runs")
    model, _, bad, _, family = lines_of(results, ENVS)
    for line, result in ((model, results[0]), (bad, results[2]), (family, results[4])):
        run_dir = result.run_dir
        assert run_dir is not None
        written = json.loads((run_dir / "result.json").read_text())
        extra = line["extra"]
        assert extra["checks"] == written["checks"]
        assert extra["stateDiff"] == json.loads((run_dir / "state-diff.json").read_text())
        assert extra["reward"] == result.reward and extra["passed"] is result.passed
        assert extra["rewardValid"] is result.reward_valid
        assert extra["terminationReason"] == result.termination_reason
        assert line["session_id"] == result.run_id
    assert model["extra"]["passed"] is True and bad["extra"]["passed"] is False
    assert (model["extra"]["family"], model["extra"]["seed"]) == (None, None)
    assert (family["extra"]["family"], family["extra"]["seed"]) == ("set-tier", 3)


def test_the_cli_exports_an_eval_as_atif(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The crm template's eval, solver and do-nothing agent, every task: all valid ATIF."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    solver = str(ROOT / "examples" / "agents" / "crm_solver.py")
    noop = str(ROOT / "examples" / "agents" / "noop.py")
    ran = cli("eval", "--env=crm", "--tasks=all", f"--agent=solver={solver}", f"--agent={noop}")
    assert ran.exit_code == 0, ran.output
    (eval_dir,) = (tmp_path / ".silo" / "evals").iterdir()
    target = tmp_path / "atif.jsonl"
    args = ["runs", "export", "--eval", eval_dir.name, "--format", "atif", "--out", str(target)]
    result = cli(*args)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert len(lines) == 22 and {line["schema_version"] for line in lines} == {"ATIF-v1.7"}
    passed = [line for line in lines if line["extra"]["passed"]]
    assert passed and all(line["extra"]["reward"] == 1.0 for line in passed)
    assert harbor_errors(target) == {"lines": 22, "errors": {}, "versions": ["ATIF-v1.7"] * 22}
