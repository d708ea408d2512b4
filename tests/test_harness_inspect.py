"""Inspect AI: ``silo_async/silo_task`` found through the entry point, played with mockllm."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness_players import Plays
from .harness_support import ANSWER, CALLS, TASK_ID, new_run, run_ids, run_peer
from .peers import require_module


def test_the_registered_task_plays_one_episode_per_sample_and_scores_its_reward(
    plays: Plays,
) -> None:
    play = plays.get("inspect")
    played, run = play.output, play.run
    assert played["id"] == TASK_ID
    assert played["score"] == run["result"]["reward"] == 1.0
    assert played["answer"] == ANSWER
    assert played["metadata"]["passed"] is True
    assert played["metadata"]["runId"] == run["runId"]
    assert played["metadata"]["checks"] == run["result"]["checks"]
    # Every call reached silo, the one Inspect's own schema check would have refused included:
    # silo's message is what the model read.
    assert run["calls"] == [(n, a) for n, a in CALLS]
    assert run["result"]["toolErrors"] == 1
    (refused,) = played["toolErrors"]
    assert json.loads(refused)["code"] == "invalid_input"
    assert '"qury" is not a parameter' in json.loads(refused)["message"]
    assert run["result"]["modelSteps"] == len(CALLS) + 1


def test_a_reply_without_a_tool_call_is_the_answer_and_every_tool_is_shown(
    plays: Plays,
    tmp_path: Path,
) -> None:
    require_module("inspect_ai")
    project = plays.project
    before = run_ids(project)
    spec = {
        "task_args": {"env": "crm", "tasks": TASK_ID},
        "log_dir": str(tmp_path / "logs"),
        "calls": [],
        "text": "I will not do that.",
    }
    played = run_peer(Path(sys.executable), "inspect_play.py", json.dumps(spec), cwd=project)
    run = new_run(project, before)
    assert run["result"]["agentOutput"] == "I will not do that."
    assert run["result"]["toolCalls"] == 0
    assert played["score"] == run["result"]["reward"]
    names = [t["name"] for t in played["tools"]]
    assert names[-1] == "submit" and "convert_lead" in names
    convert = next(t for t in played["tools"] if t["name"] == "convert_lead")
    assert "leadId" in convert["required"]


def test_an_unknown_environment_or_task_fails_at_task_creation(plays: Plays) -> None:
    require_module("inspect_ai")
    import silo_async as silo
    from silo_async.integrations.inspect import silo_task

    with pytest.raises(silo.SiloError) as info:
        silo_task(project=plays.project, env="crm", tasks=["TASK-999"])
    assert info.value.code == "task_not_found"
    with pytest.raises(ValueError, match="env=NAME"):
        silo_task(project=plays.project)


#: The scripted model of the CLI test: the harness calls, then the answer (one conversation).
_MODEL_SCRIPT = f"""
from silo_async.testing import Reply, ToolCall

CALLS = {CALLS!r}
script = [Reply(tool_calls=[ToolCall(name, args)]) for name, args in CALLS]
script.append(Reply(text={ANSWER!r}))
"""


def test_the_inspect_command_plays_the_registered_task_against_a_served_model(
    plays: Plays, tmp_path: Path
) -> None:
    """``inspect eval silo_async/silo_task`` from a project, as the README says, end to end.

    The model is ``silo-async scripted-model`` on 127.0.0.1, reached through Inspect's own
    OpenAI provider (Chat Completions: the scripted server does not speak the Responses API).
    """
    require_module("inspect_ai")
    project = plays.project
    (tmp_path / "script.py").write_text(_MODEL_SCRIPT, encoding="utf-8")
    bin_dir = Path(sys.executable).parent
    before = run_ids(project)
    with served_model(bin_dir, tmp_path / "script.py") as base_url:
        env = {**os.environ, "OPENAI_API_KEY": "unused", "OPENAI_BASE_URL": base_url}
        command = [str(bin_dir / "inspect"), "eval", "silo_async/silo_task"]
        command += ["-T", "env=crm", "-T", f"tasks={TASK_ID}", "--model", "openai/scripted"]
        command += ["-M", "responses_api=false", "--log-dir", str(tmp_path / "logs")]
        command += ["--display", "plain", "--max-retries", "0", "--log-format", "json"]
        done = subprocess.run(
            command, cwd=project, env=env, capture_output=True, text=True, timeout=300
        )
    assert done.returncode == 0, done.stdout + done.stderr
    run = new_run(project, before)
    assert run["calls"] == [(n, a) for n, a in CALLS]
    assert run["result"]["reward"] == 1.0 and run["result"]["agentOutput"] == ANSWER
    (log,) = (tmp_path / "logs").glob("*.json")
    written = json.loads(log.read_text(encoding="utf-8"))
    assert written["status"] == "success"
    (sample,) = written["samples"]
    (score,) = sample["scores"].values()
    assert score["value"] == 1.0 and score["metadata"]["runId"] == run["runId"]


@contextlib.contextmanager
def served_model(bin_dir: Path, script: Path) -> Iterator[str]:
    """``silo-async scripted-model SCRIPT`` on a free port; its base URL until stopped."""
    proc = subprocess.Popen(
        [str(bin_dir / "silo-async"), "scripted-model", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("http://127.0.0.1:"), proc.stderr.read() if proc.stderr else line
        yield line
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
