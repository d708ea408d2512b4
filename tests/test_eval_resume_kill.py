"""The kill test of DESIGN §15: an eval killed at any moment, resumed, equals one never killed.

Each case kills ``silo-async eval`` (a child process) at a point drawn from its seed — a tool
call of some rollout, or the N-th file put in place: the plan, a run directory's files, the
summary files — with ``SIGKILL`` (or ``SIGINT``: Ctrl-C), sometimes kills the resume too, then
resumes to the end and compares every file with an eval of the same plan that was never
interrupted: ``summary.json``, ``runs/index.jsonl`` and each rollout's ``result.json`` and
``state-diff.json``, timings and ids aside. With a model agent (a scripted model server whose
requests are counted), at most one request per interrupted rollout is asked again.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall

from .cli_support import cli
from .peers import require_extra
from .resume_support import drive, interrupted, same_eval, start

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")
NOOP = str(ROOT / "examples" / "agents" / "noop.py")
TASKS = ["--task", "TASK-001", "--task", "TASK-004"]
PLAN = [
    "eval", "--env", "crm", *TASKS, "--agent", f"solver={SOLVER}", "--agent", f"noop={NOOP}",
    "--runs", "2", "--concurrency", "3",
]  # fmt: skip
ROLLOUTS = 2 * 2 * 2
#: Files put in place by an uninterrupted eval: eval.json, 3 per rollout, the 4 summary files.
REPLACES = 1 + 3 * ROLLOUTS + 4


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("resume")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(path)
        patch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
        assert cli("init", "crm", "--template", "crm").exit_code == 0
        yield path


@pytest.fixture(scope="module")
def reference(project: Path) -> tuple[Path, int]:
    """The eval never interrupted, and how many tool calls it made."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project)
        patch.setattr(sys, "path", list(sys.path))
        result = cli(*PLAN, "--out", "reference")
    assert result.exit_code == 0, result.output
    index = (project / "reference" / "runs" / "index.jsonl").read_text().splitlines()
    return project / "reference", sum(json.loads(line)["toolCalls"] for line in index)


def _trigger(rng: random.Random, calls: int, sig: str, replaces: int) -> dict[str, Any]:
    if rng.random() < 0.5:
        return {"at": "call", "n": rng.randint(1, calls), "signal": sig}
    after = rng.random() < 0.5
    return {"at": "replace", "n": rng.randint(1, replaces), "after": after, "signal": sig}


#: Kill points every run of the test covers, besides the random ones: right after the plan
#: was written (no rollout started), and in the summary: once index.jsonl was rewritten with
#: it, and just before summary.json (the last file).
FIXED = {
    100: {"at": "replace", "n": 1, "after": True},
    101: {"at": "replace", "n": REPLACES - 3, "after": True},
    102: {"at": "replace", "n": REPLACES, "after": False},
}


def _resume_to_the_end(project: Path, out: str, rng: random.Random, sig: str) -> None:
    """Resume, perhaps killed again (a kill during a resume), until it finishes."""
    if rng.random() < 0.4:
        code = drive(project, ["eval", "--resume", out], _trigger(rng, 20, sig, 20))
        assert code in (0, -signal.SIGKILL, 130), (project / "child.log").read_text()
    assert drive(project, ["eval", "--resume", out]) == 0, (project / "child.log").read_text()


@pytest.mark.parametrize("seed", [*range(8), *FIXED])
def test_sigkill_at_any_moment_then_resume_equals_the_uninterrupted_eval(
    project: Path, reference: tuple[Path, int], seed: int
) -> None:
    expected, calls = reference
    rng = random.Random(seed)
    trigger = FIXED.get(seed) or _trigger(rng, calls, "KILL", REPLACES)
    out = f"ev-kill-{seed}"
    code = drive(project, [*PLAN, "--out", out], {**trigger, "signal": "KILL"})
    assert code in (-signal.SIGKILL, 0), (project / "child.log").read_text()
    if not (project / out / "eval.json").exists():  # killed before the plan was on disk
        assert drive(project, ["eval", "--resume", out]) == 1  # eval_not_found
        return
    _resume_to_the_end(project, out, rng, "KILL")
    same_eval(expected, project / out)


