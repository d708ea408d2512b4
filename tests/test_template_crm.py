"""The crm template: its contract, its seed, its tools' rules, and its three gates.

Gates: the scripted solver passes every task with reward 1.0 (every task is solvable with the
shipped tools), the no-op agent passes none (no verifier passes on the pristine seed), and the
tool-path agent exercises binding, schema validation, error mapping and dispatch in one rollout.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import silo_async as silo
import silo_async.templates.crm as crm
from silo_async import world as w
from silo_async.project import Project, load_environment
from silo_async.templates.crm import environment as crm_environment
from silo_async.templates.crm import state as S

from .template_support import TemplateWorld, load_agent, template_dir, template_environment

TEMPLATE = template_dir(crm)
ENV = template_environment("crm", crm)
TASK_IDS = [t.id for t in ENV.tasks]


class World(TemplateWorld):
    """A fresh crm world with its tools, callable by name (no runner involved)."""

    state: S.State

    def __init__(self) -> None:
        super().__init__(crm)

    async def grade(self, task_id: str, output: str = "") -> silo.VerifierOutcome:
        task = ENV.task(task_id)
        ctx = silo.VerifierContext(agent_output=output, task=task, output=output)
        return await ENV.verifier_for(task).evaluate(self.state, self.initial, ctx)


# --- contract and registries -------------------------------------------------------------------


def test_scale_and_difficulty_mix() -> None:
    tools = crm.bind_tools(crm.create_state())
    assert len(tools) >= 40
    assert len(ENV.tasks) >= 8
    assert {t.difficulty for t in ENV.tasks} == {"easy", "medium", "hard"}


def test_every_input_schema_is_closed_and_described() -> None:
    for bound in crm.bind_tools(crm.create_state()):
        schema = bound.spec.input_schema
        Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object", bound.name
        assert schema["additionalProperties"] is False, bound.name
        assert isinstance(schema["required"], list), bound.name
        assert set(schema["required"]) <= set(schema["properties"]), bound.name
        for key, prop in schema["properties"].items():
            assert prop.get("description"), f"{bound.name}.{key} has no description"
        assert bound.spec.description, bound.name


WRITE_PREFIXES = (
    "create_", "update_", "reassign_", "close_", "merge_", "convert_", "qualify_", "disqualify_",
    "log_", "schedule_", "complete_", "reschedule_", "move_", "advance_opportunity",
)  # fmt: skip


def test_every_write_takes_an_actor_and_every_list_pages() -> None:
    writes = 0
    for bound in crm.bind_tools(crm.create_state()):
        schema = bound.spec.input_schema
        if bound.name.startswith(WRITE_PREFIXES):
            writes += 1
            assert "actorId" in schema["required"], bound.name
        if bound.name.startswith(("list_", "search_")) and bound.name != "list_stages":
            assert {"limit", "offset"} <= set(schema["properties"]), bound.name
    assert writes >= 20


def test_tasks_and_verifiers_pair_up() -> None:
    by_id = {v.id: v for v in crm.verifiers}
    for task in ENV.tasks:
        assert by_id[task.verifier_id].task_id == task.id
        data = json.loads((TEMPLATE / "tasks" / f"{task.id}.json").read_text(encoding="utf-8"))
        assert set(data) == {"id", "title", "instruction", "verifierId", "difficulty"}
    assert len(by_id) == len(ENV.tasks)


def test_template_has_no_environment_manifest() -> None:
    assert not (TEMPLATE / "silo.environment.json").exists()


# --- the world ---------------------------------------------------------------------------------


def test_create_state_returns_independent_worlds() -> None:
    first, second = crm.create_state(), crm.create_state()
    assert first == second
    first["opportunities"]["OPP-001"]["amount"] = 1
    first["auditLog"].append({"id": "AUD-9999"})  # type: ignore[typeddict-item]
    first["clock"]["now"] = "2030-01-01T00:00:00Z"
    third = crm.create_state()
    assert third == second
    assert third["opportunities"]["OPP-001"]["amount"] == 185000


def test_derived_values_are_not_stored_in_data() -> None:
    derived = {
        "weightedAmount",
        "daysInStage",
        "isStale",
        "isPastDue",
        "ageDays",
        "daysSinceContact",
        "quotaAttainmentPercent",
        "openPipelineAmount",
        "stageEnteredDate",
        "ownerName",
    }

    def keys(value: Any) -> set[str]:
        if isinstance(value, dict):
            return set(value) | {k for v in value.values() for k in keys(v)}
        if isinstance(value, list):
            return {k for v in value for k in keys(v)}
        return set()

    for path in sorted((TEMPLATE / "data").glob("*.json")):
        found = keys(json.loads(path.read_text(encoding="utf-8")))
        assert not found & derived, (path.name, found & derived)
        assert not [k for k in found if k.lower().startswith("total")], path.name
    # The current stage is derived from the stage history when the world is built.
    raw = json.loads((TEMPLATE / "data" / "opportunities.json").read_text(encoding="utf-8"))
    assert all("stageId" not in opp for opp in raw)
    world = crm.create_state()
    assert all(
        o["stageId"] == o["stageHistory"][-1]["stageId"] for o in world["opportunities"].values()
    )


def test_seed_contains_the_messes_tasks_depend_on() -> None:
    world = crm.create_state()
    departed = [u for u in world["users"].values() if not u["active"]]
    assert [u["id"] for u in departed] == ["USR-004"]
    assert S.open_opportunities(world, "USR-004")
    assert any(
        S.is_activity_open(a) and a["ownerId"] == "USR-004" for a in world["activities"].values()
    )
    assert S.stale_opportunities(world)
    assert S.past_due_opportunities(world)
    assert S.duplicate_contact_groups(world)
    assert any(lead["status"] == "converted" for lead in world["leads"].values())
    assert any(S.is_activity_overdue(world, a) for a in world["activities"].values())


def _broken_seed(tmp_path: Path, name: str, edit: Callable[[Any], None]) -> w.Seed:
    shutil.copytree(crm_environment.SEED.data_dir, tmp_path / "data")
    path = tmp_path / "data" / name
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    seed = crm_environment.SEED
    return w.Seed(tmp_path / "data", references=seed.references, build=seed.build)


def test_broken_seed_references_are_reported_with_the_record(tmp_path: Path) -> None:
    def dangling(opps: Any) -> None:
        opps[0]["accountId"] = "ACC-404"

    with pytest.raises(w.records.SeedError, match=r"OPP-001\.accountId names ACC-404"):
        _broken_seed(tmp_path / "a", "opportunities.json", dangling).clone()
    with pytest.raises(w.records.SeedError, match="OPP is 3"):
        _broken_seed(tmp_path / "b", "sequences.json", lambda s: s.update(OPP=3)).clone()


# --- tool rules --------------------------------------------------------------------------------

#: A follow-up call on an open deal that every rule allows: each rejection below changes it.
FOLLOW_UP = {
    "type": "call",
    "subject": "x",
    "relatedType": "opportunity",
    "relatedId": "OPP-001",
    "ownerId": "USR-002",
    "dueDate": "2026-09-20",
    "actorId": "USR-002",
}


def _token_conversion(lead_id: str, actor_id: str) -> dict[str, Any]:
    """convert_lead's input for a token deal: only the lead and who converts it vary."""
    return {"leadId": lead_id, "amount": 1, "expectedCloseDate": "2026-12-01", "actorId": actor_id}


