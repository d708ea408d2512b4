"""``silo-async import tau2`` and an imported tau2 environment from the command line (DESIGN §20).

In the tau2 virtualenv (``.peers/tau2``): the import of the installed wheel and of a git checkout
(version and commit recorded), ``task list``/``task show`` naming tau2's ids, a run, a changed
data file refused as ``environment_stale`` before anything runs, and tau2's user simulator
played by a scripted model through ``model_user`` (what ``--user-model`` builds).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .peers import ROOT, peer_python

pytestmark = pytest.mark.timeout(600)

AGENT = """
async def agent(ctx):
    await ctx.call_tool("message_user", {"text": "Let me look."})
    return ""
"""


def _cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    python = peer_python("tau2")
    return subprocess.run(
        [str(python), "-m", "silo_async", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=project,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        check=False,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with tau2's mock domain imported from the installed wheel."""
    where = tmp_path_factory.mktemp("tau2-cli")
    done = _cli(where, "import", "tau2", "--domain", "mock", "--json")
    assert done.returncode == 0, done.stderr
    return where


def test_import_prints_what_it_recorded_and_refuses_a_second_one(project: Path) -> None:
    record = json.loads((project / ".silo/environments/tau2-mock/tau2.json").read_text())
    assert record["domain"] == "mock" and record["version"] == "26.3" and record["tasks"] == 9
    again = _cli(project, "import", "tau2", "--domain", "mock")
    assert again.returncode == 1
    assert again.stderr.startswith("error: environment_already_exists: ")
    bad = _cli(project, "import", "tau2", "--domain", "banking")
    assert bad.returncode == 2 and "--domain" in bad.stderr


def test_task_list_and_show_name_tau2s_own_ids(project: Path) -> None:
    listed = _cli(project, "task", "list", "--env", "tau2-mock", "--json")
    assert listed.returncode == 0, listed.stderr
    tasks = json.loads(listed.stdout)
    assert [t["id"] for t in tasks] == [f"TASK-{n:03d}" for n in range(1, 10)]
    shown = _cli(project, "task", "show", "TASK-001", "--env", "tau2-mock", "--json")
    assert shown.returncode == 0, shown.stderr
    task = json.loads(shown.stdout)
    assert task["tau2"] == {"domain": "mock", "id": "create_task_1"}
    assert "opening" not in task["user"]  # tau2's user speaks first, after the greeting
    missing = _cli(project, "task", "show", "TASK-010", "--env", "tau2-mock")
    assert missing.returncode == 1 and missing.stderr.startswith("error: task_not_found: ")


def test_a_run_on_an_imported_environment_is_graded_by_tau2s_components(project: Path) -> None:
    (project / "agent.py").write_text(AGENT)
    done = _cli(project, "run", "--env", "tau2-mock", "--task", "TASK-001", "--agent",
                "agent.py", "--json")  # fmt: skip
    assert done.returncode == 1, done.stderr  # the rollout failed (it created no task)
    result = json.loads(done.stdout)
    assert [c["label"] for c in result["checks"]] == ["db", "communicate"]
    assert result["passed"] is False and result["rewardValid"] is True


