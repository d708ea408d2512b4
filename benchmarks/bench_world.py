"""What a rollout of each shipped world costs besides the agent: create, snapshot, diff, grade.

Each template (crm, project, erp, support) is created through the project layer in a temporary
project and loaded like a user's environment. Its scripted solver runs every task once to
produce the final worlds; then, per rollout and averaged over the tasks, the phases the runner
pays for every rollout are timed on their own:

* ``create``: ``env.create_state()`` (the toolkit's ``Seed.clone``) and ``bind_tools``;
* ``snapshot``: the runner's frozen copy of the first world, and thawing it for the verifier;
* ``diff``: the state diff of the solver's final world, the way the runner computes it
  (collections the snapshot shows untouched are skipped);
* ``grade``: the task's verifier on (final, initial).

Phases are timed in this thread's CPU time (a shared, loaded machine does not inflate them) and
the templates take turns within each round. ``overhead_us`` is their sum (median of rounds).
Then erp and support rollouts per second with the solver,
end to end through ``run_many`` at concurrency 100 without artifacts (crm the same, for scale).
Targets: ``erp_rollout_overhead_us`` and ``support_rollout_overhead_us`` each <= 2 x
``crm_rollout_overhead_us`` (support's tasks are conversations: its solver's final worlds come
from talking to the scripted customers, and its verifiers also read the conversation).

Users in the loop: the CPU µs of one scripted user's turn (``message_user`` answered by a
script of five rules, traced and counted) next to one tool call (a three-property schema, as
``bench_call_tool``), rounds of each interleaved in one rollout, on asyncio and on trio.
Target: ``scripted_turn_us`` <= ``tool_call_us`` on each backend.

Task families (issue 30): for each template that has families, what building a new instance and
grading it against its gold the first time costs in CPU next to one of its hand-written rollouts
with the solver, end to end (``benchmarks/_family_costs.py``). Target:
``<template>_family_build_grade_ratio`` <= 1.5. The end-to-end rollout of a new instance with
the gold agent, and of one played again, are printed beside it.

Prints a table, then one JSON line with the overheads, the ratios, the rollout rates,
``scripted_turn_us`` and ``tool_call_us`` (per backend) and the families' costs.

Run: ``.venv/bin/python benchmarks/bench_world.py [--rounds 5] [--rollouts 2000]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

import silo_async as silo
from silo_async._diff import pack_diff, unpack_diff
from silo_async._jsonutil import Packed, changes, compact_json, pack, thaw
from silo_async.agents._load import load_agent
from silo_async.project import Project

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_call_tool  # beside this file: the call a user turn is timed against
from _family_costs import family_costs  # beside this file too

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ("crm", "project", "erp", "support")
PHASES = ("create", "snapshot", "diff", "grade")


async def load(project_dir: Path, template: str) -> silo.Environment:
    project = await Project.open(project_dir)
    handle = await project.environments.create(template, template=template)
    return await handle.load()


def solver_of(template: str) -> Any:
    return load_agent(str(ROOT / "examples" / "agents" / f"{template}_solver.py"), ROOT).fn


#: What a verifier grades besides the worlds: the answer and the conversation.
Graded = tuple[Any, str, tuple[dict[str, Any], ...]]


def conversation_of(result: silo.RunResult) -> tuple[dict[str, Any], ...]:
    """The rollout's turns as ``VerifierContext.conversation`` holds them."""
    return tuple(
        {"agentText": e["agentText"], "reply": e["reply"], "ended": e["ended"]}
        for e in result.trace
        if e["type"] == "user_turn"
    )


async def final_worlds(env: silo.Environment, agent: Any) -> dict[str, Graded]:
    """task id -> (the solver's final world, its answer, its conversation)."""
    worlds: list[Any] = []

    def capture() -> Any:
        worlds.append(env.create_state())
        return worlds[-1]

    captured = silo.Environment(
        name=env.name,
        create_state=capture,
        bind=env.bind_tools,
        verifiers=env.verifiers,
        tasks=env.tasks,
    )
    out = {}
    for task in env.tasks:
        before = len(worlds)
        result = await silo.run(captured, task.id, agent)
        assert result.passed, (env.name, task.id, result.failed_required)
        out[task.id] = (worlds[before], result.output_text, conversation_of(result))
    return out


def runner_diff(snapshot: Packed, initial: Any, final: Any) -> str:
    """The state diff as the runner computes it (untouched collections skipped), read at once."""
    found = changes(snapshot, final)
    assert found is not None, "the templates' worlds are plain data"
    return unpack_diff(pack_diff(*found))


