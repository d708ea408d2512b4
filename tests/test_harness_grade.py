"""One grade everywhere (DESIGN §16): the same task and the same calls give the same reward and a
byte-identical ``state-diff.json`` through ``run()``, MCP and every harness.

Each harness is driven with its own released package (in its own virtualenv where its
dependencies clash with ours) and a scripted model; ``run()`` with a scripted agent is the
reference. Every play writes one run under the project's ``.silo/runs/``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async.project import load_environment
from silo_async.testing import ScriptedAgent

from .harness_support import (
    ANSWER,
    CALLS,
    ENV_NAME,
    TASK_ID,
    make_crm_project,
    read_run,
    run_ids,
    run_peer,
    serving,
)
from .peers import peer_python, require_module

Player = Callable[[Path, Path], None]


def play_run(project: Path, scratch: Path) -> None:
    env = load_environment(ENV_NAME, project)
    agent = ScriptedAgent(CALLS, answer=ANSWER)
    anyio.run(lambda: silo.run(env, TASK_ID, agent, runs_dir=project / ".silo" / "runs"))


def play_mcp(project: Path, scratch: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "silo_async", "serve", "--env", ENV_NAME, "--task", TASK_ID],
        cwd=str(project),
        env=dict(os.environ),
    )

    async def play() -> None:
        with (scratch / "mcp-stderr.txt").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                for name, arguments in CALLS:
                    await client.call_tool(name, arguments)
                await client.call_tool("submit", {"answer": ANSWER})

    anyio.run(play)


def _spec(**more: Any) -> str:
    return json.dumps({"task": TASK_ID, "calls": CALLS, "answer": ANSWER, **more})


def play_openenv(project: Path, scratch: Path) -> None:
    python = peer_python("openenv")
    with serving(project, "openenv") as info:
        run_peer(python, "openenv_play.py", info["url"], _spec(), cwd=scratch)


def play_nemo_gym(project: Path, scratch: Path) -> None:
    python = peer_python("nemo-gym")
    with serving(project, "nemo-gym") as info:
        # Without the typed-session checks: they open (and close) a second episode.
        spec = _spec(lifecycle=False)
        run_peer(python, "nemo_gym_play.py", info["url"], spec, cwd=scratch)


def play_inspect(project: Path, scratch: Path) -> None:
    require_module("inspect_ai")
    task_args = {"env": ENV_NAME, "tasks": TASK_ID}
    spec = {"task_args": task_args, "log_dir": str(scratch / "logs"), "calls": CALLS}
    spec["answer"] = ANSWER
    # Run from the project directory, as `inspect eval` is (see test_harness_inspect).
    played = run_peer(Path(sys.executable), "inspect_play.py", json.dumps(spec), cwd=project)
    assert played["status"] == "success", played["error"]


def play_verifiers(project: Path, scratch: Path) -> None:
    python = peer_python("verifiers")
    out = str(scratch / "out")
    played = run_peer(python, "verifiers_play.py", str(project), out, _spec(), cwd=scratch)
    assert played["ok"], played["errors"]


def play_trl(project: Path, scratch: Path) -> None:
    from silo_async.integrations.trl import environment_factory, reward

    cls = environment_factory(ENV_NAME, cwd=project, runs_dir=project / ".silo" / "runs")
    instance = cls()
    instance.reset(task=TASK_ID)
    for name, arguments in CALLS:
        getattr(instance, name)(**arguments)
    reward([[{"role": "assistant", "content": ANSWER}]], [instance])


PLAYERS: dict[str, Player] = {
    "run": play_run,
    "mcp": play_mcp,
    "openenv": play_openenv,
    "nemo-gym": play_nemo_gym,
    "inspect": play_inspect,
    "verifiers": play_verifiers,
    "trl": play_trl,
}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The project, and the run that ``run()`` with a scripted agent leaves in it."""
    project = make_crm_project(tmp_path_factory.mktemp("grade") / "project")
    before = run_ids(project)
    play_run(project, project)
    (run_id,) = run_ids(project) - before
    return {"project": project, "run": read_run(project, run_id)}


@pytest.mark.parametrize("harness", list(PLAYERS))
def test_the_same_calls_give_the_same_grade_through_every_harness(
    harness: str, reference: dict[str, Any], tmp_path: Path
) -> None:
    project: Path = reference["project"]
    expected = reference["run"]
    before = run_ids(project)
    PLAYERS[harness](project, tmp_path)
    (run_id,) = run_ids(project) - before
    run = read_run(project, run_id)
    assert run["calls"] == expected["calls"] == [(n, a) for n, a in CALLS]
    assert run["result"]["reward"] == expected["result"]["reward"] == 1.0
    assert run["result"]["checks"] == expected["result"]["checks"]
    assert run["diff"] == expected["diff"]  # state-diff.json, byte for byte
