"""No live handles: error details and tool specs an agent gets are its own, even under tampering.

A tampering agent edits everything it is handed (outputs, error details, ``ctx.tools`` and
their schemas) and lets what it sees decide what it does next. A thousand of them run at once;
every ``result.json`` must be byte-identical to the one a lone rollout writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import silo_async as silo

pytestmark = pytest.mark.anyio

TRANSITION = {
    "type": "object",
    "properties": {"to": {"type": "string"}},
    "required": ["to"],
    "additionalProperties": False,
}


def create_state() -> dict[str, Any]:
    return {"status": "open", "rules": {"open": ["won"], "won": [], "lost": []}}


@silo.tool(name="transition", description="Move the deal.", input_schema=TRANSITION)
async def transition(state: dict[str, Any], args: dict[str, Any]) -> Any:
    await anyio.lowlevel.checkpoint()  # let the other rollouts interleave
    allowed = state["rules"][state["status"]]
    if args["to"] not in allowed:
        # The world's own list as details: without a copy the agent could edit the rules.
        raise silo.tool_error("not_allowed", f"Cannot move to {args['to']}.", {"allowed": allowed})
    state["status"] = args["to"]
    return {"status": state["status"], "rules": state["rules"]}


@silo.verifier(id="VER-RULES", task_id="TASK-TAMPER")
def rules_hold(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    return [
        silo.check("the rules are unchanged", final["rules"] == initial["rules"]),
        silo.check("the deal never moved to lost", final["status"] != "lost"),
    ]


def make_env() -> silo.Environment:
    return silo.Environment(
        name="tamper",
        create_state=create_state,
        tools=[transition],
        verifiers=[rules_hold],
        tasks=[silo.Task("TASK-TAMPER", "Tamper", "Break the rules.", "VER-RULES")],
    )


async def tamperer(ctx: silo.AgentContext) -> Any:
    spec = ctx.tools[0]
    seen = len(spec.input_schema["properties"])  # what a shared schema would make grow
    spec.input_schema["properties"][f"p{seen}"] = {"type": "string"}
    spec.input_schema["required"].append("bogus")
    ctx.tools[0].to_dict()["inputSchema"].clear()
    ctx.tools.clear()  # the agent's own list
    refused = await ctx.call_tool("transition", {"to": "lost"})
    refused.output["details"]["allowed"].append("lost")  # try to rewrite the world's rules
    again = await ctx.call_tool("transition", {"to": "lost"})
    moved = await ctx.call_tool("transition", {"to": "won"})
    moved.output["rules"]["won"].append("lost")
    last = await ctx.call_tool("transition", {"to": "lost"})
    return {"seen": seen, "codes": [r.output.get("code") for r in (refused, again, moved, last)]}


async def test_error_details_are_copies(tmp_path: Path) -> None:
    result = await silo.run(make_env(), "TASK-TAMPER", tamperer)
    assert result.passed, result.failed_required
    assert result.agent_output["codes"] == ["not_allowed", "not_allowed", None, "not_allowed"]


async def test_tool_specs_are_the_agents_own_copies() -> None:
    env = make_env()
    before = env.tools[0].spec.to_dict()
    await silo.run(env, "TASK-TAMPER", tamperer)
    spec = env.tools[0].spec
    assert spec.to_dict() == before
    assert spec.input_schema is not spec.input_schema
    assert env.tools[0].validator.is_valid({"to": "won"})  # validation was not loosened
    with pytest.raises(AttributeError):
        spec.name = "renamed"  # type: ignore[misc]


async def test_a_thousand_concurrent_tampering_rollouts_write_what_a_lone_one_writes(
    tmp_path: Path,
) -> None:
    env = make_env()
    lone = await silo.run(env, "TASK-TAMPER", tamperer, runs_dir=tmp_path / "lone")
    assert lone.run_dir is not None and lone.passed
    expected = (lone.run_dir / "result.json").read_bytes()
    results = await silo.run_many(
        env, "TASK-TAMPER", tamperer, runs=1000, concurrency=1000, runs_dir=tmp_path / "many"
    )
    differing = [
        r.run_id
        for r in results
        if r.run_dir is None or (r.run_dir / "result.json").read_bytes() != expected
    ]
    assert len(results) == 1000 and differing == []
