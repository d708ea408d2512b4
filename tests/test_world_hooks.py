"""What an environment may add for worlds it did not write itself (DESIGN §20), on plain worlds.

``policy=`` (``ctx.policy``, the model agents' system prompt), ``setup=`` (a per-task start),
``snapshot=`` (a world that is not JSON), ``silo.tool(..., check_input=False)``,
``VerifierContext.termination_reason``: each usable by any world, tested here on small
code-first worlds with no tau2 anywhere.
"""

from __future__ import annotations

from typing import Any

import pytest

import silo_async as silo
from silo_async import agents
from silo_async.testing import Reply, ScriptedAgent, ScriptedModelServer, ToolCall
from tests.peers import extra
from tests.worlds import ENV, block_customer, create_state, get_customer

pytestmark = pytest.mark.anyio

POLICY = "Never block a VIP customer without a manager's approval."


def _reason_seen(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    return [silo.check("completed", ctx.termination_reason == "completed", ctx.termination_reason)]


REASON_ENV = silo.Environment(
    "reasons",
    create_state=create_state,
    tools=[get_customer, block_customer],
    verifiers=[silo.verifier(id="VER-R", task_id="TASK-R")(_reason_seen)],
    tasks=[silo.Task("TASK-R", "Read", "Read CUS-001.", "VER-R")],
)


async def test_a_verifier_is_told_how_the_rollout_ended(anyio_backend: str) -> None:
    done = await silo.run(REASON_ENV, "TASK-R", ScriptedAgent([("get_customer", {})], "ok"))
    assert done.termination_reason == "completed" and done.passed
    reads = [("get_customer", {"customerId": "CUS-001"})] * 3
    cut = await silo.run(REASON_ENV, "TASK-R", ScriptedAgent(reads, "ok"), max_tool_calls=2)
    assert cut.termination_reason == "max_tool_calls" and not cut.passed
    assert cut.checks[0].detail == "max_tool_calls"


@extra("anthropic")
@extra("openai")
async def test_the_policy_reaches_the_agent_and_leads_a_model_agents_system_prompt(
    anyio_backend: str,
) -> None:
    env = silo.Environment(
        "policed",
        create_state=ENV.create_state,
        tools=ENV.tools,
        verifiers=ENV.verifiers,
        tasks=ENV.tasks,
        policy=POLICY,
    )
    seen: list[Any] = []

    async def reader(ctx: silo.AgentContext) -> str:
        seen.append(ctx.policy)
        return ""

    await silo.run(env, "TASK-BLOCK", reader)
    await silo.run(ENV, "TASK-BLOCK", reader)
    assert seen == [POLICY, None]
    async with silo.episode(env, "TASK-BLOCK") as ep:
        assert ep.policy == POLICY
    script: list[Reply | str] = [
        Reply(tool_calls=[ToolCall("block_customer", {"customerId": "CUS-001"})]),
        "Done.",
    ]
    for system, expected in ((None, POLICY), ("Be brief.", f"{POLICY}\n\nBe brief.")):
        async with ScriptedModelServer(list(script)) as server:
            agent = agents.openai_chat("m", base_url=server.base_url, system=system)
            result = await silo.run(env, "TASK-BLOCK", agent)
        assert result.passed, result.error
        first = server.requests[0].body["messages"]
        assert first[0] == {"role": "system", "content": expected}
    async with ScriptedModelServer(list(script)) as server:
        agent = agents.anthropic("m", base_url=server.url, system="Be brief.")
        await silo.run(env, "TASK-BLOCK", agent)
    assert server.requests[0].body["system"] == f"{POLICY}\n\nBe brief."


def test_a_policy_that_is_not_text_is_refused_when_the_environment_is_made() -> None:
    with pytest.raises(silo.DefinitionError, match="a policy is text"):
        silo.Environment("bad", create_state=dict, policy=["rule"])  # type: ignore[arg-type]


def _starts(world: dict[str, Any], task: silo.Task) -> None:
    """Each task starts with its own customer already blocked."""
    if task.id == "TASK-S2":
        world["customers"]["CUS-002"]["status"] = "blocked"


def _compare(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    blocked = [k for k, c in initial["customers"].items() if c["status"] == "blocked"]
    return [silo.check("initial", True, ",".join(blocked))]


SETUP_ENV = silo.Environment(
    "started",
    create_state=create_state,
    tools=[get_customer, block_customer],
    verifiers=[
        silo.verifier(id="VER-S1", task_id="TASK-S1")(_compare),
        silo.verifier(id="VER-S2", task_id="TASK-S2")(_compare),
    ],
    tasks=[
        silo.Task("TASK-S1", "One", "Block CUS-001.", "VER-S1"),
        silo.Task("TASK-S2", "Two", "Block CUS-001.", "VER-S2"),
    ],
    setup=_starts,
)


async def test_setup_prepares_each_tasks_world_and_is_part_of_the_initial_world(
    anyio_backend: str,
) -> None:
    agent = ScriptedAgent([("block_customer", {"customerId": "CUS-001"})], "done")
    one = await silo.run(SETUP_ENV, "TASK-S1", agent)
    two = await silo.run(SETUP_ENV, "TASK-S2", agent)
    assert one.checks[0].detail == "" and two.checks[0].detail == "CUS-002"
    # What setup did is the start, not a change of the agent's: the diffs are alike.
    assert one.state_diff == two.state_diff
    assert one.state_diff["collections"]["customers"]["changed"] == ["CUS-001"]
    again = await silo.run(SETUP_ENV, "TASK-S1", agent)  # a fresh world every time
    assert again.checks[0].detail == ""


def test_a_setup_that_cannot_be_called_is_refused() -> None:
    with pytest.raises(silo.DefinitionError, match="setup is a function"):
        silo.Environment("bad", create_state=dict, setup="TASK-1")  # type: ignore[arg-type]


class Shelf:
    """A world that is not JSON: an object of its own, as another library would keep it."""

    def __init__(self) -> None:
        self.stock = {"SKU-1": 3, "SKU-2": 0}


def _shelf_json(shelf: Shelf) -> dict[str, Any]:
    return {"items": {sku: {"id": sku, "count": n} for sku, n in shelf.stock.items()}}


@silo.tool(
    name="take",
    description="Take one item off the shelf.",
    input_schema={
        "type": "object",
        "properties": {"sku": {"type": "string"}},
        "required": ["sku"],
        "additionalProperties": False,
    },
)
def take(shelf: Shelf, args: dict[str, Any]) -> Any:
    shelf.stock[args["sku"]] -= 1
    return {"left": shelf.stock[args["sku"]]}


def _took(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    return [
        silo.check("live", isinstance(final, Shelf) and final.stock["SKU-1"] == 2),
        silo.check(
            "snapshot",
            initial
            == {
                "items": {
                    "SKU-1": {"id": "SKU-1", "count": 3},
                    "SKU-2": {"id": "SKU-2", "count": 0},
                }
            },
        ),
    ]


SHELF_ENV = silo.Environment(
    "shelf",
    create_state=Shelf,
    tools=[take],
    verifiers=[silo.verifier(id="VER-T", task_id="TASK-T")(_took)],
    tasks=[silo.Task("TASK-T", "Take", "Take one SKU-1.", "VER-T")],
    snapshot=_shelf_json,
)


async def test_a_world_that_is_not_json_is_diffed_and_given_as_initial_through_its_snapshot(
    anyio_backend: str, tmp_path: Any
) -> None:
    result = await silo.run(
        SHELF_ENV, "TASK-T", ScriptedAgent([("take", {"sku": "SKU-1"})], "ok"), runs_dir=tmp_path
    )
    assert result.passed, [c.to_dict() for c in result.checks]
    items = result.state_diff["collections"]["items"]
    assert items["changed"] == ["SKU-1"]
    assert items["fields"]["SKU-1"] == [{"path": "count", "from": 3, "to": 2}]
    written = (tmp_path / result.run_id / "state-diff.json").read_text(encoding="utf-8")
    assert '"SKU-1"' in written and "SKU-2" not in written


def restock(stock: dict[str, int], sku: str, count: int) -> dict[str, int]:
    """A function of another library: it judges its own arguments."""
    if count < 1:
        raise ValueError(f"Cannot restock {count} items.")
    stock[sku] = stock.get(sku, 0) + count
    return {sku: stock[sku]}


RESTOCK_SCHEMA = {
    "type": "object",
    "properties": {"sku": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["sku", "count"],
}


@silo.tool(
    name="restock", description="Restock a SKU.", input_schema=RESTOCK_SCHEMA, check_input=False
)
def restock_tool(shelf: Shelf, args: dict[str, Any]) -> Any:
    return restock(shelf.stock, **args)


async def test_a_tool_that_judges_its_own_input_gets_it_as_sent_and_answers_its_errors(
    anyio_backend: str,
) -> None:
    assert restock_tool.spec.input_schema == RESTOCK_SCHEMA  # still what agents read
    seen: list[silo.ToolResult] = []

    async def agent(ctx: silo.AgentContext) -> str:
        for args in (
            {"sku": "SKU-2", "count": "2"},  # the schema says integer: the body decides
            {"sku": "SKU-2", "count": 0},  # the body raises: a value, not a fault
            {"sku": "SKU-2"},  # a missing argument: the body's TypeError, a value too
            {"sku": "SKU-2", "count": float("nan")},  # not JSON: the screen refuses it
            {"sku": "SKU-2", "count": 2},
        ):
            seen.append(await ctx.call_tool("restock", args))
        return "ok"

    env = silo.Environment(
        "restock",
        create_state=Shelf,
        tools=[restock_tool],
        verifiers=SHELF_ENV.verifiers,
        tasks=SHELF_ENV.tasks,
        snapshot=_shelf_json,
    )
    result = await silo.run(env, "TASK-T", agent)
    typed, refused, missing, nan, good = seen
    assert typed.is_error and typed.output["code"] == "tool_error"  # "0" + 2: the body's own
    assert typed.output["details"] == {"type": "TypeError"}
    assert refused.output == {
        "code": "tool_error",
        "message": "Cannot restock 0 items.",
        "details": {"type": "ValueError"},
    }
    assert missing.is_error and "count" in missing.output["message"]
    assert nan.output["code"] == "invalid_input" and "count" in nan.output["message"]
    assert good.output == {"SKU-2": 2} and not good.is_error
    assert (result.tool_errors, result.tool_faults, result.reward_valid) == (4, 0, True)
