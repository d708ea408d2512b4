"""A whole NeMo Gym rollout collection over ``serve --protocol nemo-gym`` (DESIGN §22).

NeMo Gym's own CLI runs it, as a user would: ``gym env start`` launches its head server, its
``vllm_model`` model server (in front of a :class:`~silo_async.testing.ScriptedModelServer`
speaking Chat Completions), its Simple Agent, the legacy-agent environment server and the silo
resources server (a Gym server directory whose ``app.py`` starts ``silo-async serve``); then
``gym eval run --no-serve`` collects a rollout per dataset row and asks the resources server
for ``/aggregate_metrics``, which answered 404 before (the collection then failed). Every
server is on 127.0.0.1; Ray, which ``gym env start`` always starts, stays on loopback.

Each server of Gym's runs from a virtualenv Gym looks up under ``uv_venv_dir``: symlinks to
the NeMo Gym peer virtualenv (and, for the silo server, to this interpreter's), with
``skip_venv_if_present`` so Gym installs nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from silo_async.project import load_environment
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall

from .harness_support import (
    ANSWER,
    CALLS,
    ENV_NAME,
    make_crm_project,
    read_run,
    run_peer,
    serving,
)
from .peers import peer_python, require_extra

require_extra("mcp")

import httpx2  # noqa: E402 - after the check

# Ray and five servers start on a shared 2-core machine: minutes, not the default 2.
pytestmark = pytest.mark.timeout(600)

#: Rows of the collection: the solver's task, and one the model gives up on.
TASKS = ("TASK-001", "TASK-002")
#: Seconds the servers may take to come up (Ray and five processes on a loaded machine).
STARTUP_S = 240

LAUNCHER = '''"""Gym's entrypoint for the silo world: ``silo-async serve --protocol nemo-gym``."""
import os
import sys

os.chdir({project!r})
serve = ["-m", "silo_async", "serve", "--env", {env!r}, "--protocol", "nemo-gym"]
os.execv(sys.executable, [sys.executable, *serve, "--port", "{port}"])
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def play(request: ModelRequest) -> Reply:
    """The solver's calls then its answer on TASK-001; any other task, a refusal at once."""
    if "Tomasz" not in str(request.messages[:2]):
        return Reply(text="I cannot do this one.")
    if request.turn < len(CALLS):
        return Reply(tool_calls=[ToolCall(*CALLS[request.turn])])
    return Reply(text=ANSWER)


def rows(project: Path) -> str:
    """The dataset: one row per task, with the tools the model may call."""
    env = load_environment(ENV_NAME, project)
    specs = {t.spec.name: t.spec for t in env.bind_tools(env.create_state())}
    tools = [
        {
            "type": "function",
            "name": name,
            "description": specs[name].description,
            "parameters": specs[name].input_schema,
            "strict": False,  # silo's schemas have optional parameters
        }
        for name in ("search_leads", "convert_lead")
    ]
    lines = []
    for task in TASKS:
        message = {"role": "user", "content": env.task(task).instruction}
        params = {"input": [message], "tools": tools}
        lines.append(json.dumps({"task": task, "responses_create_params": params}))
    return "\n".join(lines) + "\n"


def gym_config(project: Path, model_url: str, silo_port: int) -> str:
    """Gym's config: the silo resources server, the model, the Simple Agent, its env server."""
    return f"""
silo_resources:
  resources_servers:
    silo_crm:
      entrypoint: app.py
      host: 127.0.0.1
      port: {silo_port}
      domain: agent
policy_model:
  responses_api_models:
    vllm_model:
      entrypoint: app.py
      host: 127.0.0.1
      base_url: {model_url}
      api_key: scripted
      model: scripted
      return_token_id_information: false
      uses_reasoning_parser: false
silo_simple_agent:
  responses_api_agents:
    simple_agent:
      entrypoint: app.py
      host: 127.0.0.1
      resources_server: {{type: resources_servers, name: silo_resources}}
      model_server: {{type: responses_api_models, name: policy_model}}
      max_steps: 10
silo_environment_server:
  environment_servers:
    legacy_agent:
      entrypoint: app.py
      host: 127.0.0.1
      agent_server: {{type: responses_api_agents, name: silo_simple_agent}}
head_server:
  host: 127.0.0.1
  port: {free_port()}
"""


