"""A small code-first environment and scripted agents shared by the eval tests."""

from __future__ import annotations

from typing import Any

import anyio

import silo_async as silo
from silo_async.testing import ScriptedAgent

ITEM = {"type": "object", "properties": {"itemId": {"type": "string"}}, "required": ["itemId"]}


def create_state() -> dict[str, Any]:
    return {
        "items": [
            {"id": "A", "done": False, "note": "see https://example.com/a </script>"},
            {"id": "B", "done": False, "note": ""},
        ],
        "closed": 0,
    }


def _item(state: dict[str, Any], item_id: str) -> Any:
    for item in state["items"]:
        if item["id"] == item_id:
            return item
    raise silo.tool_error("not_found", f'Item "{item_id}" was not found.')


@silo.tool(name="get_item", description="Read an item.", input_schema=ITEM)
def get_item(state: dict[str, Any], args: dict[str, Any]) -> Any:
    return _item(state, args["itemId"])


@silo.tool(name="complete_item", description="Mark an item done.", input_schema=ITEM)
def complete_item(state: dict[str, Any], args: dict[str, Any]) -> Any:
    item = _item(state, args["itemId"])
    item["done"] = True
    state["closed"] += 1
    return {"id": item["id"], "done": True}


@silo.tool(name="explode", description="A broken tool (environment fault).")
def explode(state: dict[str, Any], args: dict[str, Any]) -> Any:
    raise RuntimeError("the environment is broken")


@silo.tool(name="big", description="Returns a huge output.")
def big(state: dict[str, Any], args: dict[str, Any]) -> Any:
    return {"blob": "x" * 100_000}


def _done_verifier(item_id: str, verifier_id: str, task_id: str) -> silo.Verifier:
    def body(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
        item = next(i for i in final["items"] if i["id"] == item_id)
        others = [i for i in final["items"] if i["id"] != item_id and i["done"]]
        return [
            silo.check(f"{item_id} is done", item["done"], f"done={item['done']}"),
            silo.optional("nothing else touched", not others),
            silo.optional("answer mentions the item", item_id in ctx.agent_output),
        ]

    return silo.verifier(id=verifier_id, task_id=task_id)(body)


TASKS = [
    silo.Task("T-1", "Complete A", "Complete item A.", "VER-1", "easy"),
    silo.Task("T-2", "Complete B", "Complete item B.", "VER-2", "medium"),
]


def make_env(*, broken_verifier: bool = False, strict: bool = False) -> silo.Environment:
    """The test environment; variants change its verifier (for replay tests)."""
    verifiers = [_done_verifier("A", "VER-1", "T-1"), _done_verifier("B", "VER-2", "T-2")]
    if broken_verifier:

        @silo.verifier(id="VER-1", task_id="T-1")
        def broken(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
            raise KeyError("verifier bug")

        verifiers[0] = broken
    if strict:

        @silo.verifier(id="VER-1", task_id="T-1")
        def stricter(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
            return [silo.check("A is done and closed twice", final["closed"] == 2)]

        verifiers[0] = stricter
    return silo.Environment(
        name="items",
        create_state=create_state,
        tools=[get_item, complete_item, explode, big],
        verifiers=verifiers,
        tasks=TASKS,
    )


async def good_agent(ctx: silo.AgentContext) -> str:
    """Completes the item named in the instruction."""
    item_id = ctx.task.split()[-1].rstrip(".")
    await ctx.call_tool("get_item", {"itemId": item_id})
    await ctx.call_tool("complete_item", {"itemId": item_id})
    return f"Completed {item_id}."


#: Reads, makes a mistake, completes nothing.
bad_agent = ScriptedAgent([("get_item", {"itemId": "Z"})], answer="I could not do it.")


async def faulty_agent(ctx: silo.AgentContext) -> str:
    """Hits the broken tool, then does the task: passes with an environment fault."""
    await ctx.call_tool("explode", {})
    return await good_agent(ctx)


async def greedy_agent(ctx: silo.AgentContext) -> None:
    """Calls tools until the limit stops it, leaving a partial answer."""
    ctx.set_output({"partial": True})
    while True:
        await ctx.call_tool("get_item", {"itemId": "A"})


async def crashing_agent(ctx: silo.AgentContext) -> str:
    await ctx.call_tool("complete_item", {"itemId": "A"})
    raise ValueError("model returned garbage")


big_agent = ScriptedAgent(["big"], answer="y" * 50_000)


async def slow_agent(ctx: silo.AgentContext) -> str:
    """Yields many times, so a cancellation can land mid-eval."""
    for _ in range(20):
        await anyio.lowlevel.checkpoint()
    return await good_agent(ctx)


def test_environment_is_consistent() -> None:
    env = make_env()
    assert [t.id for t in env.tasks] == ["T-1", "T-2"]
    assert env.verifier_for(env.task("T-2")).id == "VER-2"
