"""Median microseconds per ``call_tool`` round trip, next to its floor: one bare checkpoint.

The tool has a three-property schema and is called with valid input, inside a real rollout
(trace recording, counting, input/output copies, checkpoint). ``call_tool`` must be a checkpoint,
so a bare ``anyio.lowlevel.checkpoint()`` is its floor: rounds of each are interleaved in the same
loop, and both are timed in CPU time (``time.process_time``: the loop is one thread, so this is
its wall time on a free core), so the ratio holds on a shared machine where wall-clock
microseconds swing 2x. Target: ``call_tool_ratio`` (call_tool_us / checkpoint_us) <= 2.5.
Prints a table, then one JSON line.
Run: ``.venv/bin/python benchmarks/bench_call_tool.py [asyncio|trio]``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any

import anyio
from anyio.lowlevel import checkpoint

import silo_async as silo

SCHEMA = {
    "type": "object",
    "properties": {
        "accountId": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 500},
        "status": {"enum": ["open", "won", "lost"]},
    },
    "required": ["accountId"],
    "additionalProperties": False,
}
ARGS = {"accountId": "ACC-001", "limit": 10, "status": "open"}
CALLS = 2_000
ROUNDS = 21


def body(state: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    return {"id": args["accountId"], "open": state["open"]}


get_account = silo.tool(name="get_account", description="Read an account.", input_schema=SCHEMA)(
    body
)


@silo.verifier(id="VER-1", task_id="T-1")
def done(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    return [silo.check("ran", True)]


ENV = silo.Environment(
    name="bench",
    create_state=lambda: {"open": 3},
    tools=[get_account],
    verifiers=[done],
    tasks=[silo.Task("T-1", "bench", "call the tool", "VER-1")],
)


#: CPU time of this process: immune to other processes taking the cores.
clock = time.process_time


def bare_round() -> float:
    state = {"open": 3}
    start = clock()
    for _ in range(CALLS):
        body(state, ARGS)
    return (clock() - start) / CALLS * 1e6


async def call_tool_rounds(samples: list[float], floor: list[float]) -> None:
    async def agent(ctx: silo.AgentContext) -> None:
        for _ in range(ROUNDS):
            start = clock()
            for _ in range(CALLS):
                await checkpoint()
            floor.append((clock() - start) / CALLS * 1e6)
            start = clock()
            for _ in range(CALLS):
                await ctx.call_tool("get_account", ARGS)
            samples.append((clock() - start) / CALLS * 1e6)

    # The default time limit, as users run: the deadline check is part of the cost.
    await silo.run(ENV, "T-1", agent, max_tool_calls=CALLS * ROUNDS)


def main() -> None:
    backend = sys.argv[1] if len(sys.argv) > 1 else "asyncio"
    samples: list[float] = []
    floor: list[float] = []
    anyio.run(call_tool_rounds, samples, floor, backend=backend)
    bare = statistics.median(bare_round() for _ in range(ROUNDS))
    call = statistics.median(samples)
    point = statistics.median(floor)
    ratio = call / point
    print(f"{'measure':<28}{'median µs':>12}")
    print(f"{'call_tool round trip':<28}{call:>12.2f}")
    print(f"{'bare checkpoint()':<28}{point:>12.2f}")
    print(f"{'call_tool / checkpoint':<28}{ratio:>12.2f}  (target <= 2.5)")
    print(f"{'bare tool function':<28}{bare:>12.2f}")
    print(f"({backend}; CPU µs, median of {ROUNDS} interleaved rounds of {CALLS} calls)")
    out = {
        "backend": backend,
        "call_tool_us": round(call, 2),
        "checkpoint_us": round(point, 2),
        "call_tool_ratio": round(ratio, 2),
        "bare_us": round(bare, 3),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