def _checkout(where: Path) -> Path:
    """A git checkout of tau2-bench's layout, made from the installed package (for this test)."""
    python = peer_python("tau2")
    found = subprocess.run(
        [str(python), "-c", "import tau2, os; print(os.path.dirname(tau2.__file__))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    package = Path(found.stdout.strip())
    checkout = where / "tau2-bench"
    shutil.copytree(
        package,
        checkout / "src" / "tau2",
        ignore=shutil.ignore_patterns("__pycache__", "workflows", "tasks_full.json", "*.png"),
    )
    (checkout / "pyproject.toml").write_text('[project]\nname = "tau2"\nversion = "0.9.test"\n')
    git = ["git", "-C", str(checkout), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "tau2"], check=True)
    return checkout


def test_a_checkout_is_recorded_with_its_commit_and_a_changed_file_is_stale(
    tmp_path: Path,
) -> None:
    checkout = _checkout(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    done = _cli(project, "import", "tau2", str(checkout), "--domain", "mock", "--name", "mine",
                "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    assert (record["path"], record["version"], record["commit"]) == (
        str(checkout.resolve()), "0.9.test", head,
    )  # fmt: skip
    db = "src/tau2/data/tau2/domains/mock/db.json"
    assert db in record["digests"]
    listed = _cli(project, "task", "list", "--env", "mine")
    assert listed.returncode == 0, listed.stderr
    data = checkout / db
    data.write_text(data.read_text().replace("user_1", "user_one"))
    (project / "agent.py").write_text(AGENT)
    stale = _cli(project, "run", "--env", "mine", "--task", "TASK-001", "--agent", "agent.py")
    assert stale.returncode == 1
    assert stale.stderr.startswith("error: environment_stale: ")
    assert db in stale.stderr
    assert not (project / ".silo" / "runs").exists()  # refused before anything ran


def test_tau2s_user_simulator_plays_the_user_on_a_model(tmp_path: Path) -> None:
    python = peer_python("tau2")
    script = ROOT / "tests" / "peer_scripts" / "tau2_user_play.py"
    done = subprocess.run([str(python), str(script), str(tmp_path)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, check=False,
                          env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    played: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert played["passed"], (played["checks"], played["error"])
    user_requests = [r for r in played["requests"] if "<scenario>" in r["messages"][0]["content"]]
    first = user_requests[0]["messages"]
    assert "create_task_1" not in first[0]["content"]  # the scenario, never tau2's task id
    assert "Important Meeting" in first[0]["content"]  # the task's scenario
    assert first[1]["content"].startswith("Agent: Hi! How can I help you today?")
    opening, turn = played["trace"]
    assert opening["type"] == "user_opening" and opening["text"].startswith("Hi, I'm user_1")
    assert turn["ended"] is True and "###STOP###" in turn["reply"]
    agent_first = next(r for r in played["requests"] if r not in user_requests)
    assert agent_first["messages"][0] == {"role": "system", "content": played["policy"]}
    assert agent_first["messages"][1]["content"].endswith(f"User: {opening['text']}")
    tau2 = played["tau2"]
    assert played["policy"] == tau2["policy"]
    assert [
        {"name": t["name"], "description": t["description"], "inputSchema": t["parameters"]}
        for t in tau2["tools"]
    ] == played["tools"]


@pytest.fixture(scope="module")
def checkout_plays(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """tests/peer_scripts/tau2_judge_play.py's plays on a changed checkout of tau2's mock."""
    where = tmp_path_factory.mktemp("tau2-judge")
    python = peer_python("tau2")
    script = ROOT / "tests" / "peer_scripts" / "tau2_judge_play.py"
    done = subprocess.run([str(python), str(script), str(where)], capture_output=True,
                          text=True, timeout=300, cwd=where, check=False,
                          env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    played: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return played


def test_a_judge_model_grades_assertions_in_natural_language_with_tau2s_prompt(
    checkout_plays: dict[str, Any],
) -> None:
    played = checkout_plays
    assert played["record"]["judge"]["model"] == "openai/judge"
    met, unmet = played["judged"]
    assert met["passed"] and not unmet["passed"], played["judged"]
    assert [(c["label"], c["required"]) for c in met["checks"]] == [
        ("db", True),
        ("nl_assertions", True),
    ]
    assert not next(c for c in unmet["checks"] if c["label"] == "nl_assertions")["passed"]
    asked = played["calls"][0]["messages"]
    assert "The agent confirmed the task was created successfully" in asked[-1]["content"]
    assert "Your task Important Meeting is created." in asked[-1]["content"]
    unjudged = played["unjudged"]  # without a judge: optional, labelled not graded
    nl = next(c for c in unjudged["checks"] if c["label"] == "nl_assertions")
    assert unjudged["passed"] and not nl["required"] and nl["detail"].startswith("not graded")


TELECOM_FACTS = """
import json
from tau2.domains.telecom.environment import get_environment, get_tasks
env = get_environment()
print(json.dumps({
    "small": [t.id for t in get_tasks("small")],
    "agent": [t.openai_schema["function"]["name"] for t in env.get_tools()],
    "user": [t.openai_schema["function"]["name"] for t in env.get_user_tools()],
}))
"""


TOOLS_AGENT = """
import json

async def agent(ctx):
    return json.dumps(sorted(t.name for t in ctx.tools))
"""


def test_split_picks_tau2s_task_split_and_telecoms_user_tools_are_the_users(
    tmp_path: Path,
) -> None:
    tau2 = subprocess.run([str(peer_python("tau2")), "-c", TELECOM_FACTS], capture_output=True,
                          text=True, timeout=300, check=True)  # fmt: skip
    facts = json.loads(tau2.stdout.strip().splitlines()[-1])
    done = _cli(tmp_path, "import", "tau2", "--domain", "telecom", "--split", "small", "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert (record["split"], record["tasks"]) == ("small", len(facts["small"]))
    listed = _cli(tmp_path, "task", "list", "--env", "tau2-telecom", "--json")
    assert listed.returncode == 0, listed.stderr
    ids = [t["id"] for t in json.loads(listed.stdout)]
    assert ids == [f"TASK-{n:03d}" for n in range(1, len(facts["small"]) + 1)]
    last = _cli(tmp_path, "task", "show", ids[-1], "--env", "tau2-telecom", "--json")
    assert last.returncode == 0, last.stderr
    task = json.loads(last.stdout)
    assert task["tau2"] == {"domain": "telecom", "id": facts["small"][-1]}
    assert task["user"]["tools"] == facts["user"]  # the customer's phone is the user's
    (tmp_path / "agent.py").write_text(TOOLS_AGENT)
    ran = _cli(tmp_path, "run", "--env", "tau2-telecom", "--task", ids[-1], "--agent", "agent.py",
               "--json")  # fmt: skip
    seen = json.loads(json.loads(ran.stdout)["agentOutput"])  # the agent's ctx.tools
    assert seen == sorted([*facts["agent"], "message_user"]), seen
    unknown = _cli(tmp_path, "import", "tau2", "--domain", "telecom", "--split", "nope",
                   "--name", "other")  # fmt: skip
    assert unknown.returncode == 1 and unknown.stderr.startswith("error: task_not_found: ")
    assert "nope" in unknown.stderr


def test_a_gold_action_that_raises_is_an_environment_fault_where_tau2_passes_silently(
    checkout_plays: dict[str, Any],
) -> None:
    broken = checkout_plays["brokenGold"]  # graded on its actions alone; its gold call raises
    assert broken["tau2"]["reward"] == 1.0  # tau2 passes an agent that repeats the broken call
    mine = broken["silo"]
    assert (mine["passed"], mine["rewardValid"], mine["invalidReason"]) == (
        False, False, "environment_fault",
    ), mine  # fmt: skip
    assert "broken_gold_action" in mine["error"], mine
