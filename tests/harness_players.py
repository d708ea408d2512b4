"""Each harness plays the shared script once per session; tests read the play and its run.

:func:`plays` is a session fixture: a crm project, and for each harness (``run``, ``mcp``,
``openenv``, ``openenv-mcp``, ``nemo-gym``, ``inspect``, ``verifiers``, ``trl``) the output of
its play of :data:`~tests.harness_support.CALLS` and the run it left, played on first use. The
one-grade test compares the runs; each harness's own test checks its protocol on the same play.
:func:`chat_plays` is the same for the conversational task :data:`~tests.harness_support.CHAT`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest

import silo_async as silo
from silo_async.project import load_environment
from silo_async.testing import ScriptedAgent

from .harness_support import (
    CHAT,
    ENV_NAME,
    SCRIPT,
    Script,
    make_chat_project,
    make_crm_project,
    read_run,
    run_ids,
    run_peer,
    serving,
)
from .peers import peer_python, require_extra

__all__ = ["Play", "Plays", "chat_plays", "plays"]

#: A player: (project, scratch directory, script) -> (what the harness answered, its run id or
#: None when it is the one new run of the project).
Player = Callable[[Path, Path, Script], tuple[dict[str, Any], str | None]]


def _spec(script: Script) -> str:
    return json.dumps({"task": script.task, "calls": script.calls, "answer": script.answer})


def play_run(project: Path, scratch: Path, script: Script) -> tuple[dict[str, Any], str | None]:
    env = load_environment(ENV_NAME, project)
    agent = ScriptedAgent(script.calls, answer=script.answer)
    runs = project / ".silo" / "runs"
    result = anyio.run(lambda: silo.run(env, script.task, agent, runs_dir=runs))
    return {}, result.run_id


def play_mcp(project: Path, scratch: Path, script: Script) -> tuple[dict[str, Any], str | None]:
    require_extra("mcp")
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "silo_async", "serve", "--env", ENV_NAME, "--task", script.task],
        cwd=str(project),
        env=dict(os.environ),
    )

    async def play() -> None:
        with (scratch / "mcp-stderr.txt").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                for name, arguments in script.calls:
                    await client.call_tool(name, arguments)
                await client.call_tool("submit", {"answer": script.answer})

    anyio.run(play)
    return {}, None


def play_openenv(project: Path, scratch: Path, script: Script) -> tuple[dict[str, Any], str | None]:
    python = peer_python("openenv")
    require_extra("mcp")  # serve's package, and httpx2
    require_extra("harness-servers")
    import httpx2

    with serving(project, "openenv") as info:
        played = run_peer(python, "openenv_play.py", info["url"], _spec(script), cwd=scratch)
        played["info"] = info
        for route in ("health", "schema", "metadata"):
            played[route] = httpx2.get(f"{info['url']}/{route}").json()
    return played, played["submit"]["observation"]["metadata"]["runId"]


def play_openenv_mcp(
    project: Path, scratch: Path, script: Script
) -> tuple[dict[str, Any], str | None]:
    """OpenEnv's own validator, then its ``MCPToolClient`` (sessions over ``/mcp`` + ``/ws``)."""
    python = peer_python("openenv")
    require_extra("mcp")
    require_extra("harness-servers")
    with serving(project, "openenv") as info:
        validate = subprocess.run(
            [str(python.parent / "openenv"), "validate", "--url", info["url"], "--json"],
            cwd=scratch,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        played = run_peer(python, "openenv_mcp_play.py", info["url"], _spec(script), cwd=scratch)
        played["validate"] = {"returncode": validate.returncode, **json.loads(validate.stdout)}
    return played, played["submit"]["metadata"]["runId"]


def play_nemo_gym(
    project: Path, scratch: Path, script: Script
) -> tuple[dict[str, Any], str | None]:
    python = peer_python("nemo-gym")
    require_extra("mcp")
    require_extra("harness-servers")
    with serving(project, "nemo-gym") as info:
        played = run_peer(python, "nemo_gym_play.py", info["url"], _spec(script), cwd=scratch)
        played["info"] = info
    return played, played["verify"]["body"]["silo_run_id"]


def play_inspect(project: Path, scratch: Path, script: Script) -> tuple[dict[str, Any], str | None]:
    require_extra("inspect")
    task_args = {"env": ENV_NAME, "tasks": script.task}
    spec = {"task_args": task_args, "log_dir": str(scratch / "logs"), "calls": script.calls}
    spec["answer"] = script.answer
    # From the project directory, as `inspect eval` runs: Inspect names a task by its
    # installed package, and in this checkout a build's silo_async.egg-info would hide it.
    played = run_peer(Path(sys.executable), "inspect_play.py", json.dumps(spec), cwd=project)
    assert played["status"] == "success", played["error"]
    return played, played["metadata"]["runId"]


def play_verifiers(
    project: Path, scratch: Path, script: Script
) -> tuple[dict[str, Any], str | None]:
    python = peer_python("verifiers")
    out = str(scratch / "out")
    played = run_peer(python, "verifiers_play.py", str(project), out, _spec(script), cwd=scratch)
    assert played["ok"], played["errors"]
    return played, played["silo"]["runId"]


def play_trl(project: Path, scratch: Path, script: Script) -> tuple[dict[str, Any], str | None]:
    from silo_async.integrations.trl import environment_factory, reward

    # By default the class serves the hand-written tasks; an instance is served when named.
    tasks = [script.task] if "#" in script.task else None
    runs = project / ".silo" / "runs"
    cls = environment_factory(ENV_NAME, tasks=tasks, cwd=project, runs_dir=runs)
    instance = cls()
    instance.reset(task=script.task)
    answers = [getattr(instance, name)(**arguments) for name, arguments in script.calls]
    rewards = reward([[{"role": "assistant", "content": script.answer}]], [instance])
    return {"rewards": rewards, "answers": answers, "methods": sorted(dir(cls))}, None


PLAYERS: dict[str, Player] = {
    "run": play_run,
    "mcp": play_mcp,
    "openenv": play_openenv,
    "openenv-mcp": play_openenv_mcp,
    "nemo-gym": play_nemo_gym,
    "inspect": play_inspect,
    "verifiers": play_verifiers,
    "trl": play_trl,
}


@attrs.frozen
class Play:
    """A harness's play of the script: what it answered, and the run it left."""

    output: dict[str, Any]
    run: dict[str, Any]


class Plays:
    """The session's plays, one per harness, on one crm project (played on first use)."""

    def __init__(
        self,
        root: Path,
        script: Script = SCRIPT,
        make_project: Callable[[Path], Path] = make_crm_project,
    ) -> None:
        self.root = root
        self.script = script
        self.project = make_project(root / "project")
        self._done: dict[str, Play] = {}
        self._missed: dict[str, BaseException] = {}

    def get(self, harness: str) -> Play:
        """``harness``'s play (a skip, or a failure under ``make test``, without its peer).

        A play is tried once: every test of a harness that skipped or failed sees that same
        skip or failure, not a second play in a scratch directory the first one left behind.
        """
        if harness in self._missed:
            raise self._missed[harness]
        if harness not in self._done:
            try:
                self._done[harness] = self._play(harness)
            except (Exception, pytest.skip.Exception, pytest.fail.Exception) as missed:
                self._missed[harness] = missed
                raise
        return self._done[harness]

    def _play(self, harness: str) -> Play:
        scratch = self.root / harness
        scratch.mkdir()
        before = run_ids(self.project)
        output, run_id = PLAYERS[harness](self.project, scratch, self.script)
        if run_id is None:
            (run_id,) = run_ids(self.project) - before
        return Play(output, read_run(self.project, run_id))


@pytest.fixture(scope="session")
def plays(tmp_path_factory: pytest.TempPathFactory) -> Plays:
    """Every harness's play of the shared script (see the module)."""
    return Plays(tmp_path_factory.mktemp("plays"))


@pytest.fixture(scope="session")
def chat_plays(tmp_path_factory: pytest.TempPathFactory) -> Plays:
    """Every harness's play of the conversational script (CHAT-001 on a crm project)."""
    return Plays(tmp_path_factory.mktemp("chat-plays"), CHAT, make_chat_project)
