"""``silo.resume``: an eval continued from its directory alone, and what it refuses.

The headline fact: an eval of a project's environment with two ``--agent`` files and a model
agent (on a ScriptedModelServer), killed with SIGKILL, is resumed by ``silo.resume(EVAL_DIR)``
in a fresh Python process started elsewhere, with nothing else given, to the files of an eval
never interrupted. Then what a resume refuses, each a one-line ``resume_conflict`` (or
``eval_invalid`` for a plan edited by hand) naming the setting: by its keyword in Python, by its
flag on the CLI.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall

from .cli_support import cli
from .peers import extra
from .resume_support import drive, same_eval
from .test_eval_support import good_agent, make_env

ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")
NOOP = str(ROOT / "examples" / "agents" / "noop.py")
TASKS = ["--task", "TASK-001", "--task", "TASK-002"]


def _script(request: ModelRequest) -> Reply:
    """Answers that depend only on the conversation: a resumed rollout is asked the same."""
    if request.turn >= 2:
        return Reply(text=f"done: {request.task[:12]}", input_tokens=30, output_tokens=4)
    name = request.tool_names[request.turn % len(request.tool_names)]
    return Reply(tool_calls=[ToolCall(name, {"id": f"X-{request.turn}"})], input_tokens=20)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ScriptedModelServer]]:
    path = tmp_path_factory.mktemp("library")
    with ScriptedModelServer(_script) as server, pytest.MonkeyPatch.context() as patch:
        patch.chdir(path)
        patch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
        assert cli("init", "crm", "--template", "crm").exit_code == 0
        yield path, server


def _plan(server: ScriptedModelServer) -> list[str]:
    return [
        "eval", "--env", "crm", *TASKS, "--agent", f"solver={SOLVER}", "--agent", NOOP,
        "--model", "m=openai/scripted", "--base-url", server.base_url, "--runs", "2",
        "--concurrency", "2",
    ]  # fmt: skip


_FRESH = """
import json, sys
import anyio
import silo_async as silo

