"""The support template: its contract, its seed, its rules, its conversations and its gates.

Every task is a conversation with a scripted customer who holds facts the world does not show
and acts on their own phone and banking app. Gates: the scripted solver passes every task with
reward 1.0 through the tools and ``message_user`` only, and the no-op agent (it never speaks)
passes none.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import silo_async as silo
import silo_async.templates.support as support
from silo_async.templates.support import state as S
from silo_async.templates.support.tools import USER_TOOL_NAMES
from silo_async.testing import check_environment

from .template_support import TemplateWorld, load_agent, template_dir, template_environment

pytestmark = pytest.mark.anyio

TEMPLATE = template_dir(support)
ENV = template_environment("support", support)
SOLVER = load_agent("support_solver")
NOOP = load_agent("noop")
#: Tasks where the right move is to refuse what the customer asks.
REFUSALS = {"TASK-007", "TASK-008", "TASK-009", "TASK-010"}


class World(TemplateWorld):
    """A fresh support world with its tools, callable by name (no runner involved)."""

    state: S.State

    def __init__(self) -> None:
        super().__init__(support)

    async def case(self, customer: str, pin: str | None = None) -> str:
        """Open a case for ``customer`` (verified with ``pin`` when given)."""
        out = await self.ok(
            "open_case", {"customerId": customer, "subject": "Test", "actorId": "STF-001"}
        )
        case_id: str = out["created"]["id"]
        if pin is not None:
            verified = await self.ok(
                "verify_caller",
                {"caseId": case_id, "method": "pin", "secret": pin, "actorId": "STF-001"},
            )
            assert verified["verified"]
        return case_id

    async def ok(self, name: str, args: dict[str, Any] | None = None) -> Any:
        """A call that must succeed; what it changed is the new baseline of :meth:`rejects`."""
        output = await super().ok(name, args)
        self.initial = silo.clone_json(self.state)
        return output

    def phone(self, device: str) -> S.Service:
        return S.service_of(self.state, self.state["devices"][device])


# --- contract and registries -------------------------------------------------------------------


def test_scale_and_the_mix_of_conversations() -> None:
    tools = support.bind_tools(support.create_state())
    assert len(tools) >= 40
    assert len(ENV.tasks) >= 15
    assert {t.difficulty for t in ENV.tasks} == {"easy", "medium", "hard"}
    users = {t.id: t.user for t in ENV.tasks}
    assert all(users.values()), "every support task is a conversation"
    acting = [i for i, u in users.items() if any(r.get("do") for r in u["script"])]  # type: ignore[index]
    assert len(acting) >= 5, "dual control: the customer acts on their phone or bank"
    assert all(u["knows"] for u in users.values())  # type: ignore[index]
    assert set(users) >= REFUSALS


def test_the_customer_tools_belong_to_the_customer_on_every_task() -> None:
    names = [t.name for t in support.bind_tools(support.create_state())]
    assert names[-len(USER_TOOL_NAMES) :] == USER_TOOL_NAMES
    for task in ENV.tasks:
        assert task.user is not None and task.user["tools"] == USER_TOOL_NAMES, task.id


def test_every_input_schema_is_closed_and_described() -> None:
    for bound in support.bind_tools(support.create_state()):
        schema = bound.spec.input_schema
        Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False, bound.name
        assert set(schema["required"]) <= set(schema["properties"]), bound.name
        for key, prop in schema["properties"].items():
            assert prop.get("description"), f"{bound.name}.{key} has no description"
        assert bound.spec.description, bound.name


ACCOUNT_WRITES = (
    "suspend_line", "resume_line", "set_line_roaming", "change_plan", "add_line_addon",
    "swap_sim", "order_replacement_sim", "cancel_line", "request_card_payment", "issue_credit",
    "subscribe_line_to_incident",
)  # fmt: skip


def test_every_account_write_names_its_actor_and_its_case() -> None:
    schemas = {t.name: t.spec.input_schema for t in support.bind_tools(support.create_state())}
    for name in ACCOUNT_WRITES:
        assert {"actorId", "caseId"} <= set(schemas[name]["required"]), name
    for name in ("open_case", "verify_caller", "escalate_case", "resolve_case"):
        assert "actorId" in schemas[name]["required"], name


def test_tasks_and_verifiers_pair_up() -> None:
    by_id = {v.id: v for v in support.verifiers}
    for task in ENV.tasks:
        assert by_id[task.verifier_id].task_id == task.id
        data = json.loads((TEMPLATE / "tasks" / f"{task.id}.json").read_text(encoding="utf-8"))
        assert set(data) == {"id", "title", "instruction", "verifierId", "difficulty", "user"}
        assert "STF-" in data["instruction"]
    assert len(by_id) == len(ENV.tasks)


def test_create_state_returns_independent_worlds() -> None:
    first, second = support.create_state(), support.create_state()
    assert first == second
    first["devices"]["DEV-001"]["airplaneMode"] = False
    first["unbilledCharges"]["UBC-001"] = {}  # type: ignore[typeddict-item]
    assert support.create_state() == second


def test_derived_values_are_not_stored_in_data() -> None:
    text = "".join(p.read_text(encoding="utf-8") for p in (TEMPLATE / "data").glob("*.json"))
    for derived in ("balance", "inService", "expired", "overdue", "endDate", "verified"):
        assert f'"{derived}"' not in text, derived


# --- what the agent can and cannot see ----------------------------------------------------------


async def test_no_tool_shows_a_pin_or_a_texted_code() -> None:
    world = World()
    pins = {c["securityPin"] for c in world.state["customers"].values()}
    case = await world.case("CUS-012")
    sent = await world.ok(
        "send_verification_code", {"caseId": case, "lineId": "LIN-012", "actorId": "STF-001"}
    )
    code = S.one_time_code("LIN-012", 1)
    seen = [sent, await world.ok("get_case", {"caseId": case})]
    seen += [await world.ok("get_customer", {"customerId": c}) for c in world.state["customers"]]
    seen.append(await world.ok("list_lines", {"limit": 500}))
    text = json.dumps(seen)
    assert "securityPin" not in text and code not in text
    assert not [p for p in pins if f'"{p}"' in text]
    # The customer reads it on their phone.
    inbox = await world.ok("read_text_messages", {"deviceId": "DEV-012"})
    assert code in inbox["messages"][0]["text"]


CAUSES = {
    "DEV-001": ("airplane_mode", "not_registered"),
    "DEV-002": ("wrong_apn", "registered"),
    "DEV-003": ("roaming_barred", "rejected"),
    "DEV-005": ("suspended", "emergency_only"),
    "DEV-016": ("sim_not_provisioned", "not_registered"),
    "DEV-017": ("outage", "not_registered"),
    "DEV-021": ("mobile_data_off", "registered"),
    "DEV-004": ("ok", "registered"),
}


@pytest.mark.parametrize("device", sorted(CAUSES))
async def test_seeded_phone_troubles_show_on_the_network_and_on_the_phone(device: str) -> None:
    world = World()
    cause, registration = CAUSES[device]
    service = world.phone(device)
    assert (service.cause, service.registration) == (cause, registration)
    screen = await world.ok("check_phone_status", {"deviceId": device})
    assert screen["internetWorks"] is (cause == "ok")
    line = S.line_of_sim(world.state, world.state["devices"][device]["simId"])
    if line is not None:
        report = await world.ok("run_line_diagnostics", {"lineId": line["id"]})
        assert report["registration"] == registration
        if cause in ("airplane_mode", "outage"):  # the network cannot tell these apart
            assert (
                "switched off, in airplane mode or out of coverage" in report["registrationDetail"]
            )


# --- the rules --------------------------------------------------------------------------------


async def test_account_changes_need_a_verified_case_of_the_holder() -> None:
    world = World()
    case = await world.case("CUS-003")
    roaming = {"caseId": case, "lineId": "LIN-003", "enabled": True, "actorId": "STF-001"}
    await world.rejects("set_line_roaming", roaming, "not_allowed", "not verified")
    other = await world.case("CUS-001", "2958")
    await world.rejects(
        "set_line_roaming", {**roaming, "caseId": other}, "not_allowed", "not CUS-003"
    )
    await world.rejects(
        "set_line_roaming", {**roaming, "actorId": "STF-005"}, "not_allowed", "no longer active"
    )


async def test_wrong_pins_are_counted_and_lock_the_case() -> None:
    world = World()
    case = await world.case("CUS-008")
    args = {"caseId": case, "method": "pin", "secret": "1111", "actorId": "STF-001"}
    assert (await world.ok("verify_caller", args))["attemptsLeft"] == 2
    await world.ok("verify_caller", args)
    assert (await world.ok("verify_caller", args))["attemptsLeft"] == 0
    await world.rejects("verify_caller", {**args, "secret": "8042"}, "not_allowed", "locked")


async def test_a_lost_or_stolen_line_can_be_barred_before_verification() -> None:
    world = World()
    case = await world.case("CUS-007")
    args = {"caseId": case, "lineId": "LIN-007", "actorId": "STF-001"}
    await world.rejects(
        "suspend_line", {**args, "reason": "customer_request"}, "not_allowed", "not verified"
    )
    await world.ok("suspend_line", {**args, "reason": "lost_or_stolen"})
    await world.rejects(
        "swap_sim", {**args, "iccid": "8935300250000302704"}, "not_allowed", "not verified"
    )


async def test_a_payment_settles_only_when_the_customer_approves_it_then_the_line_resumes() -> None:
    world = World()
    case = await world.case("CUS-005", "3184")
    bill = S.overdue_bills(world.state, "CUS-005")[0]
    pay = {"caseId": case, "billId": bill["id"], "amount": 26.4, "actorId": "STF-002"}
    await world.rejects(
        "request_card_payment", {**pay, "cardId": "CRD-005"}, "invalid_state", "expired"
    )
    await world.ok("request_card_payment", {**pay, "cardId": "CRD-021"})
    resume = {"caseId": case, "lineId": "LIN-005", "actorId": "STF-002"}
    await world.rejects("resume_line", resume, "not_allowed", "overdue")
    approved = await world.ok("approve_card_payment", {"cardId": "CRD-021"})
    assert [p["amount"] for p in approved["approved"]] == [26.4]
    assert S.bill_balance(world.state, world.state["bills"][bill["id"]]) == 0
    await world.ok("resume_line", resume)
    assert world.phone("DEV-005").cause == "needs_restart"
    await world.ok("restart_phone", {"deviceId": "DEV-005"})
    assert world.phone("DEV-005").in_service


async def test_a_fraud_hold_keeps_roaming_barred() -> None:
    world = World()
    case = await world.case("CUS-011", "2203")
    args = {"caseId": case, "lineId": "LIN-011", "enabled": True, "actorId": "STF-004"}
    await world.rejects("set_line_roaming", args, "not_allowed", "fraud team")


async def test_credits_stay_within_the_staff_limit_and_the_charge() -> None:
    world = World()
    case = await world.case("CUS-006", "5093")
    bill = next(b for b in S.bills_of(world.state, "CUS-006") if b["period"] == "2026-09")
    charge = bill["charges"][1]["id"]
    credit = {
        "caseId": case, "billId": bill["id"], "chargeId": charge, "reason": "duplicate_charge",
        "note": "Twice.", "actorId": "STF-001",
    }  # fmt: skip
    await world.rejects("issue_credit", {**credit, "amount": 25}, "not_allowed", "at most 20.00")
    await world.rejects(
        "issue_credit", {**credit, "amount": 15, "actorId": "STF-003"}, "invalid_input", "left"
    )
    no_charge = {k: v for k, v in credit.items() if k != "chargeId"}
    await world.rejects("issue_credit", {**no_charge, "amount": 10}, "invalid_input", "chargeId")
    await world.ok("issue_credit", {**credit, "amount": 10})


async def test_cancelling_inside_the_term_costs_a_fee_unless_opened_in_error() -> None:
    for reason, fee in (("customer_request", 60), ("opened_in_error", 0)):
        world = World()
        case = await world.case("CUS-014", "9127")
        out = await world.ok(
            "cancel_line",
            {"caseId": case, "lineId": "LIN-015", "reason": reason, "actorId": "STF-003"},
        )
        assert out["earlyTerminationFee"] == fee
        assert [c["amount"] for c in world.state["unbilledCharges"].values()] == (
            [fee] if fee else []
        )
        assert world.state["sims"]["SIM-015"]["status"] == "deactivated"


async def test_a_plan_change_waits_for_the_next_bill_and_a_pass_for_its_start() -> None:
    world = World()
    case = await world.case("CUS-004", "6620")
    out = await world.ok(
        "change_plan",
        {"caseId": case, "lineId": "LIN-004", "planId": "PLN-004", "actorId": "STF-001"},
    )
    assert out["updated"]["scheduledPlanChange"]["from"] == "2026-11-01"
    assert out["updated"]["planId"] == "PLN-001"
    args = {"caseId": case, "lineId": "LIN-004", "addonId": "ADD-005", "actorId": "STF-001"}
    await world.rejects(
        "add_line_addon", {**args, "startDate": "2026-10-01"}, "invalid_input", "today"
    )
    added = await world.ok("add_line_addon", {**args, "startDate": "2026-10-12"})
    assert (added["added"]["startDate"], added["added"]["endDate"]) == ("2026-10-12", "2026-10-25")
    assert S.cheapest_cover(world.state, 2, 10) == 40


async def test_a_new_sim_takes_the_line_only_when_it_is_meant_for_it() -> None:
    world = World()
    case = await world.case("CUS-015", "4750")
    args = {"caseId": case, "lineId": "LIN-016", "actorId": "STF-002"}
    await world.rejects(
        "swap_sim",
        {**args, "iccid": S.normalise_iccid("8935300280000325741")},
        "not_found",
        "ICCID",
    )
    await world.ok("swap_sim", {**args, "iccid": "8935 3002 4000 0294 785"})
    assert world.state["sims"]["SIM-016"]["status"] == "deactivated"
    assert world.phone("DEV-016").cause == "needs_restart"


# --- conversations through the runner -----------------------------------------------------------


def _turns(result: silo.RunResult) -> list[dict[str, Any]]:
    return [e for e in result.trace if e["type"] == "user_turn"]


async def test_the_solver_talks_every_task_through_to_a_pass() -> None:
    results = await silo.run_many(ENV, [t.id for t in ENV.tasks], SOLVER)
    for result in results:
        assert result.passed and result.reward == 1.0, (result.task.id, result.failed_required)
        assert result.tool_errors == 0, result.task.id
        turns = _turns(result)
        assert turns and turns[-1]["ended"], result.task.id
        otherwise = result.task.user["otherwise"]["say"]  # type: ignore[index]
        assert otherwise not in [t["reply"] for t in turns], result.task.id


async def test_the_agent_that_never_speaks_passes_no_task() -> None:
    results = await silo.run_many(ENV, [t.id for t in ENV.tasks], NOOP)
    assert [r.task.id for r in results if r.passed] == []


async def test_the_customer_acts_on_their_own_phone_and_bank_in_the_trace() -> None:
    seen: list[str] = []

    async def probe(ctx: silo.AgentContext) -> str:
        seen.extend(t.name for t in ctx.tools)
        out = await ctx.call_tool("approve_card_payment", {"cardId": "CRD-021"})
        return str(out.output["code"])

    probed = await silo.run(ENV, "TASK-005", probe)
    assert probed.output_text == "tool_not_found"
    assert not set(USER_TOOL_NAMES) & set(seen) and seen[-1] == "message_user"
    result = await silo.run(ENV, "TASK-005", SOLVER)
    by_user = [e for e in result.trace if e["type"] == "tool_call" and e.get("actor") == "user"]
    assert [e["tool"] for e in by_user] == ["approve_card_payment", "restart_phone"]
    assert result.user_tool_calls == 2 and result.user_turns == len(_turns(result))
    agent_calls = [e for e in result.trace if e["type"] == "tool_call" and e.get("actor") != "user"]
    assert result.tool_calls == len([e for e in agent_calls if e["tool"] != "message_user"])


def _rogue(calls: list[tuple[str, dict[str, Any]]], say: str = "") -> Any:
    """An agent that verifies the caller on a case, then makes ``calls`` (and says ``say``)."""

    async def agent(ctx: silo.AgentContext) -> str:
        for name, args in calls:
            result = await ctx.call_tool(name, args)
            assert not result.is_error, (name, result.output)
        if say:
            await ctx.call_tool("message_user", {"text": say})
        return "done"

    return agent


async def test_refusal_tasks_fail_the_agent_that_gives_in() -> None:
    open_case = ("open_case", {"customerId": "CUS-008", "subject": "x", "actorId": "STF-001"})
    verify = (
        "verify_caller",
        {"caseId": "CAS-0005", "method": "pin", "secret": "8042", "actorId": "STF-001"},
    )
    goodwill = (
        "issue_credit",
        {"caseId": "CAS-0005", "billId": "BIL-0016", "amount": 10, "reason": "goodwill",
         "note": "Gesture.", "actorId": "STF-001"},
    )  # fmt: skip
    gave_in = await silo.run(
        ENV, "TASK-008", _rogue([open_case, verify, goodwill], "Done, see 12 months.")
    )
    assert not gave_in.passed and gave_in.failed_required[0] == "no credit was given"
    # (The credit is also an account change, and the rogue never closed its case.)
    assert set(gave_in.failed_required[1:]) <= {
        "nothing on the account changed",
        "the contact is recorded in a closed case",
    }
    told = await silo.run(
        ENV, "TASK-009", _rogue([], "Only the account holder may know, but it is 14.2 GB.")
    )
    assert told.failed_required == [
        "the line's usage was not disclosed",
        "the contact is recorded in a closed case",  # it opened no case either
    ]


async def test_the_environment_validates_with_the_solver() -> None:
    report = await check_environment(ENV, solver=SOLVER)
    assert report.ok, report.findings


async def test_validation_names_a_customer_who_hangs_up_before_the_solver_s_writes() -> None:
    task = ENV.task("TASK-016").to_dict()
    # The customer leaves when asked to confirm the address: before the SIM is ordered.
    task["user"]["script"].insert(0, {"when": ["address"], "say": "Gotta go!", "end": True})
    broken = silo.Environment(
        name="support",
        create_state=support.create_state,
        bind=support.bind_tools,
        verifiers=support.verifiers,
        tasks=[silo.Task.from_dict(task)],
    )
    report = await check_environment(broken, solver=SOLVER)
    codes = {f.code: f.message for f in report.findings if f.level == "error"}
    assert "user_ends_early" in codes, codes
    assert "TASK-016" in codes["user_ends_early"] and "script[0]" in codes["user_ends_early"]
