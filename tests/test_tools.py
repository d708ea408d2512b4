"""Tools: definition, binding, validation before the body, copies, error mapping, faults."""

from __future__ import annotations

from typing import Any

import pytest

import silo_async as silo

from .worlds import ENV, create_state

pytestmark = pytest.mark.anyio


def test_decorator_defaults_from_function() -> None:
    @silo.tool
    def list_things(state: Any, args: Any) -> list[str]:
        """List every thing.

        More details that the agent does not need.
        """
        return []

    assert list_things.name == "list_things"
    assert list_things.description == "List every thing."
    assert list_things.input_schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert list_things.spec.to_dict() == {
        "name": "list_things",
        "description": "List every thing.",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
    }


@pytest.mark.parametrize("bad", ["", "has space", "../x", "a" * 200])
def test_bad_tool_names_fail_at_definition(bad: str) -> None:
    with pytest.raises(silo.DefinitionError, match="Invalid tool name"):
        silo.tool(name=bad)(lambda s, a: None)


def test_bind_tools_rejects_duplicates_and_non_tools() -> None:
    tool = ENV.tools[0]
    with pytest.raises(silo.DefinitionError, match='"get_customer" is registered more than once'):
        silo.bind_tools({}, [tool, tool])
    with pytest.raises(silo.DefinitionError, match=r"expected tools made with @silo\.tool"):
        silo.bind_tools({}, [lambda s, a: None])  # type: ignore[list-item]


def test_tools_bound_to_the_same_world_are_kept_and_others_rebound() -> None:
    state, other = create_state(), create_state()
    bound = silo.bind_tools(state, ENV.tools)
    again = silo.bind_tools(state, bound)  # an environment's bind() built with bind_tools
    assert all(a is b for a, b in zip(again, bound, strict=True))
    moved = silo.bind_tools(other, bound)
    assert all(a is not b and a.name == b.name for a, b in zip(moved, bound, strict=True))
    read = moved[0].invoke_sync({"customerId": "CUS-001"})[0]
    other["customers"]["CUS-001"]["status"] = "other world"
    assert moved[0].invoke_sync({"customerId": "CUS-001"})[0].output["status"] == "other world"
    assert read.output["status"] == "active"
    with pytest.raises(silo.DefinitionError, match="registered more than once"):
        silo.bind_tools(state, [*bound, bound[0]])


async def test_sync_and_async_bodies_run() -> None:
    state = create_state()
    tools = {t.name: t for t in ENV.bind_tools(state)}
    read, _ = await tools["get_customer"].invoke({"customerId": "CUS-001"})
    assert read == silo.ToolResult({"id": "CUS-001", "status": "active", "tags": ["vip"]})
    write, _ = await tools["block_customer"].invoke({"customerId": "CUS-001"})
    assert (
        write.output["status"] == "blocked" and state["customers"]["CUS-001"]["status"] == "blocked"
    )


async def test_invalid_input_never_reaches_the_body() -> None:
    calls: list[Any] = []

    @silo.tool(
        name="spy",
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    )
    def spy(state: Any, args: Any) -> None:
        calls.append(args)

    [bound] = silo.bind_tools({}, [spy])
    result, fault = await bound.invoke({"n": "1", "m": 2})
    assert calls == [] and fault is None
    assert result.is_error
    assert result.output == {
        "code": "invalid_input",
        "message": 'Invalid arguments for "spy": "n" must be integer, received string.',
        "details": {"problems": ['"n" must be integer, received string']},
    }
    none, _ = await bound.invoke(None)
    assert none.output["details"]["problems"] == ['"n" is required']
    ok, _ = await bound.invoke({"n": 1})
    assert not ok.is_error and calls == [{"n": 1}]


async def test_outputs_and_inputs_are_copies() -> None:
    state = create_state()
    tools = {t.name: t for t in ENV.bind_tools(state)}
    result, _ = await tools["get_customer"].invoke({"customerId": "CUS-001"})
    result.output["status"] = "hacked"
    result.output["tags"].append("evil")
    assert state["customers"]["CUS-001"] == {"id": "CUS-001", "status": "active", "tags": ["vip"]}