summary = anyio.run(silo.resume, sys.argv[1])
print(json.dumps({"resumed": summary.resumed.to_dict(), "complete": summary.complete}))
"""


@extra("openai")
def test_silo_resume_needs_nothing_but_the_directory_in_a_fresh_process(
    project: tuple[Path, ScriptedModelServer], tmp_path: Path
) -> None:
    path, server = project
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(path)
        reference = cli(*_plan(server), "--out", "reference")
    assert reference.exit_code == 0, reference.output
    killed = drive(path, [*_plan(server), "--out", "ev"], {"at": "call", "n": 6})
    assert killed == -signal.SIGKILL, (path / "child.log").read_text()
    elsewhere = tmp_path / "elsewhere"  # not the project: the directory is all it is given
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI")}
    done = subprocess.run(
        [sys.executable, "-c", _FRESH, str(path / "ev")],
        cwd=elsewhere,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout.splitlines()[-1])
    assert printed["complete"] is True and printed["resumed"]["rerun"] > 0
    same_eval(path / "reference", path / "ev")
    plan = json.loads((path / "ev" / "eval.json").read_text())
    assert [sorted(a) for a in plan["agents"]] == [
        ["agent", "cwd", "label"], ["agent", "cwd", "label"], ["label", "model", "options"],
    ]  # fmt: skip


@extra("openai")
def test_model_flags_equal_to_the_plan_pass_and_others_are_refused(
    project: tuple[Path, ScriptedModelServer],
) -> None:
    path, server = project
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(path)
        assert cli(*_plan(server), "--out", "flags").exit_code == 0
        (path / "flags" / "summary.json").unlink()
        url = ["--base-url", server.base_url]
        for flags in (["--max-turns", "50"], url, [*url, "--max-turns", "50"]):
            same = cli("eval", "--resume", "flags", *flags)  # 50 is the agent's default
            assert same.exit_code == 0, (flags, same.output)
            (path / "flags" / "summary.json").unlink()
        for flags, named in (
            (["--max-turns", "7"], "--agent/--model"),
            (["--base-url", "http://127.0.0.1:9/v1"], "--agent/--model"),
        ):
            refused = cli("eval", "--resume", "flags", *flags)
            assert refused.exit_code == 1
            assert refused.stderr.startswith(f"error: resume_conflict: {named} differs "), flags
        solver_only = ["eval", "--env", "crm", *TASKS, "--agent", f"solver={SOLVER}"]
        assert cli(*solver_only, "--out", "no-model").exit_code == 0
        for flags, named in ((url, "--base-url"), (["--max-turns", "50"], "--max-turns")):
            refused = cli("eval", "--resume", "no-model", *flags)
            assert refused.exit_code == 1
            line = refused.stderr
            assert line.startswith(f"error: resume_conflict: {named} applies to model agents, "), (
                line
            )
            assert f"Leave {named} out." in line and len(line.splitlines()) == 1


async def _cut(tmp_path: Path) -> Path:
    """A code-first eval whose last rollouts are gone: something is left to resume."""
    out = tmp_path / "ev"
    await silo.evaluate(make_env(), None, {"good": good_agent}, runs=2, out_dir=out)
    (out / "summary.json").unlink()
    return out


@pytest.mark.anyio
async def test_what_a_python_resume_refuses_names_its_keyword(tmp_path: Path) -> None:
    out = await _cut(tmp_path)
    env = make_env()
    cases: list[tuple[dict[str, Any], str]] = [
        ({"env": silo.Environment(name="other", create_state=dict)}, "env="),
        ({"env": env, "agents": {"better": good_agent}}, "agents="),
    ]
    for kwargs, named in cases:
        with pytest.raises(silo.SiloError) as refused:
            await silo.resume(out, **kwargs)
        assert refused.value.code == "resume_conflict", kwargs
        assert refused.value.message.startswith(f"{named} differs from the plan of eval ")
        assert refused.value.details["keyword"] == named.rstrip("=")
    with pytest.raises(silo.SiloError, match=r'The environment "items" of eval .* env='):
        await silo.resume(out)
    summary = await silo.resume(out, env=env, concurrency=1)
    assert summary.complete and summary.config["concurrency"] == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda plan: plan.update(runs="3"), "runs"),
        (lambda plan: plan.update(tasks=["T-1", 7]), "tasks"),
        (lambda plan: plan.update(tasks=[]), "tasks"),
        (lambda plan: plan.update(concurrency=0), "concurrency"),
        (lambda plan: plan["limits"].update(maxToolCalls=-1), "limits.maxToolCalls"),
        (lambda plan: plan["limits"].update(timeoutMs="soon"), "limits.timeoutMs"),
        (lambda plan: plan.update(prices={"*": {"input": -1, "output": 1}}), "prices"),
        (lambda plan: plan.update(faults=[{"kind": "melt", "p": 2}]), "faults"),
        (lambda plan: plan.update(baseline=True), "baseline"),
        (lambda plan: plan.update(user=5), "user"),
        (lambda plan: plan["agents"].append({"label": "good"}), "agents"),
        (lambda plan: plan["agents"][0].update(label=None), "agents.0.label"),
        (lambda plan: plan.pop("evalId"), "evalId"),
        (lambda plan: plan.update(environment={"project": None}), "environment.name"),
        (lambda plan: plan.update(digests={"tasks": [], "verifiers": {}}), "digests.tasks"),
        # A count laid out in memory before anything runs (it took 16 GB and went on).
        (lambda plan: plan.update(runs=10**30), "runs"),
        # Read as 1, the runs after the first had no place in the plan: removed as strays.
        (lambda plan: plan.pop("runs"), "runs"),
        # A lone surrogate no file name can hold (a non-UTF-8 name's bytes, U+DC80..U+DCFF, can).
        (lambda plan: plan["environment"].update(project="/tmp/\ud800"), "environment.project"),
        (lambda plan: plan.update(tasks=["T-1", "T-\udfff"]), "tasks.1"),
        (lambda plan: plan.update(evalId="eval_\ud800"), "evalId"),
    ],
)
async def test_a_hand_edited_plan_is_eval_invalid_naming_the_field(
    tmp_path: Path, edit: Any, field: str
) -> None:
    out = await _cut(tmp_path)
    plan = json.loads((out / "eval.json").read_text())
    edit(plan)
    (out / "eval.json").write_text(json.dumps(plan))
    before = sorted(p.name for p in (out / "runs").iterdir())
    with pytest.raises(silo.SiloError) as refused:
        await silo.resume(out, env=make_env())
    assert refused.value.code == "eval_invalid"
    assert refused.value.details["field"] == field
    assert f'"{field}" ' in refused.value.message
    assert sorted(p.name for p in (out / "runs").iterdir()) == before  # nothing touched


@pytest.mark.anyio
async def test_an_eval_too_large_to_lay_out_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    env = make_env()
    runs = 10_000_000 // len(env.tasks) + 1  # one task over the most an eval.json may plan
    with pytest.raises(ValueError, match=r"an eval runs at most 10,000,000\.$"):
        await silo.evaluate(env, None, {"good": good_agent}, runs=runs, out_dir=tmp_path / "ev")
    assert list(tmp_path.iterdir()) == []


def test_a_hand_edited_plan_is_one_line_on_the_cli(
    project: tuple[Path, ScriptedModelServer],
) -> None:
    path, _ = project
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(path)
        solver_only = ["eval", "--env", "crm", *TASKS, "--agent", f"solver={SOLVER}"]
        assert cli(*solver_only, "--out", "edited").exit_code == 0
        plan = json.loads((path / "edited" / "eval.json").read_text())
        (path / "edited" / "eval.json").write_text(json.dumps({**plan, "runs": "two"}))
        refused = cli("eval", "--resume", "edited")
    assert refused.exit_code == 1
    assert refused.stderr.startswith("error: eval_invalid: ")
    assert '"runs" must be a whole number >= 1' in refused.stderr
    assert len(refused.stderr.splitlines()) == 1


@extra("openai")
def test_the_plans_executor_is_rebuilt_unless_the_flags_say_otherwise(
    project: tuple[Path, ScriptedModelServer],
) -> None:
    path, _ = project
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(path)
        solver_only = ["eval", "--env", "crm", *TASKS, "--agent", f"solver={SOLVER}"]
        assert cli(*solver_only, "--out", "on-ray").exit_code == 0
        plan = json.loads((path / "on-ray" / "eval.json").read_text())
        plan["executor"] = {"executor": "ray", "address": "127.0.0.1:9", "workers": 2}
        (path / "on-ray" / "eval.json").write_text(json.dumps(plan))  # as if it ran on Ray
        (path / "on-ray" / "summary.json").unlink()
        recorded = cli("eval", "--resume", "on-ray")  # the plan's cluster, not listening
        assert recorded.exit_code == 1
        [line] = [x for x in recorded.stderr.splitlines() if x.startswith("error: ")]
        assert line.startswith("error: executor_unavailable: ") and "127.0.0.1:9" in line
        here = cli("eval", "--resume", "on-ray", "--executor", "local", "--json")
        assert here.exit_code == 0, here.output
        assert json.loads(here.stdout)["config"]["executor"] == "local"
        assert cli(*solver_only, "--out", "local").exit_code == 0
        (path / "local" / "summary.json").unlink()
        sized = cli("eval", "--resume", "local", "--workers", "2")
        assert sized.exit_code == 1
        assert sized.stderr.startswith("error: executor_invalid: --workers apply to --executor ray")
