"""Strict function calling (DESIGN.md section 17): the strict form, and null meaning "not given".

The property test walks every tool of every shipped template: its strict form is strict (every
property required at every depth, optional ones nullable, closed objects), and a call with
``null`` for every optional property does exactly what the call leaving them out does.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import silo_async as silo
from silo_async import agents
from silo_async.templates import crm, erp, project, support
from silo_async.testing import Reply, ScriptedModelServer, ToolCall
from tests.peers import extra

from .template_support import template_environment

pytestmark = pytest.mark.anyio

TEMPLATES = {"crm": crm, "project": project, "erp": erp, "support": support}

LIST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ownerId": {"type": "string", "minLength": 1},
        "status": {"type": "string", "enum": ["open", "won"]},
        "kind": {"enum": ["a", "b"]},
        "note": {"type": ["string", "null"]},
        "exact": {"const": "x"},
        "anything": {},
        "lines": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                "required": ["sku"],
                "additionalProperties": False,
            },
        },
        "filter": {
            "type": "object",
            "properties": {"since": {"type": "string"}, "tag": {"type": "string"}},
            "required": ["since"],
            "additionalProperties": False,
        },
    },
    "required": ["lines"],
    "additionalProperties": False,
}


def _echo_tool(schema: dict[str, Any]) -> silo.Tool:
    @silo.tool(name="echo", description="Returns its input.", input_schema=schema)
    def echo(state: Any, input: dict[str, Any]) -> Any:
        return input

    return echo


def test_the_strict_form_requires_every_property_and_makes_optional_ones_nullable() -> None:
    spec = _echo_tool(LIST_SCHEMA).spec
    strict = spec.to_dict(strict=True)
    assert set(strict) == {"name", "description", "inputSchema"}
    schema = strict["inputSchema"]
    props = schema["properties"]
    assert schema["required"] == list(LIST_SCHEMA["properties"])
    assert schema["additionalProperties"] is False
    assert props["ownerId"] == {"type": ["string", "null"], "minLength": 1}  # keywords kept
    assert props["status"] == {"type": ["string", "null"], "enum": ["open", "won", None]}
    assert props["kind"] == {"enum": ["a", "b", None]}
    assert props["note"] == {"type": ["string", "null"]}  # already nullable: unchanged
    assert props["exact"] == {"anyOf": [{"const": "x"}, {"type": "null"}]}
    assert props["anything"] == {}
    assert props["lines"]["type"] == "array"  # required: not nullable
    line = props["lines"]["items"]
    assert line["required"] == ["sku", "qty"]
    assert line["properties"]["qty"] == {"type": ["integer", "null"]}
    assert props["filter"]["type"] == ["object", "null"]
    assert props["filter"]["required"] == ["since", "tag"]
    Draft202012Validator.check_schema(schema)
    # The plain form is untouched.
    assert spec.to_dict()["inputSchema"] == LIST_SCHEMA == spec.input_schema


def test_null_for_an_optional_property_is_not_given_at_every_depth() -> None:
    echo = silo.bind_tools(None, [_echo_tool(LIST_SCHEMA)])[0]
    given = {
        "ownerId": None,
        "status": None,
        "kind": None,
        "note": None,  # allows null: null is an answer here, kept
        "exact": None,
        "anything": None,  # allows anything: kept
        "lines": [{"sku": "A", "qty": None}, {"sku": "B", "qty": 2}],
        "filter": {"since": "2026-01-01", "tag": None},
    }
    result, fault = echo.invoke_sync(given)
    assert fault is None and not result.is_error, result.output
    assert result.output == {
        "note": None,
        "anything": None,
        "lines": [{"sku": "A"}, {"sku": "B", "qty": 2}],
        "filter": {"since": "2026-01-01"},
    }
    assert given["ownerId"] is None  # the caller's own input is left as it was


def test_null_for_a_required_property_is_still_refused() -> None:
    echo = silo.bind_tools(None, [_echo_tool(LIST_SCHEMA)])[0]
    for given, problem in (
        ({"lines": None}, '"lines" must be array, received null'),
        ({"lines": [{"sku": None}]}, '"lines[0].sku" must be string, received null'),
        ({"lines": [], "filter": {"since": None}}, '"filter.since" must be string, received null'),
    ):
        result, _ = echo.invoke_sync(given)
        assert result.is_error and result.output["details"]["problems"] == [problem]


def test_other_problems_are_named_without_the_nulls() -> None:
    echo = silo.bind_tools(None, [_echo_tool(LIST_SCHEMA)])[0]
    result, _ = echo.invoke_sync({"ownerId": None, "status": "lost"})
    assert result.output["details"]["problems"] == [
        '"lines" is required',
        '"status" must be one of: open, won',
    ]
    assert echo.tool.validator.is_valid({"lines": [], "ownerId": None})
    assert echo.tool.validator.problems({"lines": [], "ownerId": None}) == []


async def test_an_async_tool_drops_the_nulls_too() -> None:
    @silo.tool(name="aecho", description="Returns its input.", input_schema=LIST_SCHEMA)
    async def aecho(state: Any, input: dict[str, Any]) -> Any:
        return input

    result, _ = await silo.bind_tools(None, [aecho])[0].invoke({"lines": [], "kind": None})
    assert result.output == {"lines": []}


async def test_an_episode_takes_a_strict_models_call_as_one_without_the_nulls() -> None:
    env = template_environment("crm", crm)
    task = env.tasks[0].id
    async with silo.episode(env, task) as ep:
        (spec,) = [t for t in ep.tools if t.name == "list_opportunities"]
        strict = spec.to_dict(strict=True)["inputSchema"]
        nulls = await ep.call_tool(spec.name, dict.fromkeys(strict["properties"]))
        plain = await ep.call_tool(spec.name, {})
    assert not nulls.is_error and nulls.output["total"] > 0
    assert nulls == plain


# -- every tool of every shipped template ---------------------------------------------------


def _tools(package: ModuleType) -> list[silo.BoundTool]:
    tools: list[silo.BoundTool] = package.bind_tools(package.create_state())
    return tools


def _all_tools() -> list[tuple[str, str]]:
    return [(name, t.name) for name, package in TEMPLATES.items() for t in _tools(package)]


def _check_strict(original: Any, strict: Any, where: str) -> None:
    """``strict`` is the strict form of ``original`` (recursively)."""
    if not isinstance(original, dict):
        return
    assert isinstance(strict, dict), where
    if "properties" in original:
        required = set(original.get("required", ()))
        assert strict["required"] == list(original["properties"]), where
        assert strict["additionalProperties"] is False, where
        for name, sub in original["properties"].items():
            got = strict["properties"][name]
            at = f"{where}.{name}"
            if name not in required:
                assert Draft202012Validator(got).is_valid(None), at
                if "enum" in sub:
                    assert None in got["enum"], at
            _check_strict(sub, got, at)
    if isinstance(original.get("items"), dict):
        _check_strict(original["items"], strict["items"], f"{where}[]")
    for key, value in original.items():  # every other keyword kept
        if key not in ("properties", "required", "items", "type", "enum", "additionalProperties"):
            assert strict[key] == value, f"{where}: {key}"


def _sample(schema: dict[str, Any], nulls: bool) -> Any:
    """A value for ``schema``: required properties filled, optional ones null (or left out)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        out = {}
        for name, sub in schema.get("properties", {}).items():
            if name in schema.get("required", ()):
                out[name] = _sample(sub, nulls)
            elif nulls:
                out[name] = None
        return out
    if kind == "array":
        count = max(schema.get("minItems", 1), 1)
        return [_sample(schema["items"], nulls) for _ in range(count)]
    if kind == "string":
        pattern = schema.get("pattern", "")
        if "[0-9]{4}-" in pattern:
            return "2026-09-30"
        if pattern:
            return "GB" if pattern == "^[A-Z]{2}$" else "GB29NWBK60161331926819"
        return "x" * max(schema.get("minLength", 1), 1)
    if kind in ("integer", "number"):
        return max(schema.get("minimum", 1), 1)
    if kind == "boolean":
        return True
    return None


