"""Evaluating task families (DESIGN.md section 18): evaluate(families=...) and eval --family.

The instances played are those of the scan rule; the summary groups them by family and split,
with rates and intervals per family, in ``summary.json``, ``summary.md`` and ``report.html``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import silo_async as silo
from silo_async.testing import gold_agent

from .cli_support import cli
from .family_worlds import COUNT, SET_TIER, TIER_AND_NOTE, environment, noop

pytestmark = pytest.mark.anyio


async def test_evaluate_plays_each_familys_instances_and_groups_them(tmp_path: Path) -> None:
    env = environment(SET_TIER, TIER_AND_NOTE, COUNT)
    summary = await silo.evaluate(
        env,
        None,
        {"gold": gold_agent, "idle": noop},
        families={"tier-and-note": 3, "count-tier": 2},
        split="train",
        out_dir=tmp_path / "eval",
    )
    wanted = [t.id for t in env.instances("tier-and-note", 3, split="train")]
    wanted += [t.id for t in env.instances("count-tier", 2, split="train")]
    assert [t.id for t in summary.tasks] == wanted
    data = json.loads((tmp_path / "eval" / "summary.json").read_text())
    families = data["families"]
    assert [(f["family"], f["split"], f["instances"]) for f in families] == [
        ("tier-and-note", "train", 3),
        ("count-tier", "train", 2),
    ]
    gold = families[0]["agents"]["gold"]
    assert (gold["runs"], gold["passes"], gold["passRate"]) == (3, 3, 1.0)
    assert gold["passRateCI"] is not None
    assert families[0]["agents"]["idle"]["passes"] == 0
    markdown = (tmp_path / "eval" / "summary.md").read_text()
    assert "## Task families" in markdown
    assert "| tier-and-note | train | 3 | 3/3 = 1.00 [" in markdown
    html = (tmp_path / "eval" / "report.html").read_text()
    assert '<table id="families">' in html and "<td>tier-and-note</td><td>train</td>" in html


async def test_tasks_and_families_combine_and_hand_written_tasks_have_no_family_group() -> None:
    hand = silo.Task("T-1", "t", "Say hi.", "VER-1")
    verifier = silo.verifier(id="VER-1", task_id="T-1")(lambda f, i: [silo.check("ok", True)])
    env = environment(COUNT, tasks=[hand], verifiers=[verifier])
    only = await silo.evaluate(
        env, None, {"gold": noop}, families={"count-tier": 1}, split="train", report=False
    )
    assert [t.family for t in only.tasks] == ["count-tier"]
    both = await silo.evaluate(
        env, ["T-1"], {"a": noop}, families={"count-tier": 1}, split="train", report=False
    )
    assert both.tasks[0].id == "T-1" and len(both.tasks) == 2
    assert [g.family for g in both.families] == ["count-tier"]
    plain = await silo.evaluate(env, None, {"a": noop}, report=False)
    assert [t.id for t in plain.tasks] == ["T-1"]
    assert plain.to_dict()["families"] == []


FAMILY = """\
import silo_async as silo

family = silo.TaskFamily(
    id="say-number",
    title="Say a number",
    sample=lambda world, rng: {"n": rng.randint(1, 1000)},
    instruction=lambda p: f"Say {p['n']}.",
    gold=lambda p: [],
    answer=lambda p: str(p["n"]),
)
families = [family]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert cli("init", "shop").exit_code == 0
    (tmp_path / ".silo" / "environments" / "shop" / "families" / "__init__.py").write_text(FAMILY)
    return tmp_path


def test_eval_family_count_split_start_on_the_cli(project: Path) -> None:
    result = cli(
        "eval", "--env", "shop", "--family", "say-number", "--count", "4", "--split", "train",
        "--start", "10", "--agent", "silo_async.testing:gold_agent", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    env = silo.load_environment("shop")
    expected = [t.id for t in env.instances("say-number", 4, split="train", start=10)]
    assert [t["task"]["id"] for t in data["tasks"]] == expected
    assert data["families"][0]["family"] == "say-number"
    assert data["families"][0]["agents"]["silo_async.testing:gold_agent"]["passRate"] == 1.0
    text = cli(
        "eval", "--env", "shop", "--family", "say-number", "--count", "4", "--split", "train",
        "--agent", "silo_async.testing:gold_agent",
    )  # fmt: skip
    lines = text.stdout.splitlines()
    at = lines.index("Task families (passed/valid, pass rate [95% CI])")
    assert lines[at + 1].split() == [
        "family",
        "split",
        "instances",
        "silo_async.testing:gold_agent",
    ]
    assert lines[at + 2].split()[:4] == ["say-number", "train", "4", "4/4"]


def test_family_flags_need_a_family_and_a_known_one(project: Path) -> None:
    result = cli("eval", "--env", "shop", "--count", "3")
    assert result.exit_code == 2
    assert "--count applies to --family" in result.stderr
    result = cli(
        "eval", "--env", "shop", "--family", "nope", "--agent", "silo_async.testing:gold_agent"
    )
    assert result.exit_code == 1
    assert result.stderr.startswith(
        'error: task_not_found: Environment "shop" has no task family "nope"'
    )
    result = cli("eval", "--env", "shop", "--family", "say-number", "--split", "dev")
    assert result.exit_code == 2
