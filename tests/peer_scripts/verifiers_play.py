"""Evaluate a silo world with verifiers' own runner (run in the verifiers virtualenv).

``python verifiers_play.py PROJECT OUT SPEC`` (SPEC: ``{"task", "calls": [[tool, input]...],
"answer"}``):
``silo_async.integrations.verifiers.load_environment`` builds the environment, verifiers'
``run_eval`` (what ``vf-eval`` runs) plays it against a ``ScriptedModelServer`` speaking
Chat Completions — one reply per call, then ``submit`` — and the episode's trace is read back.
Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from verifiers.v1.cli.eval.runner import run_eval
from verifiers.v1.configs.cli.eval import EvalConfig
from verifiers.v1.configs.client import EvalClientConfig

from silo_async.integrations.verifiers import load_environment
from silo_async.testing import Reply, ScriptedModelServer, ToolCall


def main() -> None:
    project, out, spec = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
    script = [Reply(tool_calls=[ToolCall(name, args)]) for name, args in spec["calls"]]
    script.append(Reply(tool_calls=[ToolCall("submit", {"answer": spec["answer"]})]))
    os.environ["SILO_SCRIPTED_KEY"] = "scripted"  # a loopback server needs a placeholder
    env = load_environment(project, "crm", tasks=[spec["task"]])
    with ScriptedModelServer(script) as server:
        config = EvalConfig(
            env=env.config,
            model="scripted",
            client=EvalClientConfig(base_url=server.base_url, api_key_var="SILO_SCRIPTED_KEY"),
            num_rollouts=1,
            rich=None,
            push=False,
            output_dir=out,
        )
        episodes = asyncio.run(run_eval(config))
        requests = len(server.requests)
        first = server.requests[0].body["messages"] if server.requests else []
    (episode,) = episodes
    (trace,) = episode.traces
    result: dict[str, Any] = {
        "ok": episode.ok,
        "errors": [e.message for e in episode.errors + trace.errors],
        "rewards": {k: (v.value if v else None) for k, v in trace.rewards.items()},
        "reward": trace.reward,
        "metrics": trace.metrics,
        "silo": trace.info.get("silo"),
        "tools": [t.name for t in trace.tools],
        "model_requests": requests,
        "first_messages": first,
    }
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
