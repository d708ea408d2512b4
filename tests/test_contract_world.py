"""Conformance to DESIGN.md section 11 (``silo_async.world`` and ``silo_async.testing``).

Section 11 names the modules, ``ScriptedAgent``, ``ScriptedModelServer`` and
``check_environment``, and lists what the toolkit must hold (schema builders, input readers,
paging, record lookups with ``not_found`` messages, ids, a simulated clock and its tools, an
audit log and its tools, seeding from ``data/`` parsed once and cloned per rollout, money and
rounding, answer parsing). Here a small world is built on the toolkit alone, the way a world
author would, and played through ``silo.run`` with ``ScriptedAgent``.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import silo_async as silo
import silo_async.testing
from silo_async import world
from silo_async.cli._app import app
from silo_async.testing import ScriptedAgent, check_environment

pytestmark = pytest.mark.anyio

VENDORS = [
    {"id": "VEN-001", "name": "Acme Tools", "status": "active", "balance": 120.5},
    {"id": "VEN-002", "name": "Bolt & Nut", "status": "blocked", "balance": 0},
    {"id": "VEN-003", "name": "Café Crème", "status": "active", "balance": 7},
]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("data")
    files = {
        "vendors": VENDORS,
        "clock": {"now": "2026-09-14T09:00:00Z"},
        "auditLog": [],
        "sequences": {"VEN": 3, "AUD": 0},
    }
    for name, value in files.items():
        (data / f"{name}.json").write_text(json.dumps(value))
    return data


@world.define_tool(
    "block_vendor",
    "Block a vendor.",
    {
        "vendorId": world.string("The vendor."),
        "actorId": world.string("Who does it."),
        "reason": world.string("Why."),
    },
    required=["vendorId", "actorId", "reason"],
)
def block_vendor(state: Any, input: dict[str, Any]) -> Any:
    vendor = world.require_record(state, "vendors", input["vendorId"])
    world.require_status(vendor, "vendors", ["active"], "block")
    change = {"field": "status", "from": vendor["status"], "to": "blocked"}
    vendor["status"] = "blocked"
    entry = world.audit(
        state, input["actorId"], "block_vendor", "vendor", vendor["id"], input["reason"], [change]
    )
    return {"vendor": vendor, "auditEntryId": entry}


@silo.verifier(id="VER-001", task_id="TASK-001")
def blocked_acme(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    return [
        silo.check("Acme is blocked", final["vendors"]["VEN-001"]["status"] == "blocked"),
        silo.check(
            "nothing else changed", world.changed_ids(final, initial, "vendors") == ["VEN-001"]
        ),
        silo.check("the answer names it", world.mentions_id(ctx.agent_output, "VEN-001")),
    ]


@silo.verifier(id="VER-002", task_id="TASK-002")
def balance_answer(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    return [
        silo.check("world untouched", world.unchanged(final, initial)),
        silo.check("states 127.5", 127.5 in world.numbers_in(ctx.agent_output)),
    ]


def make_env(data_dir: Path) -> silo.Environment:
    seed = world.Seed(data_dir)
    tools = [
        world.get_tool("get_vendor", "One vendor.", "vendors", "vendorId", "VEN-001"),
        world.list_tool(
            "list_vendors",
            "Vendors in id order.",
            "vendors",
            filters={"status": world.enum("Only this status.", ["active", "blocked"])},
        ),
        world.search_tool("search_vendors", "Find vendors by name.", "vendors", ["name"]),
        block_vendor,
        world.get_current_time,
        world.advance_clock,
        world.list_audit_entries,
    ]
    tasks = [
        silo.Task("TASK-001", "Block Acme", "Block Acme Tools (USR-001): fraud.", "VER-001"),
        silo.Task("TASK-002", "Balance", "What do active vendors owe in all?", "VER-002"),
    ]
    return silo.Environment(
        name="vendors",
        create_state=seed.clone,
        tools=tools,
        verifiers=[blocked_acme, balance_answer],
        tasks=tasks,
    )


SOLVE_1 = ScriptedAgent(
    [
        ("search_vendors", {"query": "acme"}),
        ("block_vendor", {"vendorId": "VEN-001", "actorId": "USR-001", "reason": "fraud"}),
    ],
    answer="Blocked VEN-001.",
)


async def outputs(env: silo.Environment, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    got: list[Any] = []

    def keep(index: int, call: Any, result: silo.ToolResult) -> None:
        got.append(result.output)

    await silo.run(env, "TASK-002", ScriptedAgent(list(calls), on_result=keep))
    return got


# --- the toolkit's parts ------------------------------------------------------------------


def test_section11_the_toolkit_holds_what_every_world_needs() -> None:
    parts = {
        "schema builders": ["string", "enum", "integer", "date", "money", "closed_object"],
        "input readers": ["read_string", "read_int", "read_number", "read_money", "read_date"],
        "paging": ["paginate", "PAGING"],
        "record lookups": ["require_record", "not_found"],
        "ids": ["format_id", "next_id"],
        "clock and its tools": ["now", "today", "get_current_time", "advance_clock"],
        "audit log and its tools": ["audit", "list_audit_entries"],
        "seeding": ["Seed"],
        "money and rounding": ["round_half_up", "to_money"],
        "answer parsing": ["numbers_in", "mentions", "mentions_id", "changed_ids", "unchanged"],
    }
    # The toolkit: the top level's names and its namespaces' (world.fields, world.schema...).
    namespaces = [getattr(world, n) for n in world.__all__ if n.islower() and n.isalpha()]
    toolkit = set(world.__all__).union(*(getattr(ns, "__all__", ()) for ns in namespaces))
    for part, names in parts.items():
        missing = [n for n in names if n not in toolkit or not hasattr(world, n)]
        assert not missing, (part, missing)
    for name in ("get_current_time", "advance_clock", "list_audit_entries"):
        assert isinstance(getattr(world, name), silo.Tool)


def test_section11_testing_holds_the_three_named_helpers() -> None:
    for name in ("ScriptedAgent", "ScriptedModelServer", "check_environment"):
        assert hasattr(silo_async.testing, name), name


async def test_section11_a_world_built_on_the_toolkit_is_solved_by_a_scripted_agent(
    anyio_backend: str, data_dir: Path
) -> None:
    env = make_env(data_dir)
    result = await silo.run(env, "TASK-001", SOLVE_1)
    assert result.passed and result.reward == 1.0, result.checks
    idle = await silo.run(env, "TASK-001", ScriptedAgent([], answer="nothing"))
    assert not idle.passed


async def test_section11_record_lookups_raise_not_found_with_collection_and_id(
    anyio_backend: str, data_dir: Path
) -> None:
    (missing,) = await outputs(make_env(data_dir), ("get_vendor", {"vendorId": "VEN-999"}))
    assert missing["code"] == "not_found"
    assert missing["details"] == {"collection": "vendors", "id": "VEN-999"}
    assert "VEN-999" in missing["message"]
    error = world.not_found("vendors", "VEN-123")
    assert isinstance(error, silo.ToolError) and error.code == "not_found"


async def test_section11_paging(anyio_backend: str, data_dir: Path) -> None:
    page, active, bad = await outputs(
        make_env(data_dir),
        ("list_vendors", {"limit": 1, "offset": 1}),
        ("list_vendors", {"status": "active"}),
        ("list_vendors", {"limit": 0}),
    )
    assert (page["total"], page["count"], page["offset"]) == (3, 1, 1)
    assert [r["id"] for r in page["results"]] == ["VEN-002"]
    assert [r["id"] for r in active["results"]] == ["VEN-001", "VEN-003"]
    assert bad["code"] == "invalid_input"


def test_section11_paginate_applies_the_view_to_the_page_only() -> None:
    seen: list[int] = []

    def view(n: int) -> int:
        seen.append(n)
        return n * 10

    page = world.paginate(list(range(100)), {"limit": 3, "offset": 5}, view)
    assert page == {"total": 100, "count": 3, "offset": 5, "results": [50, 60, 70]}
    assert seen == [5, 6, 7]


async def test_section11_input_readers_raise_invalid_input(anyio_backend: str) -> None:
    with pytest.raises(silo.ToolError) as caught:
        world.read_int({"quantity": 2.5}, "quantity")
    assert caught.value.code == "invalid_input" and "quantity" in caught.value.message
    with pytest.raises(silo.ToolError) as missing:
        world.read_string({}, "name")
    assert missing.value.code == "invalid_input" and "name" in missing.value.message
    assert world.read_int({}, "limit", 7) == 7


def test_section11_ids() -> None:
    assert world.format_id("VEN", 7) == "VEN-007"
    state: dict[str, Any] = {"sequences": {"VEN": 3}}
    assert world.next_id(state, "VEN") == "VEN-004" and world.next_id(state, "VEN") == "VEN-005"


async def test_section11_the_simulated_clock_and_its_tools(
    anyio_backend: str, data_dir: Path
) -> None:
    env = make_env(data_dir)
    before, moved, after = await outputs(
        env, ("get_current_time", {}), ("advance_clock", {"days": 2}), ("get_current_time", {})
    )
    assert before["now"] == "2026-09-14T09:00:00Z" and not moved.get("code")
    assert after["now"] == "2026-09-16T09:00:00Z"
    # Nothing reads the wall clock: a later rollout starts from the same time.
    assert (await outputs(env, ("get_current_time", {})))[0] == before


async def test_section11_the_audit_log_and_its_tools(anyio_backend: str, data_dir: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("block_vendor", {"vendorId": "VEN-001", "actorId": "USR-001", "reason": "fraud"}),
        ("advance_clock", {"days": 1, "reason": "wait"}),
        ("block_vendor", {"vendorId": "VEN-003", "actorId": "USR-002", "reason": "late"}),
        ("list_audit_entries", {}),
        ("block_vendor", {"vendorId": "VEN-002", "actorId": "USR-001", "reason": "again"}),
    ]
    *_, listed, refused = await outputs(make_env(data_dir), *calls)
    blocks = [e for e in listed["results"] if e["action"] == "block_vendor"]
    assert [e["entityId"] for e in blocks] == ["VEN-001", "VEN-003"]  # oldest first
    assert blocks[0]["actorId"] == "USR-001" and blocks[0]["at"] == "2026-09-14T09:00:00Z"
    assert blocks[1]["at"] == "2026-09-15T09:00:00Z"  # stamped with the simulated clock
    assert blocks[0]["changes"] == [{"field": "status", "from": "active", "to": "blocked"}]
    assert refused["code"] == "invalid_state" and "blocked" in refused["message"]


async def test_section11_seeding_is_parsed_once_and_cloned_per_rollout(
    anyio_backend: str, tmp_path: Path
) -> None:
    (tmp_path / "vendors.json").write_text(json.dumps(VENDORS))
    seed = world.Seed(tmp_path)
    first = seed.clone()
    assert first["vendors"]["VEN-001"]["name"] == "Acme Tools"  # a list became a map by id
    first["vendors"]["VEN-001"]["name"] = "changed"
    (tmp_path / "vendors.json").write_text("not json any more")
    second = seed.clone()  # parsed once: the file is not read again
    assert second["vendors"]["VEN-001"]["name"] == "Acme Tools"
    assert second is not first and second["vendors"] is not first["vendors"]


async def test_section11_rollouts_of_a_seeded_world_never_share_state(
    anyio_backend: str, data_dir: Path
) -> None:
    env = make_env(data_dir)
    results = await silo.run_many(env, ["TASK-001"], SOLVE_1, runs=3)
    assert all(r.passed for r in results)  # each blocked VEN-001 on a fresh world


def test_section11_money_and_one_round_half_up() -> None:
    assert world.round_half_up(2.5, 0) == 3 and world.round_half_up(0.125) == 0.13
    assert world.round_half_up(1.005) == 1.01 and world.round_half_up(-2.5, 0) == -3
    assert world.to_money(10.0 / 3) == 3.33


def test_section11_answer_parsing_for_verifiers() -> None:
    assert 48000 in world.numbers_in("A $48,000 deal, closing 2026-12-15.")
    assert world.mentions("Blocked CAFÉ crème today", "café crème")
    assert world.mentions_id("Done: VEN-001.", "VEN-001")
    assert not world.mentions_id("Done: VEN-0012.", "VEN-001")
    initial = {"vendors": {"A": {"x": 1}, "B": {"x": 2}}}
    final = {"vendors": {"A": {"x": 1}, "B": {"x": 3}}}
    assert world.changed_ids(final, initial, "vendors") == ["B"]
    assert world.unchanged(initial, json.loads(json.dumps(initial)))
    assert not world.unchanged(final, initial)


async def test_section11_answer_parsing_grades_an_answer(
    anyio_backend: str, data_dir: Path
) -> None:
    agent = ScriptedAgent([("list_vendors", {"status": "active"})], answer="They owe $127.50.")
    result = await silo.run(make_env(data_dir), "TASK-002", agent)
    assert result.passed, result.checks


# --- silo_async.testing -------------------------------------------------------------------


async def test_section11_scripted_agent_is_a_list_of_calls_and_an_answer(
    anyio_backend: str, data_dir: Path
) -> None:
    result = await silo.run(make_env(data_dir), "TASK-001", SOLVE_1)
    calls = [(e["tool"], e["input"]) for e in result.trace if e["type"] == "tool_call"]
    assert calls == [(c.tool, c.input) for c in SOLVE_1.calls]
    assert result.agent_output == "Blocked VEN-001."


async def test_section11_check_environment_passes_a_sound_world(
    anyio_backend: str, data_dir: Path
) -> None:
    env = make_env(data_dir)
    report = await check_environment(env)
    assert report.ok, report.to_dict()


async def test_section11_check_environment_flags_a_task_the_no_op_passes(
    anyio_backend: str, data_dir: Path
) -> None:
    @silo.verifier(id="VER-FREE", task_id="TASK-FREE")
    def free(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
        return [silo.check("always", True)]

    base = make_env(data_dir)
    env = silo.Environment(
        name="lenient",
        create_state=base.create_state,
        tools=list(base.tools),
        verifiers=[*base.verifiers, free],
        tasks=[*base.tasks, silo.Task("TASK-FREE", "Free", "Anything.", "VER-FREE")],
    )
    report = await check_environment(env)
    assert not report.ok
    assert any("TASK-FREE" in json.dumps(f.to_dict()) for f in report.errors)


async def test_section11_check_environment_runs_a_solver(
    anyio_backend: str, data_dir: Path
) -> None:
    env = make_env(data_dir)
    failing = await check_environment(env, solver=SOLVE_1)  # solves TASK-001 only
    assert not failing.ok
    assert any("TASK-002" in json.dumps(f.to_dict()) for f in failing.errors)


def test_section11_check_environment_gives_env_validates_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["init", "sales", "--template", "crm"]).exit_code == 0
    shown = runner.invoke(app, ["env", "validate", "--env", "sales", "--json"])
    assert shown.exit_code == 0, shown.output
    cli_report = json.loads(shown.stdout)
    env = silo.load_environment("sales", cwd=tmp_path)
    report = anyio.run(check_environment, env)
    got = report.to_dict()
    assert (got["ok"], got["findings"], got["environment"]) == (
        cli_report["ok"],
        cli_report["findings"],
        cli_report["environment"],
    )


# --- templates keep only their domain -----------------------------------------------------

TEMPLATES = Path(silo.__file__).parent / "templates"


@pytest.mark.parametrize("template", ["crm", "project", "erp", "support"])
def test_section11_templates_keep_only_their_domain(template: str) -> None:
    root = TEMPLATES / template
    plumbing = set(world.__all__)
    copies = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in plumbing:
                copies.append(f"{path.relative_to(TEMPLATES)}: def {node.name}")
    assert copies == []
    for name in ("contract.py", "audit.py", "clock.py"):
        assert not list(root.rglob(name)), name
    assert any("silo_async.world" in p.read_text() for p in root.rglob("*.py"))