def timed(fn: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    """µs of this thread's CPU time: other processes on a shared machine do not count."""
    start = time.thread_time_ns()
    value = fn(*args)
    return (time.thread_time_ns() - start) / 1e3, value


async def one_round(env: silo.Environment, finals: dict[str, Graded]) -> dict[str, float]:
    """Mean µs per rollout of each phase, over one pass of every task."""
    spent = dict.fromkeys(PHASES, 0.0)
    for task in env.tasks:
        final, answer, conversation = finals[task.id]
        t_create, state = timed(env.create_state)
        t_bind, _ = timed(env.bind_tools, state)
        t_snap, snap = timed(pack, state)
        t_thaw, initial = timed(thaw, snap)
        t_diff, _ = timed(runner_diff, pack(initial), initial, final)
        ctx = silo.VerifierContext(
            agent_output=answer, task=task, output=answer, conversation=conversation
        )
        start = time.thread_time_ns()
        await env.verifier_for(task).evaluate(final, initial, ctx)
        t_grade = (time.thread_time_ns() - start) / 1e3
        for phase, took in zip(
            PHASES, (t_create + t_bind, t_snap + t_thaw, t_diff, t_grade), strict=True
        ):
            spent[phase] += took
    return {phase: total / len(env.tasks) for phase, total in spent.items()}


async def phases(envs: dict[str, silo.Environment], rounds: int) -> dict[str, dict[str, float]]:
    """Median per phase of each template; the templates take turns within every round."""
    finals = {t: await final_worlds(env, solver_of(t)) for t, env in envs.items()}
    runs: dict[str, list[dict[str, float]]] = {t: [] for t in envs}
    for index in range(rounds + 1):
        for t, env in envs.items():
            measured = await one_round(env, finals[t])
            if index:  # the first round warms up
                runs[t].append(measured)
    out = {}
    for t, rs in runs.items():
        out[t] = {p: statistics.median(r[p] for r in rs) for p in PHASES}
        out[t]["overhead"] = statistics.median(sum(r.values()) for r in rs)
    return out


async def rate(env: silo.Environment, rollouts: int) -> float:
    tasks = [t.id for t in env.tasks]
    runs = max(1, rollouts // len(tasks))
    start = time.perf_counter()
    results = await silo.run_many(env, tasks, solver_of(env.name), runs=runs, concurrency=100)
    elapsed = time.perf_counter() - start
    assert all(r.passed for r in results)
    return len(results) / elapsed


#: The tool call a turn is timed against: bench_call_tool's own (3-property schema).
ACCOUNT_SCHEMA, ACCOUNT_ARGS = bench_call_tool.SCHEMA, bench_call_tool.ARGS
#: A customer's script: what the agent asks matches the third rule, after two that do not.
TALK_USER = {
    "opening": "Hi, my order is late.",
    "script": [
        {"when": ["refund"], "say": "I want my money back."},
        {"when": ["order", "number"], "say": "It is ORD-1234."},
        {"when": ["email"], "say": "It's ada@example.com."},
        {"when": ["thanks"], "say": "Bye!", "end": True},
        {"when": ["restart"], "say": "Restarted.", "do": [{"tool": "restart_phone"}]},
    ],
    "otherwise": {"say": "Sorry?"},
    "tools": ["restart_phone"],
    "maxTurns": 10**9,
}
TALK_CALLS = 2_000


@silo.tool(name="get_account", description="Read an account.", input_schema=ACCOUNT_SCHEMA)
def get_account(state: dict[str, Any], args: dict[str, Any]) -> Any:
    return {"id": args["accountId"], "open": state["open"]}


@silo.tool(name="restart_phone", description="The customer's phone: restart it.")
def restart_phone(state: dict[str, Any], args: dict[str, Any]) -> Any:
    state["restarts"] = state.get("restarts", 0) + 1
    return {"restarted": True}


@silo.verifier(id="VER-TALK", task_id="TALK")
def talked(final: Any, initial: Any) -> list[silo.Check]:
    return [silo.check("ran", True)]


TALK = silo.Environment(
    name="talk",
    create_state=lambda: {"open": 3},
    tools=[get_account, restart_phone],
    verifiers=[talked],
    tasks=[silo.Task("TALK", "talk", "Help the customer.", "VER-TALK", user=TALK_USER)],
)


async def turn_rounds(rounds: int, turns: list[float], calls: list[float]) -> None:
    """Interleaved rounds of scripted turns and of tool calls in one rollout (CPU µs each)."""
    clock = time.process_time  # the loop is one thread: its CPU time is its wall time

    async def agent(ctx: silo.AgentContext) -> None:
        said = {"text": "Could you give me the email address on the account?"}
        for _ in range(rounds):
            start = clock()
            for _ in range(TALK_CALLS):
                await ctx.call_tool("get_account", ACCOUNT_ARGS)
            calls.append((clock() - start) / TALK_CALLS * 1e6)
            start = clock()
            for _ in range(TALK_CALLS):
                await ctx.call_tool("message_user", said)
            turns.append((clock() - start) / TALK_CALLS * 1e6)

    result = await silo.run(TALK, "TALK", agent, max_tool_calls=TALK_CALLS * rounds + 1)
    assert result.user_turns == TALK_CALLS * rounds, result.error


def turn_costs(rounds: int) -> dict[str, dict[str, float]]:
    """Median CPU µs of a scripted turn and of a tool call, per backend."""
    out = {}
    for backend in ("asyncio", "trio"):
        turns: list[float] = []
        calls: list[float] = []
        anyio.run(turn_rounds, rounds + 1, turns, calls, backend=backend)
        out[backend] = {
            "scripted_turn_us": round(statistics.median(turns[1:]), 2),
            "tool_call_us": round(statistics.median(calls[1:]), 2),
        }
    return out


def world_size(env: silo.Environment) -> int:
    return len(compact_json(env.create_state()))


async def main(rounds: int, rollouts: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-world-") as tmp:
        envs = {t: await load(Path(tmp), t) for t in TEMPLATES}
        costs = await phases(envs, rounds)
        rates = {t: await rate(envs[t], rollouts) for t in ("crm", "erp", "support")}
        families = {
            t: await family_costs(env, solver_of(t)) for t, env in envs.items() if env.families
        }
    print(
        f"{'template':<9} {'tools':>5} {'KB':>6} "
        + " ".join(f"{p:>9}" for p in PHASES)
        + f" {'total µs':>9}"
    )
    for t, c in costs.items():
        env = envs[t]
        tools = len(env.bind_tools(env.create_state()))
        print(
            f"{t:<9} {tools:>5} {world_size(env) / 1024:>6.1f} "
            + " ".join(f"{c[p]:>9.0f}" for p in PHASES)
            + f" {c['overhead']:>9.0f}"
        )
    for t, r in rates.items():
        print(f"{t} rollouts/s with the solver, concurrency 100: {r:,.0f}")
    ratio = costs["erp"]["overhead"] / costs["crm"]["overhead"]
    print(f"erp overhead / crm overhead: {ratio:.2f} (target <= 2)")
    support_ratio = costs["support"]["overhead"] / costs["crm"]["overhead"]
    print(f"support overhead / crm overhead: {support_ratio:.2f} (target <= 2)")
    for t, f in families.items():
        print(
            f"{t} families: a new instance built and graded {f['build_grade_us']:.0f} µs CPU, "
            f"a hand-written rollout {f['rollout_us']:.0f} µs: "
            f"{f['build_grade_ratio']:.2f} (target <= 1.5); a new instance's rollout "
            f"{f['instance_rollout_us']:.0f} µs ({f['instance_rollout_ratio']:.2f}), played "
            f"again {f['again_rollout_us']:.0f} µs"
        )
    talk = await anyio.to_thread.run_sync(turn_costs, max(rounds, 5) * 2 + 1)
    for backend, cost in talk.items():
        print(
            f"{backend}: a scripted user's turn {cost['scripted_turn_us']:.2f} µs, a tool call "
            f"{cost['tool_call_us']:.2f} µs (target: turn <= call)"
        )
    return {
        "scripted_turn_us": {b: cost["scripted_turn_us"] for b, cost in talk.items()},
        "tool_call_us": {b: cost["tool_call_us"] for b, cost in talk.items()},
        "erp_rollout_overhead_us": round(costs["erp"]["overhead"], 1),
        "crm_rollout_overhead_us": round(costs["crm"]["overhead"], 1),
        "project_rollout_overhead_us": round(costs["project"]["overhead"], 1),
        "support_rollout_overhead_us": round(costs["support"]["overhead"], 1),
        "erp_to_crm_overhead_ratio": round(ratio, 2),
        "support_to_crm_overhead_ratio": round(support_ratio, 2),
        "erp_rollouts_per_s": round(rates["erp"], 1),
        "crm_rollouts_per_s": round(rates["crm"], 1),
        "support_rollouts_per_s": round(rates["support"], 1),
        "families": families,
        **{f"{t}_family_build_grade_ratio": f["build_grade_ratio"] for t, f in families.items()},
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rollouts", type=int, default=2000)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    print(json.dumps(anyio.run(main, args.rounds, args.rollouts)))