REJECTIONS: list[tuple[str, dict[str, Any], str, str]] = [
    ("get_opportunity", {"opportunityId": "OPP-999"}, "not_found", 'Opportunity "OPP-999"'),
    ("get_opportunity", {"opportunityID": "OPP-001"}, "invalid_input", "not a parameter"),
    (
        "close_opportunity_won",
        {"opportunityId": "OPP-007", "actorId": "USR-005"},
        "invalid_state",
        "Opportunity OPP-007 is lost (closed 2026-05-14), not open.",
    ),
    (
        "reassign_opportunity",
        {"opportunityId": "OPP-005", "newOwnerId": "USR-005", "actorId": "USR-004"},
        "not_allowed",
        "deactivated",
    ),
    (
        "reassign_opportunity",
        {"opportunityId": "OPP-001", "newOwnerId": "USR-004", "actorId": "USR-001"},
        "not_allowed",
        "cannot be given",
    ),
    (
        "reassign_opportunity",
        {"opportunityId": "OPP-001", "newOwnerId": "USR-007", "actorId": "USR-001"},
        "not_allowed",
        "is sdr",
    ),
    (
        "reassign_opportunity",
        {"opportunityId": "OPP-001", "newOwnerId": "USR-002", "actorId": "USR-001"},
        "conflict",
        "already owned",
    ),
    (
        "reassign_account",
        {"accountId": "ACC-003", "newOwnerId": "USR-002", "actorId": "USR-002"},
        "not_allowed",
        "only its owner, a director or sales ops",
    ),
    ("list_opportunities", {"limit": 900}, "invalid_input", '"limit" must be <= 500'),
    ("list_opportunities", {"limit": 0}, "invalid_input", "limit"),
    (
        "convert_lead",
        _token_conversion("LEAD-009", "USR-002"),
        "invalid_state",
        "already converted on 2026-08-20",
    ),
    (
        "convert_lead",
        _token_conversion("LEAD-003", "USR-007"),
        "invalid_state",
        "is new, not qualified",
    ),
    (
        "convert_lead",
        _token_conversion("LEAD-002", "USR-007"),
        "not_allowed",
        "pass ownerId",
    ),
    (
        "create_account",
        {
            "name": "corvane diagnostics",
            "industry": "clinical_lab",
            "tier": "smb",
            "ownerId": "USR-002",
            "actorId": "USR-002",
        },
        "conflict",
        "ACC-001",
    ),
    (
        "schedule_activity",
        {**FOLLOW_UP, "dueDate": "2026-02-30"},
        "invalid_input",
        "real calendar date",
    ),
    (
        "schedule_activity",
        {**FOLLOW_UP, "dueDate": "2026-09-01"},
        "invalid_input",
        '"dueDate" must be today (2026-09-14) or later; received "2026-09-01".',
    ),
    (
        "schedule_activity",
        {**FOLLOW_UP, "relatedId": "OPP-007", "ownerId": "USR-005", "actorId": "USR-005"},
        "invalid_state",
        "OPP-007 is lost, not open",
    ),
    (
        "complete_activity",
        {"activityId": "ACT-001", "actorId": "USR-002"},
        "invalid_state",
        "completed on 2026-08-31",
    ),
    (
        "reassign_activity",
        {"activityId": "ACT-009", "newOwnerId": "USR-005", "actorId": "USR-001"},
        "invalid_state",
        "completed",
    ),
    ("advance_clock", {"days": 400}, "invalid_input", '"days" must be <= 365'),
    ("advance_clock", {}, "invalid_input", "positive number"),
    (
        "merge_contacts",
        {"survivorId": "CON-001", "duplicateId": "CON-003", "actorId": "USR-008"},
        "invalid_state",
        "same account",
    ),
    (
        "create_contact",
        {
            "accountId": "ACC-005",
            "firstName": "B",
            "lastName": "O",
            "email": "BEATRIX.olawale@tessaline.example",
            "actorId": "USR-008",
        },
        "conflict",
        "CON-007",
    ),
    (
        "advance_opportunity_stage",
        {"opportunityId": "OPP-003", "actorId": "USR-003"},
        "invalid_state",
        "last open stage",
    ),
    (
        "move_opportunity_stage",
        {"opportunityId": "OPP-001", "stageId": "STG-006", "actorId": "USR-002"},
        "not_allowed",
        "close_opportunity_won",
    ),
    (
        "create_opportunity",
        {
            "name": "x",
            "accountId": "ACC-001",
            "ownerId": "USR-002",
            "amount": -5,
            "expectedCloseDate": "2026-12-01",
            "actorId": "USR-002",
        },
        "invalid_input",
        "positive amount",
    ),
    ("get_audit_entry", {"auditId": "AUD-9999"}, "not_found", "AUD-9999"),
    ("list_opportunities", {"ownerId": "USR-099"}, "not_found", 'User "USR-099"'),
    ("list_contacts", {"accountId": "ACC-099"}, "not_found", 'Account "ACC-099"'),
    (
        "list_activities",
        {"relatedType": "lead", "relatedId": "LEAD-099"},
        "not_found",
        'Lead "LEAD-099"',
    ),
    (
        "qualify_lead",
        {"leadId": "LEAD-004", "actorId": "USR-007"},
        "invalid_state",
        "disqualified",
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "args", "code", "fragment"),
    REJECTIONS,
    ids=[f"{r[0]}-{r[2]}-{i}" for i, r in enumerate(REJECTIONS)],
)
async def test_tools_reject_bad_input_precisely(
    name: str, args: dict[str, Any], code: str, fragment: str
) -> None:
    await World().rejects(name, args, code, fragment)


