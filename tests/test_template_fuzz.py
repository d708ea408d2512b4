"""Property test: every tool of every shipped template, fed hostile input, answers with a code.

Templates are discovered (``list_templates()``), so a new template is covered the day it ships.
Inputs mix what an agent legitimately sends (real ids and dates from the world, enum members,
numbers in range) with what breaks naive code: NaN, ±Infinity, 1e308, integers of hundreds or
thousands of digits, 2**53, lone surrogates, NUL bytes, arrays and objects nested a thousand
levels, wrong types. Each example is one episode with a run directory; every call must come back
as a value (success, or an error with a code) and never as an environment fault, and every
artifact must be strict JSON in valid UTF-8.
"""

from __future__ import annotations

import importlib
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import silo_async as silo
from silo_async.templates import list_templates

from .template_support import template_environment
from .test_hostile_input import nested, read_run

pytestmark = pytest.mark.anyio

#: Examples per tool: enough to hit every input slot with every kind of value a few times,
#: small enough that the whole file stays well under a minute with hundreds of tools.
EXAMPLES = 6
CALLS_PER_EXAMPLE = 4

DEEP = [nested(1000), nested(200, "x"), {"a": nested(999)}]
HUGE_NUMBERS = [
    float("nan"), float("inf"), float("-inf"), 1e308, -1e308, 1.7976931348623157e308,
    5e-324, -0.0, 2**53, 2**53 - 1, -(2**53), 10**20, 10**400, -(10**400), 10**5000,
    1e15, 1e16 + 1, 999_999_999_999.995,
]  # fmt: skip
ODD_STRINGS = [
    json.loads('"\\ud83d"'), "\udc00tail", "a\udfffb", "\x00", "x\x00y", "", " ", "a" * 5000,
    "9999-12-31", "0001-01-01", "2026-02-30", "2026-13-01", "-1", "1e308", "NaN", "🙂", "ＩＤ",
]  # fmt: skip


@cache
def _environment(template_id: str) -> silo.Environment:
    package = importlib.import_module(f"silo_async.templates.{template_id}")
    return template_environment(template_id, package)


def _cases() -> list[Any]:
    """One case per tool; the tools alternate between asyncio and trio (both run every time)."""
    cases: list[Any] = []
    for info in list_templates():
        env = _environment(info.id)
        if not env.tasks:
            continue  # a template without tasks (blank) has no tools to run either
        for tool in env.bind_tools(env.create_state()):
            backend = ("asyncio", "trio")[len(cases) % 2]
            case_id = f"{info.id}-{tool.name}-{backend}"
            cases.append(pytest.param(info.id, tool.name, backend, id=case_id))
    return cases


@pytest.fixture
def anyio_backend(backend: str) -> str:
    """The backend the case names (a tool's behaviour does not depend on it; the plumbing does)."""
    return backend


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


@cache
def _world_values(template_id: str) -> tuple[list[str], list[str]]:
    """Real ids and real dates of a fresh world: what reaches a tool body past its lookups."""
    ids: set[str] = set()
    dates: set[str] = set()

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, str(k))
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str):
            if key == "id" or key.endswith(("Id", "Ids")):
                ids.add(value)
            if _DATE.match(value):
                dates.add(value)

    walk(_environment(template_id).create_state())
    return sorted(ids), sorted(dates)


def _hostile() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(HUGE_NUMBERS),
        st.sampled_from(ODD_STRINGS),
        st.sampled_from(DEEP),
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(min_value=-(10**350), max_value=10**350),
        st.text(st.characters(exclude_categories=()), max_size=12),
        st.sampled_from([None, True, False, [], {}, [None], {"": None}]),
    )


def _plausible(schema: Any, template_id: str, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values of the declared type: what passes the schema and reaches the body."""
    if not isinstance(schema, dict) or depth > 3:
        return st.none()
    ids, dates = _world_values(template_id)
    if "enum" in schema:
        return st.sampled_from(list(schema["enum"]))
    kind = schema.get("type")
    if kind == "string":
        pool = [s for s in (ids + dates) if s] or ["x"]
        return st.sampled_from(pool) | st.sampled_from(ODD_STRINGS)
    if kind == "integer":
        return st.sampled_from([0, 1, 2, 7, 30, 365, 2**31, 2**53 - 1, -(2**53 - 1), -1])
    if kind == "number":
        return st.sampled_from([0, 0.01, 1, 2.5, 100, 48000, 1e12, 1e15, 1e300, 1e308, -1, -1e308])
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        item = _plausible(schema.get("items", {}), template_id, depth + 1)
        return st.lists(item | _hostile(), max_size=3)
    if kind == "object":
        return _object(schema, template_id, depth + 1)
    return _hostile()


def _object(schema: dict[str, Any], template_id: str, depth: int) -> st.SearchStrategy[Any]:
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    slots = {
        name: _plausible(sub, template_id, depth) | _hostile() for name, sub in properties.items()
    }

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, values in slots.items():
            if name in required or draw(st.booleans()):
                out[name] = draw(values)
        if draw(st.integers(0, 9)) == 0:  # now and then a parameter that does not exist
            out[draw(st.sampled_from(["extra", "", "\ud800"]))] = draw(_hostile())
        return out

    return build()


def _inputs(template_id: str, tool_name: str) -> st.SearchStrategy[list[Any]]:
    env = _environment(template_id)
    spec = next(t.spec for t in env.bind_tools(env.create_state()) if t.name == tool_name)
    one = _object(spec.input_schema, template_id, 0) | _hostile()
    return st.lists(one, min_size=1, max_size=CALLS_PER_EXAMPLE)


def _no_fault(results: list[silo.ToolResult], inputs: list[Any]) -> None:
    for result, args in zip(results, inputs, strict=True):
        if not result.is_error:
            continue
        code = result.output.get("code")
        assert isinstance(code, str) and code, (args, result.output)
        assert code != "internal_error", (args, result.output)


@pytest.mark.parametrize(("template_id", "tool_name", "backend"), _cases())
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,  # nothing written to the checkout
    derandomize=True,  # the same examples on every machine: CI cannot flake on a new seed
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
async def test_hostile_input_never_faults_and_every_artifact_is_strict_json(
    template_id: str, tool_name: str, backend: str, data: st.DataObject, tmp_path: Path
) -> None:
    env = _environment(template_id)
    inputs = data.draw(_inputs(template_id, tool_name), label="inputs")
    async with silo.episode(env, env.tasks[0].id, runs_dir=tmp_path, timeout=None) as ep:
        results = [await ep.call_tool(tool_name, args) for args in inputs]
        result = await ep.finish(data.draw(st.sampled_from(ODD_STRINGS + HUGE_NUMBERS)))
    _no_fault(results, inputs)
    assert result.tool_faults == 0 and result.tool_calls == len(inputs)
    assert result.run_dir is not None
    files = read_run(result.run_dir)
    assert [e["type"] for e in files["trace"]].count("tool_result") == len(inputs)