async def test_tool_error_becomes_a_value_with_details_only_when_given() -> None:
    state = create_state()
    tools = {t.name: t for t in ENV.bind_tools(state)}
    missing, _ = await tools["get_customer"].invoke({"customerId": "CUS-404"})
    assert missing == silo.ToolResult(
        {"code": "not_found", "message": 'Customer "CUS-404" was not found.'}, is_error=True
    )
    await tools["block_customer"].invoke({"customerId": "CUS-001"})
    again, _ = await tools["block_customer"].invoke({"customerId": "CUS-001"})
    assert again.output == {
        "code": "invalid_state",
        "message": "already blocked",
        "details": {"status": "blocked"},
    }


async def test_other_exceptions_are_faults_with_traceback() -> None:
    [bound] = [t for t in ENV.bind_tools(create_state()) if t.name == "explode"]
    result, fault = await bound.invoke({})
    assert result.is_error and result.output["code"] == "internal_error"
    assert "ZeroDivisionError" in result.output["message"]
    assert fault is not None and fault.type == "ZeroDivisionError"
    assert "division by zero" in fault.message and "1 / 0" in fault.traceback


def test_tool_error_helper() -> None:
    err = silo.tool_error("conflict", "Nope.")
    assert isinstance(err, silo.ToolError) and err.to_output() == {
        "code": "conflict",
        "message": "Nope.",
    }


def test_an_environment_checks_its_tools_when_it_is_defined() -> None:
    tool = ENV.tools[0]
    with pytest.raises(silo.DefinitionError, match='"get_customer" is registered more than once'):
        silo.Environment(name="twice", create_state=dict, tools=[tool, tool])
    with pytest.raises(silo.DefinitionError, match=r'Environment "odd" got str'):
        silo.Environment(name="odd", create_state=dict, tools=["get_customer"])


def test_a_wrapped_first_paragraph_is_one_line_of_description() -> None:
    @silo.tool
    def list_things(state: Any, args: Any) -> list[str]:
        """List every thing, sorted by id, with the
        owner's name.

        Not for the agent.
        """
        return []

    assert list_things.description == "List every thing, sorted by id, with the owner's name."


def test_one_check_gives_the_body_its_copy_or_every_problem_once() -> None:
    seen: list[Any] = []

    @silo.tool(
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}, "tags": {"type": "array"}},
            "required": ["n"],
            "additionalProperties": False,
        }
    )
    def count(state: Any, args: Any) -> int:
        seen.append(args)
        return len(args)

    given = {"n": 1, "tags": None}  # strict function calling's "not given"
    checked = count.check(given)
    assert checked == {"n": 1} and checked is not given and given == {"n": 1, "tags": None}
    refused = count.check({"n": "1", "x": 2})
    assert not isinstance(refused, dict)
    assert count.invalid(refused).output["details"]["problems"] == [
        '"x" is not a parameter; expected one of: n, tags',
        '"n" must be integer, received string',
    ]
    # The runtime tool runs the same check: the body gets exactly that copy.
    outcome = silo.BoundTool(count, {}).invoke_sync(given)
    assert outcome == silo.ToolOutcome(silo.ToolResult(1)) and seen == [{"n": 1}]


async def test_a_bound_tool_gives_its_own_world_and_a_named_outcome() -> None:
    state, other = create_state(), create_state()
    [bound] = [t for t in silo.bind_tools(state, ENV.tools) if t.name == "block_customer"]
    assert bound.world is state
    outcome = await bound.invoke({"customerId": "CUS-001"})
    assert outcome.fault is None and not outcome.result.is_error
    result, fault = outcome  # still the (result, fault) pair it always was
    assert result is outcome.result and fault is None
    assert state["customers"]["CUS-001"]["status"] == "blocked"
    assert other["customers"]["CUS-001"]["status"] == "active"