@pytest.mark.anyio
async def test_writes_append_audit_events_and_reads_do_not() -> None:
    world = World()
    await world.ok("list_opportunities")
    await world.ok("get_account", {"accountId": "ACC-001"})
    assert world.state["auditLog"] == world.initial["auditLog"]
    await world.ok(
        "update_opportunity",
        {"opportunityId": "OPP-001", "amount": 190000, "actorId": "USR-002"},
    )
    await world.ok("advance_opportunity_stage", {"opportunityId": "OPP-001", "actorId": "USR-002"})
    new = world.state["auditLog"][len(world.initial["auditLog"]) :]
    assert [e["id"] for e in new] == ["AUD-0004", "AUD-0005"]
    assert [e["action"] for e in new] == ["update_opportunity", "advance_opportunity_stage"]
    assert all(e["actorId"] == "USR-002" and e["at"] == w.clock.now(world.state) for e in new)
    assert new[0]["changes"] == [{"field": "amount", "from": 185000, "to": 190000}]
    assert new[1]["changes"] == [{"field": "stageId", "from": "STG-004", "to": "STG-005"}]
    listed = await world.ok("list_audit_entries", {"entityId": "OPP-001"})
    assert [e["id"] for e in listed["results"]] == ["AUD-0004", "AUD-0005"]  # oldest first