@pytest.mark.parametrize("seed", range(3))
def test_ctrl_c_at_any_moment_then_resume_equals_the_uninterrupted_eval(
    project: Path, reference: tuple[Path, int], seed: int
) -> None:
    expected, calls = reference
    rng = random.Random(1000 + seed)
    out = f"ev-int-{seed}"
    trigger = {"at": "call", "n": rng.randint(1, calls), "signal": "INT"}
    assert drive(project, [*PLAN, "--out", out], trigger) in (130, 0)
    summary = json.loads((project / out / "summary.json").read_text())
    assert summary["cancelled"] is True or summary["complete"] is True
    _resume_to_the_end(project, out, rng, "INT")
    same_eval(expected, project / out)


# A model agent ------------------------------------------------------------------------------

MODEL_TASKS = ["--task", "TASK-001", "--task", "TASK-002"]
#: Responses per conversation: three rounds of tool calls, then the answer.
TURNS = 4


class _Model:
    """A scripted model whose answers depend only on the conversation (task, turn), which can
    kill the eval asking it on its N-th request (before answering: that answer is lost)."""

    def __init__(self) -> None:
        self.kill_at: int | None = None
        self.pid: int | None = None
        self.seen = 0

    def __call__(self, request: ModelRequest) -> Reply:
        self.seen += 1
        if self.kill_at is not None and self.seen == self.kill_at and self.pid is not None:
            os.kill(self.pid, signal.SIGKILL)
        turn, names = request.turn, request.tool_names
        if turn + 1 >= TURNS:
            return Reply(text=f"done with {request.task[:20]}", input_tokens=50, output_tokens=5)
        calls = [ToolCall(names[(turn * 2 + i) % len(names)], {"id": f"X-{turn}"}) for i in (0, 1)]
        return Reply(tool_calls=calls, input_tokens=40 + turn, output_tokens=3)

    def arm(self, kill_at: int | None, pid: int | None) -> None:
        self.kill_at, self.pid, self.seen = kill_at, pid, 0


@pytest.fixture(scope="module")
def model(project: Path) -> Iterator[tuple[_Model, ScriptedModelServer, int]]:
    """The model server, and how many requests an uninterrupted eval asks (in ``model-ref``)."""
    require_extra("openai")
    script = _Model()
    with ScriptedModelServer(script) as server, pytest.MonkeyPatch.context() as patch:
        patch.chdir(project)
        patch.setattr(sys, "path", list(sys.path))
        assert cli(*_model_plan(server), "--out", "model-ref").exit_code == 0
        yield script, server, len(server.requests)


def _model_plan(server: ScriptedModelServer) -> list[str]:
    return [
        "eval", "--env", "crm", *MODEL_TASKS, "--agent", f"solver={SOLVER}",
        "--model", "m=openai/scripted", "--base-url", server.base_url, "--runs", "3",
        "--concurrency", "3",
    ]  # fmt: skip


def _wait(process: Any, project: Path) -> int:
    process.join(60)
    assert process.exitcode is not None, (project / "child.log").read_text()
    return int(process.exitcode)


@pytest.mark.parametrize("seed", range(3))
def test_a_model_agent_asks_at_most_one_request_again_per_interrupted_rollout(
    project: Path, model: tuple[_Model, ScriptedModelServer, int], seed: int
) -> None:
    script, server, asked_once = model
    assert asked_once == 6 * TURNS  # 2 tasks × 3 runs of the model agent
    rng = random.Random(2000 + seed)
    plan = _model_plan(server)
    before, out, lost = len(server.requests), f"model-{seed}", 0
    for attempt, args in enumerate(([*plan, "--out", out], ["eval", "--resume", out])):
        if attempt and rng.random() < 0.5:
            break  # one kill, or two (the resume killed too)
        process = start(project, args)
        script.arm(rng.randint(2, asked_once - 2), process.pid)
        assert _wait(process, project) in (-signal.SIGKILL, 0)
        lost += interrupted(project / out)
    script.arm(None, None)
    assert drive(project, ["eval", "--resume", out]) == 0, (project / "child.log").read_text()
    same_eval(project / "model-ref", project / out)
    asked_again = len(server.requests) - before - asked_once
    assert 0 <= asked_again <= lost, (asked_again, lost)
    replayed = [
        json.loads(run.read_text())["resumedModelSteps"]
        for run in (project / out / "runs").glob("*/run.json")
    ]
    if lost:
        assert sum(replayed) > 0  # the interrupted conversations went on from their records
