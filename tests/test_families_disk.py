"""Task families on disk (DESIGN.md section 18): ``families/`` exported by the entrypoint.

The loader reads only the entrypoint's exports (``families``, ``vary``); an instance id runs from
the CLI like any task id, with ``--agent silo_async.testing:gold_agent``; ``run.json`` says which
family, seed and split a rollout played (null for a hand-written task).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from silo_async.project import load_environment

from .cli_support import cli

FAMILY = """\
import silo_async as silo


def sample(world, rng):
    return {"n": rng.randint(1, 1000)}


family = silo.TaskFamily(
    id="say-number",
    title="Say a number",
    sample=sample,
    instruction=lambda p: f"Say {p['n']}.",
    gold=lambda p: [],
    answer=lambda p: str(p["n"]),
)
"""

REGISTRY = """\
import silo_async as silo

from . import say_number

families: list[silo.TaskFamily] = [say_number.family]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with a blank environment ``shop`` whose one family answers a number."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert cli("init", "shop").exit_code == 0
    families = tmp_path / ".silo" / "environments" / "shop" / "families"
    (families / "say_number.py").write_text(FAMILY, encoding="utf-8")
    (families / "__init__.py").write_text(REGISTRY, encoding="utf-8")
    return tmp_path


def entrypoint(project: Path) -> Path:
    return project / ".silo" / "environments" / "shop" / "__init__.py"


def test_the_entrypoint_exports_its_families(project: Path) -> None:
    env = load_environment("shop")
    assert [f.id for f in env.families] == ["say-number"]
    assert env.vary is None
    task = env.task("say-number#7")
    assert task.instruction == f"Say {(task.params or {})['n']}."


def test_the_loader_reads_only_the_entrypoints_exports(project: Path) -> None:
    path = entrypoint(project)
    text = path.read_text().replace("from .families import families\n", "")
    path.write_text(text.replace('"families", ', ""), encoding="utf-8")
    assert load_environment("shop").families == ()


@pytest.mark.parametrize(
    ("export", "fragment"),
    [
        ("families = {'say-number': 1}", "exports families as a dict"),
        ("families = ['say-number']", 'families[0] in environment "shop" is a str'),
        ("vary = 'fresh'", "exports vary as a str"),
    ],
)
def test_a_malformed_export_is_runtime_contract_invalid(
    project: Path, export: str, fragment: str
) -> None:
    path = entrypoint(project)
    path.write_text(path.read_text() + f"\n{export}\n", encoding="utf-8")
    result = cli("run", "--env", "shop", "--task", "say-number#1")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: runtime_contract_invalid: ")
    assert fragment in result.stderr


def test_an_instance_runs_from_the_cli_with_the_gold_agent(project: Path) -> None:
    result = cli(
        "run", "--env", "shop", "--task", "say-number#7",
        "--agent", "silo_async.testing:gold_agent", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["passed"] is True
    run = json.loads((project / data["runDir"] / "run.json").read_text())
    assert (run["taskId"], run["family"], run["seed"]) == ("say-number#7", "say-number", 7)
    assert run["split"] in ("train", "test")
    assert run["task"]["instruction"] == f"Say {run['task']['params']['n']}."


def test_an_unknown_instance_is_task_not_found_on_the_cli(project: Path) -> None:
    result = cli("run", "--env", "shop", "--task", "say-number#07")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: task_not_found: ")


def test_a_hand_written_run_json_has_null_family_seed_and_split(project: Path) -> None:
    steps = [
        ["verifier", "add", "VER-001", "--env", "shop", "--task", "TASK-001"],
        [
            "task",
            "add",
            "TASK-001",
            "--env=shop",
            "--title=t",
            "--instruction=i",
            "--verifier=VER-001",
        ],
    ]
    for step in steps:
        assert cli(*step).exit_code == 0, step
    verifier = project / ".silo" / "environments" / "shop" / "verifiers" / "ver_001.py"
    verifier.write_text(
        textwrap.dedent(
            """\
            import silo_async as silo

            @silo.verifier(id="VER-001", task_id="TASK-001")
            def ver_001(final, initial, ctx):
                return [silo.check("always", True)]
            """
        ),
        encoding="utf-8",
    )
    (project / "silo_agent.py").write_text("async def agent(ctx):\n    return 'ok'\n")
    result = cli("run", "--env", "shop", "--task", "TASK-001", "--json")
    assert result.exit_code == 0, result.output
    run = json.loads((project / json.loads(result.stdout)["runDir"] / "run.json").read_text())
    assert (run["family"], run["seed"], run["split"]) == (None, None, None)
    assert "family" not in run["task"]
