"""``silo-async env validate`` accepts a freshly scaffolded environment of every gated template.

Validation includes the do-nothing credibility check (every task is run with an agent that
does nothing, and must fail); the sabotage test proves that check is really applied to the
template's tasks, not skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from silo_async.templates import template_dir

from .cli_support import cli

TEMPLATES = ["crm", "project", "support"]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _template_counts(template: str) -> dict[str, int]:
    root = template_dir(template)
    return {
        "data": len(list((root / "data").glob("*.json"))),
        "tasks": len(list((root / "tasks").glob("*.json"))),
    }


@pytest.mark.parametrize("template", TEMPLATES)
def test_fresh_environment_validates_clean(template: str) -> None:
    created = cli("init", "demo", "--template", template)
    assert created.exit_code == 0, created.output
    result = cli("env", "validate", "--env", "demo", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] is True
    # Not even warnings: a shipped template has a manifest, data, tools, verifiers and tasks.
    assert report["findings"] == []
    counts = report["counts"]
    assert {k: counts[k] for k in ("data", "tasks")} == _template_counts(template)
    assert counts["tools"] > 0 and counts["verifiers"] == counts["tasks"]
    text = cli("env", "validate", "--env", "demo")
    assert text.exit_code == 0
    assert text.stdout.startswith("OK\tdemo\t")


def _make_task_001_lenient(env: Path) -> str:
    """Replace TASK-001's verifier with one that passes on anything; return its id."""
    task = json.loads((env / "tasks" / "TASK-001.json").read_text(encoding="utf-8"))
    verifier_id = task["verifierId"]
    registry = env / "verifiers" / "__init__.py"
    registry.write_text(
        registry.read_text(encoding="utf-8")
        + f"""

@silo.verifier(id={verifier_id!r}, task_id="TASK-001")
def _lenient(final, initial, ctx):
    return [silo.check("anything goes", True)]


verifiers = [v for v in verifiers if v.id != {verifier_id!r}] + [_lenient]
""",
        encoding="utf-8",
    )
    return str(verifier_id)


@pytest.mark.parametrize("template", TEMPLATES)
def test_credibility_check_catches_a_verifier_that_passes_doing_nothing(
    template: str, tmp_path: Path
) -> None:
    assert cli("init", "demo", "--template", template).exit_code == 0
    verifier_id = _make_task_001_lenient(tmp_path / ".silo" / "environments" / "demo")
    result = cli("env", "validate", "--env", "demo", "--json")
    assert result.exit_code == 1
    errors = [f for f in json.loads(result.stdout)["findings"] if f["level"] == "error"]
    assert [f["code"] for f in errors] == ["verifier_passes_noop"]
    assert '"TASK-001"' in errors[0]["message"] and verifier_id in errors[0]["message"]
