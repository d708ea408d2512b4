"""``make demo`` (examples/demo.py): runs end to end in a scratch project and prints a summary."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from .peers import extra

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.py"
ROW = re.compile(
    r"^\s*(TASK-\d{3})\s+(easy|medium|hard)\s+.+?\s+(PASS|FAIL) (\d\.\d\d)\s+(PASS|FAIL)"
)


@pytest.fixture
def demo(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """examples/demo.py, imported by path as ``make demo`` runs it."""
    spec = importlib.util.spec_from_file_location("_silo_demo", DEMO)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve annotations through sys.modules, so the module must be registered.
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def _rows(out: str) -> dict[str, tuple[str, str, str]]:
    return {m[1]: (m[3], m[4], m[5]) for m in (ROW.match(line) for line in out.splitlines()) if m}


def _assert_summary(out: str) -> None:
    rows = _rows(out)
    assert sorted(rows) == [f"TASK-{i:03d}" for i in range(1, 12)]
    assert set(rows.values()) == {("PASS", "1.00", "FAIL")}
    assert "solver passed 11/11 · do-nothing passed 0/11" in out
    assert "silo-async init demo --template crm" in out
    assert "first `source .venv/bin/activate`" in out  # else silo-async is not on PATH
    assert "silo-async run --env demo --task TASK-004 --agent ./my_agent.py" in out
    assert "silo-async run --env demo --task TASK-004 --model openai/gpt-4.1-mini" in out
    _assert_model(out)


def _assert_model(out: str) -> None:
    """The model agent's part: it passed through one rejected call, and shows its tokens."""
    assert "Model in the loop: agents.openai_chat (the OpenAI SDK) on TASK-001" in out
    summary = re.search(
        r"PASS 1\.00 · 4 model steps · 3 tool calls \(1 rejected, then corrected\) · "
        r"tokens ([\d,]+) in · ([\d,]+) out",
        out,
    )
    assert summary is not None, out
    steps = re.findall(r"^  step (\d)\s+([\d,]+) in\s+([\d,]+) out  (.*)$", out, re.M)
    assert [s[0] for s in steps] == ["1", "2", "3", "4"]
    total_in = sum(int(s[1].replace(",", "")) for s in steps)
    assert total_in == int(summary[1].replace(",", ""))  # the steps add up to the run's tokens
    assert steps[1][3].startswith('convert_lead -> invalid_input: Invalid arguments for "convert')
    assert steps[2][3] == "convert_lead -> ok"


@extra("openai")
def test_demo_keeps_its_project_and_prints_plain_text(
    demo: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "demo-project"
    assert demo.main(["--keep", str(project), "--plain"]) == 0
    out = capsys.readouterr().out
    _assert_summary(out)
    assert re.search(r"^Task\s+Difficulty\s+Title\s+Solver\s+Do-nothing\s+Tool calls$", out, re.M)
    runs = sorted((project / ".silo" / "runs").iterdir())
    assert len(runs) == 23  # 11 tasks x (solver, do-nothing) + the model agent on TASK-001
    assert all((run / "result.json").is_file() for run in runs)
    assert f"Runs are kept in {project.resolve()}/.silo/runs/" in out


@extra("openai")
@extra("rich")
def test_demo_renders_with_rich_in_a_scratch_dir_it_removes(
    demo: ModuleType,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert demo.main([]) == 0
    out = capsys.readouterr().out
    _assert_summary(out)
    first = out.splitlines()[0]
    assert first.startswith("Scratch project: ")
    assert not Path(first.removeprefix("Scratch project: ").split(" (")[0]).exists()
    assert "━" in out  # rich drew the table


@extra("openai")
def test_demo_falls_back_to_plain_text_without_rich(
    demo: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "rich", None)  # import rich now raises ImportError
    assert demo.main(["--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    _assert_summary(out)
    assert "━" not in out


def test_demo_without_the_openai_sdk_skips_the_model_part(
    demo: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # as if the extra were not installed
    assert demo.main(["--keep", str(tmp_path), "--plain"]) == 0
    out = capsys.readouterr().out
    assert "on TASK-001: skipped (The openai provider needs" in out
    assert "pip install 'silo_async[openai]'" in out