@pytest.mark.parametrize("template", list(TEMPLATES))
def test_every_template_tool_has_a_strict_form_and_takes_nulls_as_not_given(
    template: str,
) -> None:
    package = TEMPLATES[template]
    for bound in _tools(package):
        spec = bound.spec
        strict = spec.to_dict(strict=True)
        assert strict["name"] == spec.name and strict["description"] == spec.description
        Draft202012Validator.check_schema(strict["inputSchema"])
        _check_strict(spec.input_schema, strict["inputSchema"], spec.name)
        with_nulls = _sample(spec.input_schema, nulls=True)
        assert Draft202012Validator(strict["inputSchema"]).is_valid(with_nulls), spec.name
        # On two fresh worlds: null for every optional property does what leaving it out does.
        left_out = _sample(spec.input_schema, nulls=False)
        (a,) = [t for t in _tools(package) if t.name == spec.name]
        (b,) = [t for t in _tools(package) if t.name == spec.name]
        got, expected = a.invoke_sync(with_nulls), b.invoke_sync(left_out)
        assert got[0] == expected[0], spec.name
        if got[0].is_error and got[0].output["code"] == "invalid_input":
            message = got[0].output["message"]
            assert "received null" not in message, (spec.name, message)


def test_the_sampled_calls_mostly_reach_the_tool_bodies() -> None:
    # The property above means little if every call stopped at validation: most must not.
    refused = total = 0
    for package in TEMPLATES.values():
        for bound in _tools(package):
            result, _ = bound.invoke_sync(_sample(bound.spec.input_schema, nulls=True))
            total += 1
            refused += result.is_error and result.output["code"] == "invalid_input"
    assert refused < total * 0.1, (refused, total)


@extra("openai")
async def test_openai_chat_sends_strict_tools_and_the_models_nulls_mean_not_given() -> None:
    env = template_environment("crm", crm)
    nulls = dict.fromkeys(("ownerId", "accountId", "stageId", "status", "staleOnly"))
    script: list[Any] = [Reply(tool_calls=[ToolCall("list_opportunities", nulls)]), "done"]
    async with ScriptedModelServer(script) as server:
        strict = agents.openai_chat("scripted-gpt", base_url=server.base_url, strict=True)
        result = await silo.run(env, env.tasks[0].id, strict)
        plain = agents.openai_chat("scripted-gpt", base_url=server.base_url)
        await silo.run(env, env.tasks[0].id, plain)
    sent = {t["function"]["name"]: t["function"] for t in server.requests[0].body["tools"]}
    listing = sent["list_opportunities"]
    assert listing["strict"] is True
    spec = next(t.spec for t in env.bind_tools(env.create_state()) if t.name == listing["name"])
    assert listing["parameters"] == spec.to_dict(strict=True)["inputSchema"]
    (answer,) = server.requests[1].last_results
    assert '"total":' in answer.content  # the listing itself, not invalid_input
    assert result.tool_errors == 0
    # Off by default: the plain schemas, no "strict" key.
    default = server.requests[2].body["tools"][0]["function"]
    assert (
        "strict" not in default
        and default["parameters"] == env.bind_tools(env.create_state())[0].spec.input_schema
    )
