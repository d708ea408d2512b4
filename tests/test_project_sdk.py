"""The project SDK end to end, and every SiloError code reached through it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.project import Project

pytestmark = pytest.mark.anyio

SET_TIER = '''\
"""Tool set_tier: change a customer's tier."""

from __future__ import annotations

from typing import Any

import silo_async as silo

from ..state import State


@silo.tool(
    name="set_tier",
    description="Set a customer's tier.",
    input_schema={
        "type": "object",
        "properties": {"customerId": {"type": "string"}, "tier": {"type": "string"}},
        "required": ["customerId", "tier"],
        "additionalProperties": False,
    },
)
def set_tier(state: State, input: dict[str, Any]) -> Any:
    """Set the tier."""
    customer = state["customers"].get(input["customerId"])
    if customer is None:
        raise silo.tool_error("not_found", f'Customer "{input["customerId"]}" was not found.')
    customer["tier"] = input["tier"]
    return customer
'''

VER_001 = '''\
"""Verifier VER-001."""

from __future__ import annotations

import silo_async as silo

from ..state import State


@silo.verifier(id="VER-001", task_id="TASK-001", name="C1 is platinum")
def ver_001(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """C1 was upgraded and nobody else changed."""
    return [
        silo.check("C1 platinum", final["customers"]["C1"]["tier"] == "platinum"),
        silo.optional("C2 untouched", final["customers"]["C2"] == initial["customers"]["C2"]),
    ]
'''


async def upgrade_agent(ctx: silo.AgentContext) -> str:
    assert [t.name for t in ctx.tools] == ["set_tier"]
    result = await ctx.call_tool("set_tier", {"customerId": "C1", "tier": "platinum"})
    assert not result.is_error
    return "done"


async def idle_agent(ctx: silo.AgentContext) -> str:
    return ""


async def spending_agent(ctx: silo.AgentContext) -> str:
    ctx.record_model_step(model="m", input_tokens=8, output_tokens=4)
    await ctx.call_tool("set_tier", {"customerId": "C1", "tier": "platinum"})
    return "done"


async def test_walkthrough_from_blank_to_a_passing_run(tmp_path: Path) -> None:
    project = await Project.open(tmp_path)
    env = await project.environments.create("crm-lite")
    await env.data.add("customers", {"C1": {"tier": "gold"}, "C2": {"tier": "silver"}})

    scaffold = await env.tools.scaffold("set_tier")
    assert scaffold.created == "tools/set_tier.py"
    (env.path / scaffold.created).write_text(SET_TIER)

    await env.tasks.add(
        {
            "id": "TASK-001",
            "title": "Upgrade C1",
            "instruction": "Customer C1 renewed on the platinum plan; update their tier.",
            "verifierId": "VER-001",
            "difficulty": "easy",
        }
    )
    made = await env.verifiers.scaffold("VER-001", "TASK-001")
    # Before the verifier is implemented, validation refuses the environment.
    report = await env.validate()
    assert [f.code for f in report.findings] == ["verifier_not_implemented"]
    (env.path / made.created).write_text(VER_001)

    report = await env.validate()
    assert report.ok, report.to_dict()
    assert report.findings == ()
    assert report.counts == {"data": 1, "tasks": 1, "tools": 1, "verifiers": 1}

    result = await env.run("TASK-001", upgrade_agent)
    assert result.passed
    assert result.reward == 1.0
    assert result.tool_calls == 1
    assert result.run_dir is not None
    assert result.run_dir.parent == project.runs_dir == tmp_path / ".silo" / "runs"
    for name in ("trace.jsonl", "result.json", "state-diff.json", "run.json"):
        assert (result.run_dir / name).is_file()
    assert json.loads((result.run_dir / "result.json").read_text())["passed"] is True

    many = await env.run_many(["TASK-001"], idle_agent, runs=2)
    assert [r.passed for r in many] == [False, False]
    assert all(r.run_dir is not None and r.run_dir.parent == project.runs_dir for r in many)
    # Every rollout had a fresh world: the data on disk is unchanged.
    assert await env.data.get("customers") == {"C1": {"tier": "gold"}, "C2": {"tier": "silver"}}

    capped = await env.run("TASK-001", spending_agent, token_limit=10)
    assert capped.termination_reason == "max_tokens"
    [capped_many] = await env.run_many("TASK-001", spending_agent, token_limit=10)
    assert capped_many.termination_reason == "max_tokens"

    # limits= says the same as the keywords, and never together with one of them.
    limits = silo.Limits(token_limit=10)
    assert (await env.run("TASK-001", spending_agent, limits=limits)).termination_reason == (
        "max_tokens"
    )
    [limited] = await env.run_many("TASK-001", spending_agent, limits=silo.Limits(max_tool_calls=0))
    assert limited.termination_reason == "max_tool_calls"
    with pytest.raises(TypeError, match="not both"):
        await env.run("TASK-001", idle_agent, limits=limits, max_tool_calls=5)
    with pytest.raises(TypeError, match="not both"):
        await env.run_many("TASK-001", idle_agent, limits=limits, timeout=5)


async def test_project_open_and_environment_open(tmp_path: Path) -> None:
    project = await Project.open(tmp_path)
    assert project.cwd == tmp_path
    assert await project.environments.list() == []
    assert not (tmp_path / ".silo").exists()
    await project.environments.create("Alpha")
    handle = await project.environments.open("alpha")
    assert handle.name == "Alpha"  # the real directory name, whatever case was asked for
    assert handle.path == tmp_path / ".silo" / "environments" / "Alpha"
    (tmp_path / ".silo" / "environments" / ".staging-leftover").mkdir()
    assert await project.environments.list() == ["alpha"]


async def _code(awaitable: Any) -> str:
    with pytest.raises(silo.SiloError) as info:
        await awaitable
    return info.value.code


async def test_every_error_code_is_reachable_from_the_sdk(tmp_path: Path) -> None:
    seen: set[str] = set()

    async def expect(code: str, awaitable: Any) -> None:
        assert await _code(awaitable) == code
        seen.add(code)

    await expect("environment_not_found", Project.open(tmp_path / "missing"))
    project = await Project.open(tmp_path)
    await expect("environment_not_found", project.environments.open("ghost"))
    env = await project.environments.create("shop")
    await expect("environment_already_exists", project.environments.create("SHOP"))
    await expect("template_not_found", project.environments.create("x", template="nope"))
    await expect("unsafe_name", project.environments.create("../x"))

    await env.data.add("orders", [])
    await expect("data_already_exists", env.data.add("orders", []))
    await expect("data_not_found", env.data.get("customers"))
    await expect("invalid_json", env.data.add("bad", float("inf")))

    task = {"id": "T-1", "title": "t", "instruction": "i", "verifierId": "V-1"}
    await env.tasks.add(task)
    await expect("task_already_exists", env.tasks.add(task))
    await expect("task_not_found", env.tasks.get("T-2"))
    await expect("task_invalid", env.tasks.add({"id": "T-3"}))

    await env.tools.scaffold("lookup")
    await expect("tool_already_exists", env.tools.scaffold("lookup"))
    await env.verifiers.scaffold("V-1", "T-1")
    await expect("verifier_already_exists", env.verifiers.scaffold("V-1", "T-1"))
    registry = env.path / "verifiers" / "__init__.py"
    registry.write_text(registry.read_text() + "from .other import v_2\n")
    await expect("already_registered", env.verifiers.scaffold("V-2", "T-1"))
    shutil.move(registry, registry.with_suffix(".bak"))
    await expect("registry_not_found", env.verifiers.scaffold("V-3", "T-1"))
    shutil.move(registry.with_suffix(".bak"), registry)
    state = env.path / "state.py"
    state.rename(env.path / "state.bak")
    await expect("state_type_not_found", env.tools.scaffold("other"))
    (env.path / "state.bak").rename(state)

    manifest = env.path / "silo.environment.json"
    manifest.write_text(json.dumps({"entrypoint": "../elsewhere.py"}))
    await expect("entrypoint_outside_environment", env.load())
    manifest.write_text("{")
    await expect("invalid_json", env.tools.list())
    manifest.write_text(json.dumps({"entrypoint": "state.py"}))
    await expect("runtime_contract_invalid", env.verifiers.list())

    assert seen == set(silo.ERROR_CODES)


async def test_run_errors_propagate_from_the_core(tmp_path: Path) -> None:
    project = await Project.open(tmp_path)
    env = await project.environments.create("empty")
    assert await _code(env.run("TASK-404", idle_agent)) == "task_not_found"