def lay_out(scratch: Path, project: Path, gym_python: Path, silo_port: int) -> None:
    """The silo server's directory, and the virtualenvs Gym finds under ``venvs/``."""
    server = scratch / "resources_servers" / "silo_crm"
    server.mkdir(parents=True)
    (server / "requirements.txt").write_text("", encoding="utf-8")  # marks a server directory
    launcher = LAUNCHER.format(project=str(project), env=ENV_NAME, port=silo_port)
    (server / "app.py").write_text(launcher, encoding="utf-8")
    venvs = {
        "resources_servers/silo_crm": Path(sys.prefix),
        "responses_api_models/vllm_model": gym_python.parent.parent,
        "responses_api_agents/simple_agent": gym_python.parent.parent,
        "environment_servers/legacy_agent": gym_python.parent.parent,
    }
    for where, venv in venvs.items():
        (scratch / "venvs" / where).mkdir(parents=True)
        (scratch / "venvs" / where / ".venv").symlink_to(venv)


def gym_env() -> dict[str, str]:
    """The environment of Gym's commands: a fresh Ray on loopback only, its token this run's own
    (no ``RAY_*`` of ours: a ``RAY_ADDRESS`` would make Gym join that cluster instead)."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("RAY_")},
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
    }


def wait_ready(log: Path, gym: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8", errors="replace")
        if "servers ready!" in text:
            return
        assert gym.poll() is None, text[-4000:]
        time.sleep(0.5)
    raise AssertionError(log.read_text(encoding="utf-8", errors="replace")[-4000:])


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A crm project for the module."""
    return make_crm_project(tmp_path_factory.mktemp("gym-project") / "project")


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory, project: Path) -> dict[str, Any]:
    """The collection's outputs and the model's requests (the runs are in ``project``)."""
    gym_python = peer_python("nemo-gym")
    scratch = tmp_path_factory.mktemp("gym")
    (scratch / "rows.jsonl").write_text(rows(project), encoding="utf-8")
    silo_port = free_port()
    lay_out(scratch, project, gym_python, silo_port)
    common = ["+uv_venv_dir=" + str(scratch / "venvs"), "+skip_venv_if_present=true"]
    gym = str(gym_python.parent / "gym")
    with ScriptedModelServer(play) as model:
        (scratch / "gym.yaml").write_text(
            gym_config(project, model.base_url, silo_port), encoding="utf-8"
        )
        log = scratch / "gym-env.log"
        with log.open("wb") as written:
            started = subprocess.Popen(
                [gym, "env", "start", "--config", "gym.yaml", *common],
                cwd=scratch,
                env=gym_env(),
                stdout=written,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its servers and Ray in one group, stopped together
            )
        try:
            wait_ready(log, started)
            run = ["eval", "run", "--no-serve", "--config", "gym.yaml"]
            run += ["--agent", "silo_simple_agent", "--input", "rows.jsonl"]
            collect = subprocess.run(
                [gym, *run, "--output", "out/rollouts.jsonl", *common],
                cwd=scratch,
                env=gym_env(),
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        finally:
            stop(started)
        requests = len(model.requests)
    assert collect.returncode == 0, (collect.stdout[-3000:], collect.stderr[-3000:])
    out = scratch / "out"
    rollouts = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    return {
        "rollouts": sorted(rollouts, key=lambda r: r["task"]),
        "metrics": json.loads((out / "rollouts_aggregate_metrics.json").read_text()),
        "requests": requests,
    }


def stop(gym: subprocess.Popen[bytes]) -> None:
    """Ctrl-C to ``gym env start`` (it stops its servers), then whatever is left of its group."""
    if gym.poll() is None:
        os.killpg(gym.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            gym.wait(timeout=60)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(gym.pid, signal.SIGKILL)
    gym.wait()


def test_the_collection_completes_with_each_rows_world_reward(
    collection: dict[str, Any], project: Path
) -> None:
    solved, refused = collection["rollouts"]
    assert [solved["task"], refused["task"]] == list(TASKS)
    for rollout in (solved, refused):
        run = read_run(project, rollout["silo_run_id"])
        assert rollout["reward"] == run["result"]["reward"]
    assert solved["reward"] == 1.0 and solved["passed"] is True
    assert refused["reward"] < 1.0 and refused["passed"] is False
    solved_run = read_run(project, solved["silo_run_id"])
    assert solved_run["calls"] == [(n, a) for n, a in CALLS]  # every call through the agent
    assert solved_run["result"]["agentOutput"] == ANSWER
    assert collection["requests"] == len(CALLS) + 2  # the solver's turns, and one refusal


def test_aggregate_metrics_come_from_the_silo_server(collection: dict[str, Any]) -> None:
    (entry,) = collection["metrics"]
    rewards = [r["reward"] for r in collection["rollouts"]]
    assert entry["agent_ref"] == {"name": "silo_simple_agent"}
    assert entry["key_metrics"]["mean/reward"] == pytest.approx(sum(rewards) / 2)
    assert entry["agent_metrics"]["mean/passed"] == 0.5
    assert entry["agent_metrics"]["num_repeats"] == 1
    by_task = {g["_ng_task_index"]: g for g in entry["group_level_metrics"]}
    assert [by_task[i]["mean/reward"] for i in (0, 1)] == rewards
    assert entry["repeat_level_metrics"] == []


#: Verify responses the way a collection strips them, with the cases the profile must handle:
#: several rollouts of a task, a masked one, bools, usage counts, a column only some rows have.
VERIFY_RESPONSES: list[dict[str, Any]] = [
    {"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0, "passed": True,
     "response": {"usage": {"input_tokens": 40, "output_tokens": 20, "total_tokens": 60}}},
    {"_ng_task_index": 0, "_ng_rollout_index": 1, "reward": 0.5, "passed": False,
     "response": {"usage": {"input_tokens": 30, "output_tokens": 10, "total_tokens": 40}}},
    {"_ng_task_index": 1, "_ng_rollout_index": 0, "reward": 0.27, "passed": False,
     "task": "TASK-002", "silo_run_id": "run_x", "steps": 3},
    {"_ng_task_index": 1, "_ng_rollout_index": 1, "reward": 0.0, "passed": False,
     "mask_sample": True},
    {"_ng_task_index": 2, "_ng_rollout_index": 0, "reward": 0.0, "mask_sample": True},
]  # fmt: skip


def test_aggregate_metrics_answer_as_nemo_gyms_own_profile(project: Path, tmp_path: Path) -> None:
    """The same numbers as NeMo Gym's own ``compute_aggregate_metrics`` (its resources servers'
    answer) for the same verify responses, every key silo gives."""
    gym_python = peer_python("nemo-gym")
    with serving(project, "nemo-gym") as info:
        ours = httpx2.post(
            f"{info['url']}/aggregate_metrics", json={"verify_responses": VERIFY_RESPONSES}
        )
        empty = httpx2.post(f"{info['url']}/aggregate_metrics", json={"verify_responses": []})
        bad = httpx2.post(f"{info['url']}/aggregate_metrics", json={"rows": []})
    spec = json.dumps(VERIFY_RESPONSES)
    theirs = run_peer(gym_python, "nemo_gym_aggregate.py", spec, cwd=tmp_path)
    assert ours.status_code == 200, ours.text
    answer = ours.json()
    assert answer["key_metrics"] == pytest.approx(theirs["key_metrics"])
    assert answer["perf_summary"] is theirs["perf_summary"] is None
    pairs = [(answer["agent_metrics"], theirs["agent_metrics"])]
    for part in ("group_level_metrics", "repeat_level_metrics"):
        assert len(answer[part]) == len(theirs[part]) == 2
        pairs += zip(answer[part], theirs[part], strict=True)
    for mine, gyms in pairs:
        exact = {k: v for k, v in mine.items() if not k.startswith("ci_")}
        assert exact == pytest.approx({k: gyms[k] for k in exact})
        # The t quantile of silo's report (a 3-decimal table) where Gym asks scipy.
        intervals = {k: v for k, v in mine.items() if k.startswith("ci_")}
        assert intervals == pytest.approx({k: gyms[k] for k in intervals}, rel=1e-3)
        assert set(gyms) - set(mine) <= {"sample", "rollout_infos"}  # a group's row, rollouts
    assert "ci_low_95_across_repeats/mean/reward" in answer["agent_metrics"]
    assert "coverage/masked_rollouts" in answer["agent_metrics"]
    assert empty.json() == theirs["empty"]
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_input"
