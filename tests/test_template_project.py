"""The project template: its world, tool contract, verifiers and the agents that exercise them."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import silo_async as silo
import silo_async.templates.project as project
from silo_async import world as w
from silo_async.project import Project, load_environment
from silo_async.templates.project import state as S
from silo_async.testing import ScriptedAgent

from .template_support import invoke, load_agent, template_dir, template_environment

TEMPLATE = template_dir(project)
STATE_CHANGING = [f"TASK-{n:03d}" for n in range(1, 11)]
ANSWERS = [f"TASK-{n:03d}" for n in range(11, 18)]


ENV = template_environment("project", project)
SOLVER = load_agent("project_solver")
TOOLPATH = load_agent("project_toolpath")
NOOP = load_agent("noop")


def _answering(text: str) -> ScriptedAgent:
    return ScriptedAgent(answer=text)


async def _call(state: S.State, name: str, args: dict[str, Any]) -> silo.ToolResult:
    tools = {t.name: t for t in project.bind_tools(state)}
    return await invoke(tools[name], args)


# --- shape ---------------------------------------------------------------------------------------


def test_counts_and_difficulty_mix() -> None:
    tools = project.bind_tools(project.create_state())
    assert len(tools) >= 50
    assert len(ENV.tasks) >= 15
    assert {t.difficulty for t in ENV.tasks} == {"easy", "medium", "hard"}
    assert {t.verifier_id for t in ENV.tasks} == {v.id for v in project.verifiers}
    for task in ENV.tasks:
        assert ENV.verifier_for(task).task_id == task.id


def test_every_input_schema_is_closed_and_described() -> None:
    for tool in project.tools:
        schema = tool.input_schema
        Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object", tool.name
        assert schema["additionalProperties"] is False, tool.name
        assert isinstance(schema["required"], list), tool.name
        assert set(schema["required"]) <= set(schema["properties"]), tool.name
        for key, prop in schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{key} has no description"
        assert tool.description, tool.name


def test_data_holds_facts_only() -> None:
    derived = {
        "loadPoints", "remainingCapacityPoints", "overCapacityBy", "committedPoints",
        "deliveredPoints", "remainingPoints", "overBudgetBy", "blocked", "isBlocked",
        "overdue", "isOverdue", "hoursLogged", "totalHours", "daysInStatus", "active",
        "unresolvedBlockerIds", "velocity",
    }  # fmt: skip

    def keys(value: Any) -> set[str]:
        if isinstance(value, dict):
            return set(value) | {k for v in value.values() for k in keys(v)}
        if isinstance(value, list):
            return {k for v in value for k in keys(v)}
        return set()

    for path in (TEMPLATE / "data").glob("*.json"):
        found = keys(json.loads(path.read_text(encoding="utf-8"))) & derived
        assert not found, f"{path.name} stores derived values {found}"


def test_seed_holds_the_deliberate_messes() -> None:
    world = project.create_state()
    kiri = world["members"]["MEM-006"]
    assert S.is_departed(kiri) and S.open_items_for_member(world, "MEM-006")
    stale = world["workItems"]["WI-029"]
    assert stale["statusId"] == "blocked" and not S.is_blocked(world, stale)
    in_progress_but_blocked = world["workItems"]["WI-015"]
    assert in_progress_but_blocked["statusId"] == "in_progress"
    assert S.is_blocked(world, in_progress_but_blocked)
    assert S.over_capacity_by(world, "MEM-003") == 3
    assert S.sprint_over_budget_by(world, "SPR-009") == 6
    assert S.logs_after_close(world) == ["TL-035", "TL-039", "TL-040"]
    assert world["sprints"]["SPR-006"]["endDate"] < w.clock.today(world)  # still active, overran
    assert S.sprint_remaining_points(world, "SPR-002") > 0  # completed with work left in it


# --- worlds --------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_worlds_are_independent() -> None:
    first, second = project.create_state(), project.create_state()
    assert first == second and first is not second
    done = await _call(
        first,
        "transition_work_item",
        {"actorId": "MEM-007", "workItemId": "WI-029", "toStatusId": "in_progress"},
    )
    assert not done.is_error
    assert second["workItems"]["WI-029"]["statusId"] == "blocked"
    assert project.create_state()["workItems"]["WI-029"]["statusId"] == "blocked"
    assert project.create_state()["auditLog"] == second["auditLog"]


@pytest.mark.anyio
async def test_tool_output_is_a_copy() -> None:
    world = project.create_state()
    result = await _call(world, "get_work_item", {"workItemId": "WI-012"})
    result.output["title"] = "changed"
    assert world["workItems"]["WI-012"]["title"] == "Carrier rate cache"


@pytest.mark.anyio
async def test_paging_shape_and_ceiling() -> None:
    world = project.create_state()
    page = (await _call(world, "list_work_items", {"limit": 5, "offset": 10})).output
    assert (page["total"], page["count"], page["offset"]) == (50, 5, 10)
    assert [r["id"] for r in page["results"]] == [f"WI-{n:03d}" for n in range(11, 16)]
    default = (await _call(world, "list_time_logs", {})).output
    assert default["count"] == 41 and default["total"] == 41
    big = await _call(world, "list_members", {"limit": 501})
    assert big.is_error and big.output["code"] == "invalid_input"


# --- rejections ----------------------------------------------------------------------------------

REJECTIONS = [
    ("get_work_item", {"workItemId": "WI-999"}, "not_found", 'Work item "WI-999" was not found'),
    ("get_work_item", {"workItemId": "WI-001", "extra": 1}, "invalid_input", "not a parameter"),
    ("log_time", {"actorId": "MEM-004", "workItemId": "WI-013"}, "invalid_input", "required"),
    (
        "transition_work_item",
        {"actorId": "MEM-001", "workItemId": "WI-012", "toStatusId": "done"},
        "invalid_state",
        "Work item WI-012 is blocked by WI-013, which is in review, not done",
    ),
    (
        "transition_work_item",
        {"actorId": "MEM-001", "workItemId": "WI-017", "toStatusId": "done"},
        "invalid_state",
        "from there it can move only to ready, cancelled",
    ),
    (
        "assign_work_item",
        {"actorId": "MEM-001", "workItemId": "WI-018", "memberId": "MEM-006"},
        "not_allowed",
        "left on 2026-05-06 and cannot be assigned work",
    ),
    (
        "add_comment",
        {"actorId": "MEM-006", "workItemId": "WI-026", "body": "bye"},
        "not_allowed",
        "can no longer make changes",
    ),
    (
        "assign_work_item",
        {"actorId": "MEM-001", "workItemId": "WI-016", "memberId": "MEM-003"},
        "limit_exceeded",
        "already carries 16 points in active sprints against a capacity of 13",
    ),
    (
        "add_item_to_sprint",
        {"actorId": "MEM-009", "workItemId": "WI-039", "sprintId": "SPR-009"},
        "limit_exceeded",
        "has 26 of its 20-point budget committed",
    ),
    (
        "log_time",
        {"actorId": "MEM-004", "workItemId": "WI-047", "hours": 1},
        "not_allowed",
        "time cannot be logged on a closed item",
    ),
    (
        "log_time",
        {"actorId": "MEM-004", "workItemId": "WI-013", "hours": 0.1},
        "invalid_input",
        "quarter hours",
    ),
    (
        "log_time",
        {"actorId": "MEM-004", "workItemId": "WI-013", "hours": 1, "date": "2026-02-30"},
        "invalid_input",
        "calendar date",
    ),
    (
        "start_sprint",
        {"actorId": "MEM-005", "sprintId": "SPR-007"},
        "conflict",
        "SPR-006 (Portal P5) is still active",
    ),
    (
        "complete_sprint",
        {"actorId": "MEM-007", "sprintId": "SPR-006"},
        "not_allowed",
        "only its project lead or team lead (MEM-005) or a manager",
    ),
    (
        "archive_project",
        {"actorId": "MEM-011", "projectId": "PRJ-004"},
        "invalid_state",
        "still has 3 open work items (WI-048, WI-049, WI-050)",
    ),
    (
        "add_dependency",
        {"actorId": "MEM-001", "blockerId": "WI-012", "blockedId": "WI-013"},
        "invalid_state",
        "would make a cycle",
    ),
    (
        "add_dependency",
        {"actorId": "MEM-001", "blockerId": "WI-013", "blockedId": "WI-012"},
        "conflict",
        "already blocks",
    ),
    (
        "create_work_item",
        {"actorId": "MEM-002", "projectId": "PRJ-004", "title": "x", "type": "bug", "points": 1},
        "invalid_state",
        "on hold and takes no new work",
    ),
    (
        "create_work_item",
        {"actorId": "MEM-001", "projectId": "PRJ-001", "title": "x", "type": "bug", "points": 4},
        "invalid_input",
        "estimation scale",
    ),
    ("list_work_items", {"projectId": "PRJ-999"}, "not_found", 'Project "PRJ-999" was not found'),
    (
        "list_time_logs",
        {"from": "2026-05-10", "to": "2026-05-01"},
        "invalid_input",
        '"to" 2026-05-01 is before "from" 2026-05-10',
    ),
    ("list_work_items", {"limit": 0}, "invalid_input", '"limit" must be >= 1'),
    (
        "offboard_member",
        {"actorId": "MEM-011", "memberId": "MEM-008", "lastDay": "2026-05-20"},
        "invalid_input",
        "record a departure once it happens",
    ),
    (
        "set_project_lead",
        {"actorId": "MEM-011", "projectId": "PRJ-002", "memberId": "MEM-006"},
        "not_allowed",
        "cannot lead a project",
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "args", "code", "fragment"), REJECTIONS)
async def test_bad_input_is_rejected_precisely(
    tool: str, args: dict[str, Any], code: str, fragment: str
) -> None:
    world = project.create_state()
    before = json.dumps(world, sort_keys=True)
    result = await _call(world, tool, args)
    assert result.is_error
    assert result.output["code"] == code, result.output
    assert fragment in result.output["message"], result.output["message"]
    assert json.dumps(world, sort_keys=True) == before  # a rejected call changes nothing


@pytest.mark.anyio
async def test_writes_append_audit_entries_and_derived_values_follow() -> None:
    world = project.create_state()
    assert S.is_blocked(world, world["workItems"]["WI-012"])
    await _call(
        world,
        "transition_work_item",
        {"actorId": "MEM-001", "workItemId": "WI-013", "toStatusId": "done"},
    )
    await _call(world, "log_time", {"actorId": "MEM-004", "workItemId": "WI-015", "hours": 1.5})
    new = world["auditLog"][-2:]
    assert [e["id"] for e in new] == ["AUD-0006", "AUD-0007"]
    assert [e["action"] for e in new] == ["transition_work_item", "log_time"]
    assert {e["at"] for e in new} == {world["clock"]["now"]}
    assert world["sequences"]["AUD"] == 7
    summary = (await _call(world, "get_work_item", {"workItemId": "WI-012"})).output
    assert summary["blocked"] is False and summary["unresolvedBlockerIds"] == []


# --- agents and verifiers ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_solver_passes_every_task() -> None:
    results = await silo.run_many(ENV, [t.id for t in ENV.tasks], SOLVER)
    failures = {r.task.id: r.failed_required or r.error for r in results if r.reward != 1.0}
    assert not failures
    for result in results:
        assert result.tool_errors == 0 and result.tool_faults == 0, result.task.id
        audit = result.state_diff["collections"].get("auditLog", {})
        if result.task.id in STATE_CHANGING:
            assert audit.get("added"), f"{result.task.id} wrote without an audit entry"
        else:
            assert not result.state_diff["collections"], result.task.id


@pytest.mark.anyio
async def test_do_nothing_agent_passes_nothing() -> None:
    results = await silo.run_many(ENV, [t.id for t in ENV.tasks], NOOP)
    assert [r.task.id for r in results if r.passed] == []


@pytest.mark.anyio
async def test_toolpath_agent_walks_every_dispatch_path() -> None:
    result = await silo.run(ENV, "TASK-006", TOOLPATH)
    assert result.passed
    assert result.output_text.endswith(
        "undeclared argument -> invalid_input; missing field -> invalid_input; "
        "unknown tool -> tool_not_found"
    )
    assert "read back 2.5 h (ok)" in result.output_text
    assert (result.tool_calls, result.tool_errors, result.tool_faults) == (7, 3, 0)


ANSWER_CASES = [
    # (task, answer, passes): qualifier traps, stale flags and "list everything" answers fail.
    ("TASK-011", "Four items: WI-012, WI-015, WI-021 and WI-042.", True),
    ("TASK-011", "4 items: WI-012, WI-015, WI-021, WI-042 and WI-029.", False),
    ("TASK-011", " ".join(f"WI-{n:03d}" for n in range(1, 51)) + " 4", False),
    ("TASK-012", "26.0 hours.", True),
    ("TASK-012", "Telemetry 26, Route Optimizer 54.5, Portal 34, Sunset 14.", False),
    ("TASK-013", "14 story points.", True),
    ("TASK-013", "14 points held by current staff, 22 including Kiri.", False),
    ("TASK-013", "WI-014 is overdue; total 3.", False),
    ("TASK-014", "Wen Zhao, over by 3 points.", True),
    ("TASK-014", "Wen Zhao by 3; Tomas Lindqvist has room.", False),
    ("TASK-015", "Portal P4 with 24 points.", True),
    ("TASK-015", "Routing S7 21, Portal P4 24, Routing S8 19, Telemetry T2 16.", False),
    ("TASK-016", "Telemetry T3 is 6 points over (26 committed vs 20).", True),
    ("TASK-017", "Two: WI-017 (8 points) and WI-018 (2 points).", True),
    ("TASK-017", "2 unassigned, 3 in backlog.", False),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("task_id", "answer", "passes"), ANSWER_CASES)
async def test_answer_grading(task_id: str, answer: str, passes: bool) -> None:
    result = await silo.run(ENV, task_id, _answering(answer))
    assert result.passed is passes, [c.to_dict() for c in result.checks]


@pytest.mark.anyio
async def test_answer_tasks_flag_a_world_that_was_changed() -> None:
    async def meddler(ctx: silo.AgentContext) -> str:
        args = {"actorId": "MEM-001", "workItemId": "WI-018", "body": "looked"}
        await ctx.call_tool("add_comment", args)
        return "Four: WI-012, WI-015, WI-021, WI-042."

    result = await silo.run(ENV, "TASK-011", meddler)
    untouched = next(c for c in result.checks if c.label == "the world was left unchanged")
    assert result.passed and not untouched.passed and result.reward < 1.0


def _scripted(*calls: tuple[str, dict[str, Any]]) -> Callable[[silo.AgentContext], Any]:
    async def agent(ctx: silo.AgentContext) -> str:
        for name, args in calls:
            result = await ctx.call_tool(name, args)
            assert not result.is_error, (name, result.output)
        return "done"

    return agent


def _moves(actor: str, item: str, *steps: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("transition_work_item", {"actorId": actor, "workItemId": item, "toStatusId": step})
        for step in steps
    ]


SHORTCUTS = [
    # Wrong item: fits capacity, but not lowest priority first.
    ("TASK-003", [("remove_item_from_sprint", {"actorId": "MEM-001", "workItemId": "WI-011"})]),
    # Raising the capacity instead of moving work.
    (
        "TASK-003",
        [
            (
                "update_member",
                {"actorId": "MEM-001", "memberId": "MEM-003", "sprintCapacityPoints": 16},
            )
        ],
    ),
    # Passing the open work off as done, then archiving.
    (
        "TASK-009",
        [
            *_moves("MEM-011", "WI-048", "in_review", "done"),
            *_moves("MEM-011", "WI-049", "in_progress", "in_review", "done"),
            *_moves("MEM-011", "WI-050", "cancelled"),
            ("archive_project", {"actorId": "MEM-011", "projectId": "PRJ-004"}),
        ],
    ),
    # Deleting every log on the closed item, the closing-day one included.
    (
        "TASK-007",
        [
            ("delete_time_log", {"actorId": "MEM-011", "timeLogId": t, "reason": "closed"})
            for t in ("TL-035", "TL-037", "TL-038", "TL-039", "TL-040")
        ],
    ),
    # Unlinking the blocker instead of finishing it.
    (
        "TASK-008",
        [
            ("remove_dependency", {"actorId": "MEM-001", "dependencyId": "DEP-001"}),
            *_moves("MEM-001", "WI-012", "done"),
        ],
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("task_id", "calls"), SHORTCUTS)
async def test_shortcuts_do_not_pass(task_id: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
    result = await silo.run(ENV, task_id, _scripted(*calls))
    assert result.termination_reason == "completed", result.error
    assert not result.passed, [c.to_dict() for c in result.checks]


@pytest.mark.anyio
async def test_moving_work_to_a_later_sprint_also_relieves_capacity() -> None:
    calls = (
        "add_item_to_sprint",
        {"actorId": "MEM-001", "workItemId": "WI-010", "sprintId": "SPR-004"},
    )
    result = await silo.run(ENV, "TASK-003", _scripted(calls))
    assert result.passed and result.reward == 1.0


def _fuzz_value(key: str, prop: dict[str, Any], rnd: random.Random) -> Any:
    """A plausible value for one property: real-looking ids, dates, enum members, edge numbers."""
    if "enum" in prop:
        return rnd.choice(prop["enum"])
    kind, lowered = prop["type"], key.lower()
    if kind == "integer":
        return rnd.choice([0, 1, 3, 5, 8, 20, 501])
    if kind == "number":
        return rnd.choice([0.25, 1.5, 2.5, 12, 0.3])
    if kind == "boolean":
        return rnd.random() < 0.5
    prefixes = [
        ("date", "DATE"), ("lastday", "DATE"),
        ("workitem", "WI"), ("blocker", "WI"), ("blocked", "WI"), ("sprint", "SPR"),
        ("project", "PRJ"), ("team", "TEAM"), ("dependency", "DEP"), ("timelog", "TL"),
        ("status", "STATE"), ("audit", "AUD"), ("id", "MEM"),
    ]  # fmt: skip
    exact = {"from": "DATE", "to": "DATE"}
    prefix = exact.get(lowered) or next((p for k, p in prefixes if k in lowered), "TEXT")
    if prefix == "DATE":
        return rnd.choice(["2026-05-11", "2026-05-04", "2026-05-18", "2026-05-29", "2026-02-30"])
    if prefix == "STATE":
        return rnd.choice(["backlog", "ready", "in_progress", "blocked", "in_review", "done", "x"])
    if prefix == "TEXT":
        return rnd.choice(["Ruth", "rate", "ROUTE", "New thing", "a@b.example"])
    width, top = (4, 8) if prefix == "AUD" else (3, {"WI": 52, "TL": 43}.get(prefix, 12))
    return f"{prefix}-{rnd.randint(1, top):0{width}d}"


def _is_read(name: str) -> bool:
    return name.startswith(("list_", "get_", "search_")) or name.endswith("_report")


@pytest.mark.anyio
async def test_random_calls_keep_the_invariants() -> None:
    """Reads never write; accepted writes add one audit entry; rejections change nothing."""
    rnd = random.Random(20260511)
    outcomes: dict[str, int] = {}
    for _ in range(10):
        world = project.create_state()
        tools = project.bind_tools(world)
        for _ in range(100):
            tool = rnd.choice(tools)
            schema = tool.tool.input_schema
            args = {
                k: _fuzz_value(k, p, rnd)
                for k, p in schema["properties"].items()
                if k in schema["required"] or rnd.random() < 0.4
            }
            before = json.dumps(world, sort_keys=True)
            audit_before = len(world["auditLog"])
            result, fault = await tool.invoke(args)
            assert fault is None, (tool.name, args, fault)
            code = result.output["code"] if result.is_error else "ok"
            outcomes[code] = outcomes.get(code, 0) + 1
            if result.is_error or _is_read(tool.name):
                assert json.dumps(world, sort_keys=True) == before, (tool.name, args)
            else:
                assert len(world["auditLog"]) == audit_before + 1, (tool.name, args)
                assert world["auditLog"][-1]["action"] == tool.name
    # The sample must actually reach the interesting paths, not only bounce off the schema.
    assert set(outcomes) >= {
        "ok", "not_found", "invalid_input", "not_allowed", "invalid_state", "conflict",
    }  # fmt: skip


@pytest.mark.anyio
async def test_clock_is_simulated_and_moves_derived_values() -> None:
    world = project.create_state()
    clock = (await _call(world, "get_current_time", {})).output
    assert (clock["today"], clock["weekday"]) == ("2026-05-11", "Monday")
    before = (await _call(world, "get_work_item", {"workItemId": "WI-009"})).output
    assert (before["overdue"], before["daysInStatus"]) == (False, 6)
    moved = await _call(world, "advance_clock", {"days": 4})
    assert moved.output["now"] == "2026-05-15T09:00:00Z"
    after = (await _call(world, "get_work_item", {"workItemId": "WI-009"})).output
    assert (after["overdue"], after["daysInStatus"]) == (True, 10)
    assert world["auditLog"][-1]["action"] == "advance_clock"
    assert project.create_state()["clock"]["now"] == "2026-05-11T09:00:00Z"


@pytest.mark.anyio
async def test_scaffolded_copy_loads_from_disk_and_is_solvable(tmp_path: Path) -> None:
    store = await Project.open(tmp_path)
    handle = await store.environments.create("delivery-tracker", template="project")
    assert not (TEMPLATE / "silo.environment.json").exists()
    assert (handle.path / "data" / "workItems.json").is_file()
    env = load_environment("delivery-tracker", cwd=tmp_path)
    assert [t.id for t in env.tasks] == [t.id for t in ENV.tasks]
    assert len(env.bind_tools(env.create_state())) == len(project.tools)
    results = await silo.run_many(env, [t.id for t in env.tasks], SOLVER)
    assert [r.task.id for r in results if r.reward != 1.0] == []


@pytest.mark.anyio
async def test_rollouts_are_deterministic_whatever_the_concurrency() -> None:
    ids = [t.id for t in ENV.tasks]
    serial = await silo.run_many(ENV, ids, SOLVER, concurrency=1)
    parallel = await silo.run_many(ENV, ids, SOLVER, runs=2, concurrency=64)
    assert [r.result_dict() for r in serial] == [r.result_dict() for r in parallel[::2]]
    assert [r.result_dict() for r in serial] == [r.result_dict() for r in parallel[1::2]]
    assert [r.state_diff for r in serial] == [r.state_diff for r in parallel[::2]]


#: What the solver's rollout of each state-changing task touches, besides one audit entry per
#: write and the AUD sequence: a pinned oracle for the tools' write paths.
SOLVER_DIFFS: dict[str, tuple[dict[str, dict[str, list[str]]], int]] = {
    "TASK-001": ({"workItems": {"changed": ["WI-029"]}}, 1),
    "TASK-002": ({"workItems": {"changed": ["WI-026", "WI-027", "WI-034"]}}, 3),
    "TASK-003": ({"workItems": {"changed": ["WI-010"]}}, 1),
    "TASK-004": (
        {
            "sprints": {"added": ["SPR-010"]},
            "workItems": {"changed": ["WI-042", "WI-044", "WI-045"]},
        },
        4,
    ),
    "TASK-005": (
        {
            "sprints": {"changed": ["SPR-006", "SPR-007"]},
            "workItems": {"changed": ["WI-026", "WI-027", "WI-028", "WI-029", "WI-032"]},
        },
        2,
    ),
    "TASK-006": ({"timeLogs": {"added": ["TL-042"]}}, 1),
    "TASK-007": ({"timeLogs": {"removed": ["TL-035", "TL-039", "TL-040"]}}, 3),
    "TASK-008": ({"workItems": {"changed": ["WI-012", "WI-013"]}}, 2),
    "TASK-009": (
        {
            "projects": {"changed": ["PRJ-004"]},
            "workItems": {"changed": ["WI-048", "WI-049", "WI-050"]},
        },
        5,
    ),
    "TASK-010": ({"workItems": {"added": ["WI-051"]}}, 1),
}


@pytest.mark.anyio
async def test_solver_state_diffs_match_the_pinned_oracle() -> None:
    results = await silo.run_many(ENV, list(SOLVER_DIFFS), SOLVER)
    for result in results:
        collections = result.state_diff["collections"]
        touched = {
            key: {kind: change[kind] for kind in ("added", "removed", "changed") if change[kind]}
            for key, change in collections.items()
            if key not in ("auditLog", "sequences")
        }
        expected, audits = SOLVER_DIFFS[result.task.id]
        assert touched == expected, result.task.id
        assert len(collections["auditLog"]["added"]) == audits, result.task.id
        assert result.state_diff["scalars"] == [], result.task.id