@pytest.mark.anyio
async def test_paging_shape_and_offsets() -> None:
    world = World()
    page = await world.ok("list_opportunities", {"limit": 5, "offset": 20})
    assert set(page) == {"total", "count", "offset", "results"}
    assert (page["total"], page["count"], page["offset"]) == (24, 4, 20)
    assert [o["id"] for o in page["results"]] == ["OPP-021", "OPP-022", "OPP-023", "OPP-024"]


@pytest.mark.anyio
async def test_clock_is_simulated_and_moves_derived_values() -> None:
    world = World()
    assert (await world.ok("get_current_time"))["now"] == "2026-09-14T09:00:00Z"
    before = await world.ok("get_opportunity", {"opportunityId": "OPP-004"})
    assert (before["daysInStage"], before["isStale"]) == (30, False)
    moved = await world.ok("advance_clock", {"days": 2, "hours": 3})
    assert moved["now"] == "2026-09-16T12:00:00Z"
    after = await world.ok("get_opportunity", {"opportunityId": "OPP-004"})
    assert (after["daysInStage"], after["isStale"]) == (32, True)
    assert world.state["auditLog"][-1]["action"] == "advance_clock"


@pytest.mark.anyio
async def test_convert_lead_onto_existing_account_reuses_matching_contact() -> None:
    world = World()
    await world.ok("qualify_lead", {"leadId": "LEAD-003", "actorId": "USR-007"})
    out = await world.ok(
        "convert_lead",
        {
            "leadId": "LEAD-003",
            "accountId": "ACC-005",
            "ownerId": "USR-005",
            "amount": 10000,
            "expectedCloseDate": "2026-12-01",
            "actorId": "USR-007",
        },
    )
    assert (out["accountCreated"], out["contactCreated"]) == (False, True)
    assert out["opportunity"]["stageId"] == "STG-001"


