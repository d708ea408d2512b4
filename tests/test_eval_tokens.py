"""Tokens (mean and total per task and agent) and cost by a price table in every eval output."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import silo_async as silo
from silo_async.cli._eval import summary_text
from silo_async.eval import evaluate, read_index, read_summary
from silo_async.testing import Reply, ScriptedModelServer
from tests.peers import extra

from .cli_support import cli
from .test_eval_support import good_agent, make_env

PRICES = {"big": {"input": 2.0, "output": 8.0}, "small": {"input": 0.5, "output": 1.0}}


async def thinker(ctx: silo.AgentContext) -> str:
    """Two model turns per rollout (one on an unpriced model), then the good agent's work."""
    ctx.record_model_step(model="big", input_tokens=1000, output_tokens=100)
    ctx.record_model_step(model="mystery", input_tokens=50, output_tokens=10)
    return await good_agent(ctx)


@pytest.mark.anyio
async def test_tokens_and_cost_per_task_and_agent(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    agents = {"thinker": thinker, "scripted": good_agent}
    summary = await evaluate(make_env(), None, agents, runs=2, out_dir=out, prices=PRICES)
    data = read_summary(out)
    assert data["config"]["prices"] == PRICES
    thinking = next(a for a in data["agents"] if a["agent"] == "thinker")
    assert thinking["meanModelSteps"] == 2
    assert (thinking["meanInputTokens"], thinking["meanOutputTokens"]) == (1050, 110)
    assert (thinking["totalInputTokens"], thinking["totalOutputTokens"]) == (4200, 440)
    per_rollout = (1000 * 2.0 + 100 * 8.0) / 1e6  # "mystery" has no price: counted apart
    assert thinking["cost"] == {
        "total": round(4 * per_rollout, 6),
        "mean": round(per_rollout, 6),
        "unpricedTokens": 4 * 60,
    }
    cell = data["tasks"][1]["agents"]["thinker"]
    assert cell["totalInputTokens"] == 2100 and cell["cost"]["total"] == round(2 * per_rollout, 6)
    scripted = data["tasks"][0]["agents"]["scripted"]
    assert scripted["totalInputTokens"] == 0 and scripted["cost"]["total"] == 0.0
    line = next(r for r in read_index(out) if r.agent == "thinker")
    assert (line.model_steps, line.input_tokens, line.output_tokens) == (2, 1050, 110)
    assert line.cost == pytest.approx(per_rollout) and line.unpriced_tokens == 60
    md = (out / "summary.md").read_text()
    assert "tokens (mean in / out, total) | cost |" in md
    assert "1,050 in / 110 out, 4,640 total" in md
    assert "## Tokens (mean input / output per rollout, total; cost by the price table)" in md
    assert "1,050 in / 110 out, 2,320 total · cost 0.0056 (0.0028/run), 120 tokens unpriced" in md
    text = summary_text(summary, tmp_path)
    assert "tokens (mean, total)" in text and "1,050 in / 110 out, 4,640 total" in text
    assert "0.0112 (0.0028/run), 240 tokens unpriced" in text


@pytest.mark.anyio
async def test_no_token_columns_when_nothing_recorded(tmp_path: Path) -> None:
    summary = await evaluate(make_env(), None, {"g": good_agent}, out_dir=tmp_path / "e")
    assert "tokens (mean" not in summary_text(summary, tmp_path)
    md = (tmp_path / "e" / "summary.md").read_text()
    assert "Tokens" not in md and "cost" not in md
    assert read_summary(tmp_path / "e")["agents"][0]["cost"] is None


@pytest.mark.anyio
async def test_a_bad_price_table_is_refused() -> None:
    with pytest.raises(ValueError, match='"big" needs "output"'):
        await evaluate(make_env(), None, {"g": good_agent}, prices={"big": {"input": 1}})


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    return tmp_path


@extra("openai")
def test_eval_of_a_model_agent_with_prices(project: Path) -> None:
    (project / "prices.json").write_text(json.dumps({"*": {"input": 1.0, "output": 10.0}}))
    with ScriptedModelServer(
        lambda request: Reply(text="done", input_tokens=800, output_tokens=40)
    ) as server:
        result = cli(
            "eval", "--env", "crm", "--task", "TASK-001", "--task", "TASK-002",
            "--model", "m=openai/scripted", "--base-url", server.base_url,
            "--runs", "2", "--prices", "prices.json", "--json",
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    model = data["agents"][0]
    assert model["agent"] == "m" and model["totalInputTokens"] == 4 * 800
    assert model["cost"]["total"] == round(4 * (800 * 1.0 + 40 * 10.0) / 1e6, 6)
    md = (Path(data["outDir"]) / "summary.md").read_text()
    assert "800 in / 40 out, 3,360 total" in md


def test_prices_invalid(project: Path) -> None:
    (project / "bad.json").write_text('{"m": {"input": "cheap", "output": 1}}')
    result = cli("eval", "--env", "crm", "--agent", "x.py", "--prices", "bad.json")
    assert result.exit_code == 1
    assert result.stderr.startswith('error: prices_invalid: bad.json: "m" needs "input"')
    missing = cli("eval", "--env", "crm", "--prices", "nope.json")
    assert missing.stderr.startswith("error: prices_invalid: cannot read the price table nope.json")
