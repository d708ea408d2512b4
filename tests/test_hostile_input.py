"""Hostile tool inputs and outputs: numbers, strings and nesting decided once, artifacts strict.

Each test drives a real rollout (``run`` with a run directory) on both backends, so the trace,
``result.json``, ``state-diff.json`` and ``run.json`` are written and read back with a strict
RFC 8259 reader (no ``NaN``/``Infinity`` tokens, valid UTF-8).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async._input import InputRejectedError, copy_input, input_problems
from silo_async._jsonutil import MAX_DEPTH, clone_json, compact_json, pretty_json, utf8

pytestmark = pytest.mark.anyio

#: What ``json.loads('"\\ud83d"')`` gives: half of an emoji, which UTF-8 cannot encode.
LONE = json.loads('"\\ud83d"')

NUMBERS = {
    "type": "object",
    "properties": {
        "n": {"type": "number"},
        "i": {"type": "integer"},
        "s": {"type": "string"},
        "any": {},
    },
    "additionalProperties": False,
}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not RFC 8259 JSON: {name}")


def strict_load(raw: bytes) -> Any:
    """Parse like a strict RFC 8259 reader: valid UTF-8, no NaN/Infinity tokens."""
    return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)


def read_run(run_dir: Path) -> dict[str, Any]:
    """Every artifact of a run, each parsed strictly (the trace line by line)."""
    files = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    assert set(files) == {"trace.jsonl", "result.json", "state-diff.json", "run.json"}
    out: dict[str, Any] = {n: strict_load(b) for n, b in files.items() if n != "trace.jsonl"}
    out["trace"] = [strict_load(line) for line in files["trace.jsonl"].splitlines()]
    return out


@silo.tool(name="echo", description="Echo.", input_schema=NUMBERS)
def echo(state: dict[str, Any], args: dict[str, Any]) -> Any:
    state["last"] = args
    return args


@silo.tool(name="compute", description="Arithmetic that overflows.", input_schema=NUMBERS)
def compute(state: dict[str, Any], args: dict[str, Any]) -> Any:
    n = args.get("n", 1.0)
    state["total"] = n * 10  # 1e308 * 10 is inf: the world itself holds a non-finite value
    return {"total": state["total"], "nan": state["total"] - state["total"]}


@silo.tool(name="deep_output", description="Returns data nested too deeply.")
def deep_output(state: dict[str, Any], args: dict[str, Any]) -> Any:
    return nested(MAX_DEPTH + 1)


@silo.verifier(id="VER-ANY", task_id="TASK-ANY")
def anything(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    return [silo.check("graded", True, detail=ctx.agent_output[:20])]


ENV = silo.Environment(
    name="hostile",
    create_state=lambda: {"last": None},
    tools=[echo, compute, deep_output],
    verifiers=[anything],
    tasks=[silo.Task("TASK-ANY", "Anything", "Do anything.", "VER-ANY")],
)


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"x": value}
    return value


def scripted(calls: list[tuple[str, Any]], answer: Any = "done") -> Any:
    seen: list[silo.ToolResult] = []

    async def agent(ctx: silo.AgentContext) -> Any:
        for name, args in calls:
            seen.append(await ctx.call_tool(name, args))
        return answer

    agent.seen = seen  # type: ignore[attr-defined]
    return agent


async def run_calls(
    tmp_path: Path, calls: list[tuple[str, Any]], answer: Any = "done"
) -> tuple[silo.RunResult, list[silo.ToolResult], dict[str, Any]]:
    agent = scripted(calls, answer)
    result = await silo.run(ENV, "TASK-ANY", agent, runs_dir=tmp_path)
    assert result.run_dir is not None
    return result, agent.seen, read_run(result.run_dir)


# -- 1. numbers ------------------------------------------------------------------------------

REFUSED_NUMBERS = [
    ({"n": math.nan}, '"n" must be a finite number, received NaN'),
    ({"n": math.inf}, '"n" must be a finite number, received Infinity'),
    ({"i": -math.inf}, '"i" must be a finite number, received -Infinity'),
    ({"n": 10**400}, '"n" must be a number of at most about 1.8e308'),
    ({"any": 10**5000}, '"any" must be a number of at most about 1.8e308'),  # past str() limit
    ({"any": {"deep": [math.nan]}}, '"any.deep[0]" must be a finite number, received NaN'),
    ({"i": 2**53}, '"i" must be an integer between -9007199254740991 and 9007199254740991'),
    ({"i": -(10**300)}, '"i" must be an integer between -9007199254740991'),
    ({"i": 1e300}, '"i" must be an integer between'),
]


@pytest.mark.parametrize(("args", "problem"), REFUSED_NUMBERS)
async def test_numbers_json_cannot_hold_are_invalid_input(
    tmp_path: Path, args: dict[str, Any], problem: str
) -> None:
    result, (seen,), files = await run_calls(tmp_path, [("echo", args)])
    assert seen.is_error and seen.output["code"] == "invalid_input"
    assert problem in seen.output["message"]
    assert result.tool_faults == 0 and result.tool_errors == 1
    assert files["state-diff.json"] == {"scalars": [], "collections": {}}  # the body never ran


@pytest.mark.parametrize(
    "args",
    [
        {"n": 1e308, "i": 2**53 - 1},
        {"n": -1.7976931348623157e308, "i": -(2**53 - 1)},
        {"n": 10**300, "i": 3.0},
        {"n": 5e-324, "i": 0},
    ],
)
async def test_finite_numbers_in_range_reach_the_body(tmp_path: Path, args: dict[str, Any]) -> None:
    _, (seen,), _ = await run_calls(tmp_path, [("echo", args)])
    assert not seen.is_error and seen.output == args


async def test_arithmetic_that_overflows_in_the_world_is_written_as_null(tmp_path: Path) -> None:
    result, (seen,), files = await run_calls(tmp_path, [("compute", {"n": 1e308})])
    assert seen.output["total"] == math.inf  # the agent gets the value itself...
    written = files["trace"][2]
    assert written["type"] == "tool_result" and written["output"] == {"total": None, "nan": None}
    total = {"field": "total", "to": None}
    assert files["state-diff.json"]["scalars"] == [total]  # ...every file writes null
    assert result.state_diff["scalars"] == [total]


def test_schema_validator_is_valid_applies_the_same_rules() -> None:
    validator = silo.Tool("t", "", NUMBERS, lambda s, a: None).validator
    assert validator.is_valid({"n": 1.5, "i": 7})
    assert not validator.is_valid({"n": math.nan})
    assert not validator.is_valid({"i": 2**53})
    assert validator.problems({"n": math.inf}) == ['"n" must be a finite number, received Infinity']


# -- 2. strings no artifact writer can refuse -------------------------------------------------


async def test_a_lone_surrogate_in_input_and_output_is_written_and_reads_back(
    tmp_path: Path,
) -> None:
    args = {"s": LONE + "x", "any": {LONE: [LONE]}}
    result, (seen,), files = await run_calls(tmp_path, [("echo", args)], answer=LONE)
    assert seen.output == args and result.termination_reason == "completed"
    call, answer = files["trace"][1], files["trace"][-3]
    assert call["input"] == args
    assert answer == {**answer, "type": "agent_output", "output": LONE}
    assert files["result.json"]["agentOutput"] == LONE
    assert files["state-diff.json"]["scalars"] == [{"field": "last", "from": None, "to": args}]
    raw = (tmp_path / result.run_id / "trace.jsonl").read_bytes()
    assert b"\\ud83d" in raw  # written as its escape: valid UTF-8, same string


def test_every_writer_helper_encodes_any_string() -> None:
    for text in (LONE, "\udc80 é", compact_json({"k": LONE}), pretty_json([LONE])):
        raw = utf8(text)
        raw.decode("utf-8")  # valid UTF-8
    assert json.loads(utf8(compact_json({"k": LONE + "é"}))) == {"k": LONE + "é"}


# -- 3. nesting ------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 990, 5000])
async def test_deep_input_is_invalid_input_never_a_recursion_error(
    tmp_path: Path, depth: int
) -> None:
    args = {"any": nested(depth - 1)}
    result, (seen, _), files = await run_calls(tmp_path, [("echo", args), ("echo", {"n": 1})])
    assert seen.output["code"] == "invalid_input"
    assert f'"any" nests more than {MAX_DEPTH} arrays/objects' in seen.output["message"]
    assert result.tool_calls == 2 and result.termination_reason == "completed"
    assert isinstance(files["trace"][1]["input"], dict | str)  # recorded, and readable


async def test_input_at_the_depth_limit_is_accepted(tmp_path: Path) -> None:
    args = {"any": nested(MAX_DEPTH - 1)}
    _, (seen,), _ = await run_calls(tmp_path, [("echo", args)])
    assert not seen.is_error


async def test_a_too_deep_output_is_an_environment_fault(tmp_path: Path) -> None:
    result, (seen,), _ = await run_calls(tmp_path, [("deep_output", {})])
    assert seen.output["code"] == "internal_error" and result.tool_faults == 1


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5000])
async def test_a_deep_answer_is_kept_as_text_and_the_run_is_written(
    tmp_path: Path, depth: int
) -> None:
    result, _, files = await run_calls(tmp_path, [], answer=nested(depth))
    assert result.termination_reason == "agent_error"
    assert result.error is not None and "cannot be written as JSON" in result.error
    assert isinstance(files["result.json"]["agentOutput"], str)


def test_copies_refuse_deep_data_with_a_value_error() -> None:
    with pytest.raises(ValueError, match="nested deeper than 64 levels"):
        clone_json(nested(MAX_DEPTH + 1))
    assert clone_json(nested(MAX_DEPTH)) == nested(MAX_DEPTH)
    assert input_problems(nested(MAX_DEPTH)) == []


def test_input_copies_are_plain_json() -> None:
    import enum

    class Size(enum.IntEnum):
        BIG = 3

    copied = copy_input({"t": (1, [2]), "e": Size.BIG})
    assert copied == {"t": [1, [2]], "e": 3} and type(copied["e"]) is int
    assert input_problems({"x": {1, 2}}) == ['"x" must be a JSON value, received set']
    assert input_problems({1: "a"}) == ["arguments has a key that is not a string (1)"]


# -- 4. strict JSON on disk ------------------------------------------------------------------


async def test_non_finite_answers_and_trace_fields_are_written_as_null(tmp_path: Path) -> None:
    async def agent(ctx: silo.AgentContext) -> Any:
        await ctx.call_tool("echo", {"n": math.nan})  # refused, but recorded as called
        ctx.record_model_step(model="m", input_tokens=1, output_tokens=2, score=10**5000)
        return {"score": math.nan, "best": -math.inf}

    result = await silo.run(ENV, "TASK-ANY", agent, runs_dir=tmp_path)
    assert result.run_dir is not None
    files = read_run(result.run_dir)  # strict: would raise on a NaN token
    assert files["result.json"]["agentOutput"] == {"score": None, "best": None}
    assert files["trace"][1]["input"] == {"n": None}
    step = next(e for e in files["trace"] if e["type"] == "model_step")
    assert step["score"] is None
    assert result.output_text == '{"score":null,"best":null}'


def test_a_refused_input_does_not_grow_a_shared_traceback() -> None:
    # A shared exception instance raised again and again keeps every traceback it was raised
    # through: thousands of refused calls would grow it without bound.
    seen: list[InputRejectedError] = []
    for _ in range(3):
        try:
            copy_input({"n": math.nan})
        except InputRejectedError as exc:
            seen.append(exc)
            depth, tb = 0, exc.__traceback__
            while tb is not None:
                depth, tb = depth + 1, tb.tb_next
            assert depth <= 3
    assert len({id(e) for e in seen}) == 3