@pytest.mark.anyio
async def test_merge_repoints_every_reference() -> None:
    world = World()
    out = await world.ok(
        "merge_contacts",
        {"survivorId": "CON-007", "duplicateId": "CON-017", "actorId": "USR-008"},
    )
    assert out["repointed"] == ["ACT-017", "ACT-018", "LEAD-009", "OPP-018"]
    assert S.contact_references(world.state, "CON-017") == []
    assert world.state["contacts"]["CON-007"]["phone"] == "+41 61 555 0142"
    again = await world.call(
        "merge_contacts",
        {"survivorId": "CON-007", "duplicateId": "CON-017", "actorId": "USR-008"},
    )
    assert again.output["code"] == "invalid_state"


# --- gates -------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_solver_passes_every_task_with_full_reward() -> None:
    results = await silo.run_many(ENV, TASK_IDS, load_agent("crm_solver"))
    for result in results:
        assert result.passed, (result.task.id, result.failed_required, result.error)
        assert result.reward == 1.0, (result.task.id, [c for c in result.checks if not c.passed])
        assert result.tool_errors == 0 and result.tool_faults == 0, result.task.id


@pytest.mark.anyio
async def test_scaffolded_copy_loads_from_disk_and_is_solvable(tmp_path: Path) -> None:
    project = await Project.open(tmp_path)
    handle = await project.environments.create("sales-crm", template="crm")
    env = load_environment("sales-crm", cwd=tmp_path)
    assert [t.id for t in env.tasks] == TASK_IDS
    assert len(env.bind_tools(env.create_state())) == len(crm.tools)
    assert (handle.path / "data" / "opportunities.json").is_file()
    results = await silo.run_many(env, TASK_IDS, load_agent("crm_solver"))
    assert [r.task.id for r in results if not r.passed] == []


@pytest.mark.anyio
async def test_rollouts_are_deterministic_whatever_the_concurrency() -> None:
    solver = load_agent("crm_solver")
    serial = await silo.run_many(ENV, TASK_IDS, solver, concurrency=1)
    parallel = await silo.run_many(ENV, TASK_IDS, solver, concurrency=64)
    assert [r.result_dict() for r in serial] == [r.result_dict() for r in parallel]
    assert [r.state_diff for r in serial] == [r.state_diff for r in parallel]


@pytest.mark.anyio
async def test_noop_passes_no_task() -> None:
    results = await silo.run_many(ENV, TASK_IDS, load_agent("noop"))
    assert [r.task.id for r in results if r.passed] == []
    assert all(r.tool_calls == 0 for r in results)


@pytest.mark.anyio
async def test_toolpath_agent_walks_binding_validation_and_dispatch() -> None:
    result = await silo.run(ENV, "TASK-005", load_agent("crm_toolpath"))
    assert result.output_text == (
        "read OPP-011 open; write ok; read-back lost; undeclared argument invalid_input; "
        "missing field invalid_input; unknown tool tool_not_found"
    )
    assert (result.tool_calls, result.tool_errors, result.tool_faults) == (6, 3, 0)
    assert result.passed


# --- verifiers resist shortcuts and traps ------------------------------------------------------


@pytest.mark.anyio
async def test_converting_onto_a_duplicate_account_fails() -> None:
    world = World()
    await world.ok(
        "convert_lead",
        {
            "leadId": "LEAD-002",
            "ownerId": "USR-002",
            "amount": 65000,
            "expectedCloseDate": "2026-11-30",
            "actorId": "USR-007",
        },
    )
    outcome = await world.grade("TASK-002")
    assert not outcome.passed
    assert "no new account was created" in outcome.failed_required


