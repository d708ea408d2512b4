"""verifiers 0.4 (v1 API): ``load_environment`` evaluated by verifiers' own runner, and the
``vf-eval`` line of docs/harnesses.md run as written (DESIGN §22).

In the verifiers virtualenv (it pins ``mcp==2.0.0`` and ``openai<3``), against a
``ScriptedModelServer``: every model call goes through verifiers' interception endpoint, every
tool call through the rollout's episode.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from silo_async.testing import ScriptedModelServer

from .docs_support import ROOT, page
from .harness_players import Plays
from .harness_support import ANSWER, CALLS, make_crm_project, read_run
from .peers import peer_python

pytestmark = pytest.mark.timeout(600)  # vf-eval takes ~25 s to start on a loaded machine


def test_verifiers_runner_plays_an_episode_per_rollout_rewarded_by_the_world(
    plays: Plays,
) -> None:
    play = plays.get("verifiers")
    played, run = play.output, play.run
    assert played["ok"] is True, played["errors"]
    assert played["rewards"] == {"silo": 1.0} and played["reward"] == 1.0
    assert played["metrics"] == {"passed": 1.0, "tool_calls": float(len(CALLS))}
    assert played["tools"][-1] == "submit" and "convert_lead" in played["tools"]
    assert played["model_requests"] == len(CALLS) + 1
    assert played["silo"]["runId"] == run["runId"]
    assert run["calls"] == [(n, a) for n, a in CALLS]
    assert run["result"]["agentOutput"] == ANSWER
    assert run["result"]["toolErrors"] == 1
    assert run["result"]["modelSteps"] == len(CALLS) + 1


def documented_vf_eval() -> list[str]:
    """The ``vf-eval`` command of docs/harnesses.md, as its words (continuation lines joined)."""
    found = re.search(r"^vf-eval silo_async_verifiers (?:.*\\\n)*.*$", page("harnesses"), re.M)
    assert found, "docs/harnesses.md has no vf-eval silo_async_verifiers line"
    return shlex.split(found.group(0).replace("\\\n", " "))


def crm_model() -> Any:
    """``examples/agents/crm_model.py``'s ``play``: a model that plays TASK-001 (and tries any)."""
    path = ROOT / "examples" / "agents" / "crm_model.py"
    spec = importlib.util.spec_from_file_location("crm_model", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.play


def test_the_documented_vf_eval_line_runs_offline_with_nothing_pushed(tmp_path: Path) -> None:
    """As written, but for the model server's URL: verifiers' Prime defaults (its inference URL,
    pushing the run, a Prime sandbox for the agent) stay out of the way: no account at all."""
    python = peer_python("verifiers")
    words = documented_vf_eval()
    assert "--no-push" in words
    url_at = words.index("--client.base-url") + 1
    project = make_crm_project(tmp_path / "project")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIME")}
    with ScriptedModelServer(crm_model()) as model:
        words[url_at] = model.base_url
        words[0] = str(python.parent / "vf-eval")
        done = subprocess.run(
            words,
            cwd=project,
            env={**env, "OPENAI_API_KEY": "scripted"},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    (run_dir,) = (project / "outputs").iterdir()
    episodes = [json.loads(line) for line in (run_dir / "traces.jsonl").read_text().splitlines()]
    assert len(episodes) == 5 * 3 and all(e["ok"] for e in episodes)  # -n 5 -r 3
    config = json.loads((run_dir / "configs" / "resolved" / "eval.json").read_text())
    assert config["env"]["agent"]["runtime"] == {"type": "subprocess"}  # SiloEnv's default
    assert config["client"]["base_url"] == words[url_at]
    solved = [e["traces"][0] for e in episodes if e["task"]["data"]["id"] == "TASK-001"]
    assert len(solved) == 3
    for trace in solved:
        assert trace["rewards"]["silo"]["score"] == 1.0
        assert read_run(project, trace["info"]["silo"]["runId"])["result"]["reward"] == 1.0
    assert len(list((project / ".silo" / "runs").iterdir())) == 15
    said = done.stdout + done.stderr
    assert "not authenticated" not in said and "push failed" not in said.lower()
