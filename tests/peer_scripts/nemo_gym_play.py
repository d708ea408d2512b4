"""Drive ``serve --protocol nemo-gym`` as NeMo Gym's agent does (run in the NeMo Gym virtualenv).

``python nemo_gym_play.py URL '{"task": ..., "calls": [[tool, input]...], "answer": ...}'``:
every request goes through ``nemo_gym.server_utils.request`` (Gym's own HTTP client, as its
Simple Agent calls a resources server) carrying the session cookie from ``/seed_session`` on;
bodies are built and answers validated with Gym's own models (``BaseRunRequest``,
``NeMoGymResponse``, ``BaseVerifyResponse``, the Environment Server's typed seed/close
models), replaying the session-lifecycle checks of ``nemo_gym.testing.session_conformance``
over HTTP. Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from nemo_gym.base_resources_server import (
    BaseRunRequest,
    BaseVerifyResponse,
    ResourcesCloseSessionRequest,
    ResourcesCloseSessionResponse,
    ResourcesSeedSessionRequest,
    ResourcesSeedSessionResponse,
)
from nemo_gym.openai_utils import NeMoGymResponse
from nemo_gym.server_utils import request
from pydantic import ConfigDict


class Row(BaseRunRequest):
    """A dataset row as Gym's Simple Agent sends it: the create params plus the row's fields."""

    model_config = ConfigDict(extra="allow")


async def _post(url: str, path: str, body: Any, cookies: Any = None) -> tuple[int, Any, Any]:
    response = await request("POST", f"{url}/{path}", json=body, cookies=cookies)
    payload = await response.json(content_type=None)
    return response.status, payload, response.cookies


def _response(answer: str) -> dict[str, Any]:
    return NeMoGymResponse.model_validate(
        {
            "id": "resp_1",
            "created_at": 0,
            "model": "scripted",
            "object": "response",
            "parallel_tool_calls": False,
            "tool_choice": "auto",
            "tools": [],
            "output": [
                {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": answer, "annotations": []}],
                }
            ],
        }
    ).model_dump(mode="json")


async def play(url: str, spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    row = Row.model_validate(
        {
            "responses_create_params": {"input": [{"role": "user", "content": "Play the task."}]},
            "task": spec["task"],
        }
    ).model_dump()
    status, seeded, cookies = await _post(url, "seed_session", row)
    out["seed"] = {"status": status, "body": seeded, "cookie": sorted(cookies.keys())}
    out["no_cookie"] = (await _post(url, spec["calls"][0][0], spec["calls"][0][1]))[:2]
    out["calls"] = []
    for name, arguments in spec["calls"]:
        status, body, _ = await _post(url, name, arguments, cookies)
        out["calls"].append({"status": status, "body": body})
    status, verified, _ = await _post(
        url, "verify", row | {"response": _response(spec["answer"])}, cookies
    )
    out["verify"] = {"status": status, "body": verified}
    out["verify_model"] = BaseVerifyResponse.model_validate(verified).reward
    status, again, _ = await _post(url, "verify", row | {"response": _response("other")}, cookies)
    out["verify_again"] = {"status": status, "reward": again.get("reward")}
    out["unknown_task"] = (await _post(url, "seed_session", row | {"task": "TASK-999"}))[:2]
    if spec.get("lifecycle", True):
        out["typed"] = await typed_lifecycle(url, spec["task"])
    return out


async def typed_lifecycle(url: str, task: str) -> list[str]:
    """The Environment Server's seed/close rules, checked with Gym's own models."""
    seed = ResourcesSeedSessionRequest.model_validate(
        {
            "resources_session_id": "rs-1",
            "episode_id": {"rollout_id": "r1"},
            "task_id": {"taskset": "silo", "task_id": task},
            "task_data": {"task": task},
        }
    )
    close = ResourcesCloseSessionRequest(
        resources_session_id=seed.resources_session_id, episode_id=seed.episode_id
    )
    seen = []
    for attempt in ("seed", "repeated seed"):
        status, body, _ = await _post(url, "seed_session", seed.model_dump(mode="json"))
        ok = (
            status == 200
            and ResourcesSeedSessionResponse.model_validate(body).resources_session_id == "rs-1"
        )
        seen.append(f"{attempt}: {'ok' if ok else status}")
    for attempt in ("close", "repeated close"):
        status, body, _ = await _post(url, "close_session", close.model_dump(mode="json"))
        ok = (
            status == 200
            and ResourcesCloseSessionResponse.model_validate(body).resources_session_id == "rs-1"
        )
        seen.append(f"{attempt}: {'ok' if ok else status}")
    never = close.model_copy(update={"resources_session_id": "rs-never"})
    status, _, _ = await _post(url, "close_session", never.model_dump(mode="json"))
    seen.append(f"close never seeded: {'ok' if status == 200 else status}")
    for late in (seed, seed.model_copy(update={"resources_session_id": "rs-never"})):
        status, _, _ = await _post(url, "seed_session", late.model_dump(mode="json"))
        seen.append(f"seed after close: {'refused' if status >= 400 else status}")
    return seen


if __name__ == "__main__":
    target, given = sys.argv[1], json.loads(sys.argv[2])
    del sys.argv[1:]  # Gym reads its command line as Hydra overrides
    print(json.dumps(asyncio.run(play(target, given)), default=str))