@pytest.mark.anyio
async def test_moving_only_the_deals_of_the_departed_rep_fails() -> None:
    world = World()
    for opp in S.open_opportunities(world.state, "USR-004"):
        await world.ok(
            "reassign_opportunity",
            {"opportunityId": opp["id"], "newOwnerId": "USR-005", "actorId": "USR-001"},
        )
    outcome = await world.grade("TASK-003")
    assert not outcome.passed
    assert (
        "every open opportunity of Jasper Lindqvist moved to Ottilie Brandt"
        not in outcome.failed_required
    )
    assert "every account of Jasper Lindqvist moved to Ottilie Brandt" in outcome.failed_required


@pytest.mark.anyio
async def test_merging_into_the_newer_record_fails() -> None:
    world = World()
    await world.ok(
        "merge_contacts",
        {"survivorId": "CON-017", "duplicateId": "CON-007", "actorId": "USR-008"},
    )
    outcome = await world.grade("TASK-006")
    assert not outcome.passed


@pytest.mark.anyio
async def test_resetting_stale_deals_instead_of_chasing_them_fails() -> None:
    world = World()
    for opp in S.stale_opportunities(world.state):
        if world.state["users"][opp["ownerId"]]["active"]:
            await world.ok(
                "move_opportunity_stage",
                {"opportunityId": opp["id"], "stageId": "STG-001", "actorId": "USR-001"},
            )
    outcome = await world.grade("TASK-007")
    assert not outcome.passed
    assert "the deals themselves were not changed" in outcome.failed_required


@pytest.mark.anyio
async def test_follow_up_on_the_30_day_boundary_deal_fails() -> None:
    world = World()
    for opp in S.stale_opportunities(world.state, 29):
        owner = opp["ownerId"] if world.state["users"][opp["ownerId"]]["active"] else "USR-001"
        await world.ok(
            "schedule_activity",
            {
                "type": "call",
                "subject": "Follow up",
                "relatedType": "opportunity",
                "relatedId": opp["id"],
                "ownerId": owner,
                "dueDate": "2026-09-15",
                "actorId": "USR-001",
            },
        )
    outcome = await world.grade("TASK-007")
    assert outcome.failed_required == [
        "no follow-up was added to deals not stalled for more than 30 days"
    ]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("task_id", "answer", "passes"),
    [
        ("TASK-008", "Weighted open pipeline: $746,500", True),
        ("TASK-008", "About 746.5k weighted (OPP-001 to OPP-022, as of 2026-09-14).", True),
        ("TASK-008", "Open pipeline is $1,425,500; weighted $746,500.", False),
        ("TASK-008", "10 20 40 60 80 746500 12 5", False),
        ("TASK-008", "", False),
        ("TASK-009", "Rafael Quintero, at 25.8% of his 2026 quota.", True),
        (
            "TASK-009",
            "Jasper Lindqvist at 0%, but among current reps Rafael Quintero at 25.8%.",
            False,
        ),
        ("TASK-009", "Ottilie Brandt, 30.0%", False),
        ("TASK-009", "Callum 32.5%, Noor 44%, Ottilie 30%, Rafael Quintero 25.8%", False),
        ("TASK-010", "Two deals are past due, worth $92,000 together.", True),
        ("TASK-010", "3 deals, $123,000", False),
        ("TASK-010", "1, 2 or 3 deals worth $92,000", False),
        ("TASK-011", "OPP-005 has sat in Evaluation for 70 days.", True),
        ("TASK-011", "Tessaline GMP batch release module: 70 days", True),
        ("TASK-011", "OPP-002, 48 days", False),
        ("TASK-011", "OPP-005 70, OPP-002 48, OPP-009 42", False),
    ],
)
async def test_answer_verifiers(task_id: str, answer: str, passes: bool) -> None:
    outcome = await World().grade(task_id, answer)
    assert outcome.passed is passes, [c for c in outcome.checks if not c.passed]
