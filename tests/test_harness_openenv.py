"""``serve --protocol openenv``: OpenEnv's own clients and validator (DESIGN §16, §22).

``GenericEnvClient`` plays a silo world over ``/ws``; ``openenv validate --url`` passes every
criterion; ``MCPToolClient`` plays the same script to the world's reward through an HTTP MCP
session (``/mcp``) joined by its WebSocket.
"""

from __future__ import annotations

import subprocess
import sys

from .harness_players import Plays
from .harness_support import ANSWER, CALLS, TASK_ID
from .peers import extra


def test_openenv_client_resets_calls_and_submits_for_the_worlds_reward(
    plays: Plays,
) -> None:
    play = plays.get("openenv")
    played, run = play.output, play.run
    assert played["info"]["protocol"] == "openenv" and played["info"]["ws"].endswith("/ws")
    assert played["health"] == {"status": "healthy"}
    assert set(played["schema"]) == {"action", "observation", "state"}
    assert played["metadata"]["name"] == "crm"
    assert "VALIDATION_ERROR" in played["unknown_task"]
    assert "task_not_found" in played["unknown_task"]
    assert "EXECUTION_ERROR" in played["before_reset"]
    assert played["reset"]["observation"]["task_id"] == TASK_ID
    assert played["reset"]["done"] is False
    tools = played["tools"]
    assert tools[-1]["name"] == "submit"
    assert all(set(t) == {"name", "description", "input_schema"} for t in tools)
    first, refused, converted = played["calls"]
    assert first["observation"]["result"]["is_error"] is False and first["done"] is False
    assert refused["observation"]["result"]["is_error"] is True
    assert refused["observation"]["error"]["error_type"] == "invalid_args"
    assert converted["reward"] is None
    submit = played["submit"]
    assert submit["done"] is True and submit["reward"] == run["result"]["reward"] == 1.0
    assert submit["observation"]["metadata"]["runId"] == run["runId"]
    assert played["state"]["done"] is True and played["state"]["step_count"] == len(CALLS) + 1
    assert run["calls"] == [(n, a) for n, a in CALLS]
    assert run["result"]["agentOutput"] == ANSWER


def test_openenv_validate_passes_every_criterion(plays: Plays) -> None:
    report = plays.get("openenv-mcp").output["validate"]
    assert report["returncode"] == 0 and report["passed"] is True
    assert report["summary"]["failed_criteria"] == []
    assert {c["id"] for c in report["criteria"]} == {
        "openapi_version_available",
        "health_endpoint",
        "metadata_endpoint",
        "schema_endpoint",
        "mcp_endpoint",
        "mode_endpoint_consistency",
    }
    # Episodes are reset over /ws, not by OpenEnv's stateless HTTP /reset: production mode.
    assert report["mode"] == "production" and report["standard_profile"] == "openenv-http/1.x"


def test_mcp_tool_client_plays_an_episode_to_the_worlds_reward(plays: Plays) -> None:
    play = plays.get("openenv-mcp")
    played, run = play.output, play.run
    assert played["session"] is True  # an HTTP MCP session, joined by the WebSocket
    assert played["reset"]["observation"]["task_id"] == TASK_ID
    assert played["tools"][-1] == "submit" and "convert_lead" in played["tools"]
    first, refused, converted = played["calls"]
    assert first["result"]["is_error"] is False and first["done"] is False
    assert refused["result"]["is_error"] is True
    assert refused["error"]["error_type"] == "invalid_args"
    assert converted["reward"] is None
    submit = played["submit"]
    assert submit["done"] is True and submit["reward"] == run["result"]["reward"] == 1.0
    assert played["state"] == {"episode_id": run["runId"], "step_count": len(CALLS) + 1}
    assert run["calls"] == [(n, a) for n, a in CALLS]
    assert run["result"]["agentOutput"] == ANSWER


@extra("mcp")
def test_protocol_choices_are_http_and_mcp_still_needs_a_task(plays: Plays) -> None:
    def serve(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "silo_async", "serve", "--env", "crm", *args]
        return subprocess.run(
            command, cwd=plays.project, capture_output=True, text=True, timeout=60, check=False
        )

    stdio = serve("--protocol", "openenv", "--transport", "stdio")
    assert stdio.returncode == 2 and "serves over HTTP only" in stdio.stderr
    no_task = serve()
    assert no_task.returncode == 2 and "Missing option '--task'" in no_task.stderr
    unknown = serve("--protocol", "nemo-gym", "--task", "TASK-999", "--port", "0")
    assert unknown.returncode == 1
    assert unknown.stderr.startswith("error: task_not_found: ")
