"""The model adapter's cost: ``agents.openai_chat`` against ScriptedModelServer vs a plain agent.

Both agents play the same conversation on the benchmark world: 11 model responses per rollout,
the first ten with one tool call each (nine reads, one write), the last the answer. The model
agent gets its responses over HTTP from ScriptedModelServer through the real OpenAI SDK; the
plain agent has them written in, and records the same ``model_step`` (usage, message) and makes
the same calls, so the two differ only by the adapter and the SDK's request.

1. Throughput: 1,000 rollouts of each at concurrency 100 in one event loop (median of REPEATS).
2. The adapter's own cost per response, SDK and HTTP excluded: SEQUENTIAL rollouts one at a
   time, ``(model time - plain time - time inside the SDK call) / responses``, where the time
   inside the SDK call is the ``durationMs`` the adapter records around it (request building,
   HTTP, the server, the SDK's parsing). One at a time, nothing else runs during those calls,
   so what is left is the adapter: converting tools and turns, history, client setup and close.

Prints the figures, then one JSON line. Target: adapter_overhead_us_per_turn <= 200.
Run: ``.venv/bin/python benchmarks/bench_model_agents.py [asyncio|trio]``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any

import anyio

import silo_async as silo
from silo_async import agents
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _world import ENV

ROLLOUTS = 1_000
CONCURRENCY = 100
REPEATS = 3
SEQUENTIAL = 100
TURNS = 11  # ten responses with a tool call, then the answer
TARGET_US = 200.0


def call_of(turn: int) -> ToolCall:
    """The tool call of response ``turn`` (0-9): the benchmark world's ten_calls, one per turn."""
    if turn < 9:
        return ToolCall("get_account", {"accountId": f"ACC-{turn % 8 + 1:03d}"}, f"call_{turn}")
    return ToolCall("add_note", {"accountId": "ACC-001", "text": "called"}, f"call_{turn}")


def usage_of(turn: int) -> tuple[int, int]:
    return 120 + 60 * turn, 18


def play(request: ModelRequest) -> Reply:
    """The scripted model: every conversation the same, whatever its arrival order."""
    turn = request.turn
    tokens_in, tokens_out = usage_of(turn)
    if turn < TURNS - 1:
        return Reply(tool_calls=[call_of(turn)], input_tokens=tokens_in, output_tokens=tokens_out)
    return Reply(text="done", input_tokens=tokens_in, output_tokens=tokens_out)


async def plain(ctx: silo.AgentContext) -> str:
    """The same conversation as a plain agent: same model steps, same calls, no SDK."""
    for turn in range(TURNS):
        tokens_in, tokens_out = usage_of(turn)
        last = turn == TURNS - 1
        call = None if last else call_of(turn)
        calls = [] if call is None else [{"id": call.id, "name": call.name, "input": call.input}]
        ctx.record_model_step(
            model="scripted",
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            stop_reason="stop" if last else "tool_calls",
            duration_ms=0.0,
            attempts=1,
            message={"role": "assistant", "content": "done" if last else None, "toolCalls": calls},
        )
        if call is not None:
            await ctx.call_tool(call.name, call.input)
    ctx.set_output("done")
    return "done"


async def rollouts(agent: Any, runs: int, concurrency: int) -> tuple[float, list[silo.RunResult]]:
    start = time.perf_counter()
    results = await silo.run_many(
        ENV, ["TASK-001"], agent, runs=runs, concurrency=concurrency, max_tool_calls=20
    )
    elapsed = time.perf_counter() - start
    for r in results:
        assert r.passed and r.model_steps == TURNS and r.tool_calls == TURNS - 1, r.error
    return elapsed, results


def sdk_ms(results: list[silo.RunResult]) -> float:
    """Milliseconds spent inside the SDK calls (the adapter's durationMs), over all results."""
    return float(
        sum(e["durationMs"] for r in results for e in r.trace if e["type"] == "model_step")
    )


async def measure() -> dict[str, float]:
    async with ScriptedModelServer(play) as server:
        model = agents.openai_chat("scripted", base_url=server.base_url)
        await rollouts(model, 20, 20)  # warm up: imports, first connections
        model_rates, plain_rates = [], []
        for _ in range(REPEATS):
            seconds, _ = await rollouts(model, ROLLOUTS, CONCURRENCY)
            model_rates.append(ROLLOUTS / seconds)
            seconds, _ = await rollouts(plain, ROLLOUTS, CONCURRENCY)
            plain_rates.append(ROLLOUTS / seconds)
        overheads = []
        for _ in range(REPEATS):
            model_s, results = await rollouts(model, SEQUENTIAL, 1)
            plain_s, _ = await rollouts(plain, SEQUENTIAL, 1)
            adapter_s = model_s - plain_s - sdk_ms(results) / 1000
            overheads.append(adapter_s / (SEQUENTIAL * TURNS) * 1e6)
        requests = len(server.requests)
    return {
        "model_rollouts_per_s": round(statistics.median(model_rates), 1),
        "plain_rollouts_per_s": round(statistics.median(plain_rates), 1),
        "adapter_overhead_us_per_turn": round(statistics.median(overheads), 1),
        "requests_served": requests,
    }


def main() -> None:
    backend = sys.argv[1] if len(sys.argv) > 1 else "asyncio"
    figures = anyio.run(measure, backend=backend)
    print(f"backend {backend}: {ROLLOUTS} rollouts x {TURNS} model responses, concurrency")
    print(f"{CONCURRENCY}, median of {REPEATS}; adapter cost from {SEQUENTIAL} sequential rollouts")
    print(f"  model agent (openai_chat, HTTP)  {figures['model_rollouts_per_s']:>8,.1f} rollouts/s")
    print(f"  plain agent, same conversation   {figures['plain_rollouts_per_s']:>8,.1f} rollouts/s")
    print(
        f"  adapter overhead per response     {figures['adapter_overhead_us_per_turn']:>8,.1f} µs"
        f"  (target <= {TARGET_US:.0f} µs, SDK and HTTP excluded)"
    )
    figures["backend"] = backend  # type: ignore[assignment]
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
