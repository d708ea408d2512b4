"""The erp template: its contract, its seed, its tools' rules and messages, and its CLI path.

The gates (tests/test_gates.py) prove the scripted solver passes every task with 1.0, the
no-op agent passes none and the tool-path agent walks dispatch; these tests pin the rules the
tasks rest on, each with the message an agent sees, on worlds built straight from the package.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

import silo_async.templates.erp as erp
from silo_async import world as w
from silo_async.cli._app import app
from silo_async.templates.erp import environment as erp_environment
from silo_async.templates.erp.domain import budgets, payables, sales, stock

from .template_support import TemplateWorld, template_dir, template_environment

TEMPLATE = template_dir(erp)
ENV = template_environment("erp", erp)


class World(TemplateWorld):
    """A fresh erp world with its tools, callable by name (no runner involved)."""

    def __init__(self) -> None:
        super().__init__(erp)


# --- contract and registries -------------------------------------------------------------------


def test_scale_and_difficulty_mix() -> None:
    tools = erp.bind_tools(erp.create_state())
    assert len(tools) >= 150
    assert len({t.name for t in tools}) == len(tools)
    assert len(ENV.tasks) >= 18
    hard = [t for t in ENV.tasks if t.difficulty == "hard"]
    assert len(hard) > len(ENV.tasks) / 2
    assert {t.difficulty for t in ENV.tasks} == {"easy", "medium", "hard"}


def test_every_input_schema_is_closed_and_described() -> None:
    for bound in erp.bind_tools(erp.create_state()):
        schema = bound.spec.input_schema
        Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False, bound.name
        assert set(schema["required"]) <= set(schema["properties"]), bound.name
        for key, prop in schema["properties"].items():
            assert prop.get("description"), f"{bound.name}.{key} has no description"
        assert bound.spec.description, bound.name


READS = ("list_", "search_", "get_", "find_", "check_", "compare_", "explain_")


def test_every_write_takes_an_actor_and_every_list_pages() -> None:
    writes = 0
    for bound in erp.bind_tools(erp.create_state()):
        schema = bound.spec.input_schema
        if not bound.name.startswith(READS) and bound.name != "advance_clock":
            writes += 1
            assert "actorId" in schema["required"], bound.name
        if bound.name.startswith(("list_", "search_")) and "limit" not in schema["properties"]:
            # the unpaged lists answer a bounded question (what is low, late, due, ...)
            assert bound.name.startswith(
                (
                    "list_low",
                    "list_late",
                    "list_overdue",
                    "list_open",
                    "list_pending_d",
                    "list_vendor_invoices_due",
                    "list_uninvoiced",
                    "list_unallocated",
                    "list_backorders",
                    "list_approvals_for",
                )
            ), bound.name
    assert writes >= 80


def test_tasks_and_verifiers_pair_up() -> None:
    by_id = {v.id: v for v in erp.verifiers}
    for task in ENV.tasks:
        assert by_id[task.verifier_id].task_id == task.id
        data = json.loads((TEMPLATE / "tasks" / f"{task.id}.json").read_text(encoding="utf-8"))
        assert set(data) == {"id", "title", "instruction", "verifierId", "difficulty"}
    assert len(by_id) == len(ENV.tasks)


def test_nothing_reads_the_wall_clock_or_global_random() -> None:
    # A task family's sample is given its own seeded random.Random: naming the class is
    # allowed (its argument's type), calling the random module's global functions is not.
    pattern = re.compile(
        r"\b(datetime\.now|date\.today|time\.time|utcnow)\b|\brandom\.(?!Random\b)\w+\("
        r"|^\s*from random import (?!Random\b)",
        re.MULTILINE,
    )
    for path in TEMPLATE.rglob("*.py"):
        assert not pattern.search(path.read_text(encoding="utf-8")), path


# --- the world ---------------------------------------------------------------------------------


def test_create_state_returns_independent_worlds() -> None:
    first, second = erp.create_state(), erp.create_state()
    assert first == second
    first["stock"]["STK-001"]["onHand"] = 0
    first["auditLog"].append({"id": "AUD-9999"})
    assert erp.create_state() == second


def test_derived_values_are_not_stored_in_data() -> None:
    derived = {
        "available",
        "reserved",
        "inbound",
        "outstanding",
        "paid",
        "total",
        "net",
        "committed",
        "spent",
        "remaining",
        "received",
        "invoiced",
        "exposure",
    }
    for path in (TEMPLATE / "data").glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        records = data if isinstance(data, list) else list(data.values())
        for record in records:
            if isinstance(record, dict) and path.stem not in ("policies", "company", "clock"):
                assert not derived & set(record), (path.name, record.get("id"))


def test_seed_contains_the_messes_tasks_depend_on() -> None:
    state = erp.create_state()
    vats = [v["vatNumber"] for v in state["vendors"].values()]
    assert len(vats) - len(set(vats)) == 1  # one supplier registered twice
    assert [b["id"] for b in state["budgets"].values() if budgets.remaining(state, b) < 0] == [
        "BUD-006"
    ]
    failing = [
        i["id"]
        for i in state["vendorInvoices"].values()
        if i["status"] == "received"
        and i["purchaseOrderId"]
        and payables.match_exceptions(state, i)
    ]
    assert failing == ["VI-2004", "VI-2005"]
    assert stock.line_held(state, "SO-5003", 1) == 60  # 30 ordered, reserved twice
    overdue = [
        i["id"] for i in state["customerInvoices"].values() if sales.days_overdue(state, i) > 60
    ]
    assert overdue == ["INV-8001", "INV-8004"]


def test_broken_seed_references_are_reported_with_the_record(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(TEMPLATE / "data", data)
    orders = json.loads((data / "purchaseOrders.json").read_text(encoding="utf-8"))
    orders[0]["vendorId"] = "VEN-404"
    (data / "purchaseOrders.json").write_text(json.dumps(orders), encoding="utf-8")
    seed = w.Seed(data, references=erp_environment._REFERENCES)
    with pytest.raises(w.records.SeedError, match=r"PO-1001\.vendorId names VEN-404"):
        seed.clone()


def test_polymorphic_links_are_checked_when_the_world_is_built(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(TEMPLATE / "data", data)
    approvals = json.loads((data / "approvals.json").read_text(encoding="utf-8"))
    approvals[0]["documentId"] = "REQ-9999"
    (data / "approvals.json").write_text(json.dumps(approvals), encoding="utf-8")
    seed = w.Seed(data, build=erp_environment._check)
    with pytest.raises(w.records.SeedError, match="APR-0001 names a missing requisition"):
        seed.clone()


# --- rules, with the message an agent sees -----------------------------------------------------

REJECTIONS: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "count_stock",
        {
            "productId": "PRD-012",
            "warehouseId": "WH-001",
            "countedQuantity": 1,
            "actorId": "USR-014",
        },
        "not_allowed",
        "Koen van Dijk (USR-014, sales_rep) is no longer active (left 2026-04-30)",
    ),
    (
        "count_stock",
        {
            "productId": "PRD-012",
            "warehouseId": "WH-001",
            "countedQuantity": 1,
            "actorId": "USR-013",
        },
        "not_allowed",
        "Amira Saleh (USR-013, sales_rep) cannot do warehouse work",
    ),
    (
        "create_purchase_order",
        {
            "vendorId": "VEN-008",
            "warehouseId": "WH-001",
            "budgetId": "BUD-004",
            "lines": [{"productId": "PRD-008", "quantity": 5}],
            "actorId": "USR-007",
        },
        "not_allowed",
        "Vendor VEN-008 is blocked (Three quality rejections in Q1 2026 (warped pans))",
    ),
    (
        "create_purchase_order",
        {
            "vendorId": "VEN-005",
            "warehouseId": "WH-001",
            "budgetId": "BUD-004",
            "lines": [{"productId": "PRD-018", "quantity": 5}],
            "actorId": "USR-007",
        },
        "not_allowed",
        "product PRD-018 (Water filter bottle) is discontinued",
    ),
    (
        "approve_vendor_invoice",
        {"vendorInvoiceId": "VI-2006", "actorId": "USR-003"},
        "invalid_state",
        "Vendor invoice VI-2006 is received; it must be matched to be approved.",
    ),
    (
        "approve_vendor_invoice",
        {"vendorInvoiceId": "VI-2013", "actorId": "USR-004"},
        "not_allowed",
        "Tobias Lemaire (USR-004, ap_clerk) cannot approve vendor invoices",
    ),
    (
        "approve_requisition",
        {"requisitionId": "REQ-4007", "actorId": "USR-008"},
        "limit_exceeded",
        "Otto Reinholt (USR-008, buyer) may approve requisitions up to 2,500.00 EUR; "
        "REQ-4007 is 17,640.00 EUR. Authorised: USR-006",
    ),
    (
        "approve_requisition",
        {"requisitionId": "REQ-4007", "actorId": "USR-006"},
        "not_allowed",
        "APR-0036 for REQ-4007 is assigned to Otto Reinholt (USR-008, buyer)",
    ),
    (
        "approve_requisition",
        {"requisitionId": "REQ-4006", "actorId": "USR-015"},
        "limit_exceeded",
        "Budget BUD-006 (Marketing FY2026) has -1,182.00 EUR remaining; REQ-4006 "
        "needs 2,168.00 EUR.",
    ),
    (
        "accept_quotation",
        {"quotationId": "QUO-002", "actorId": "USR-007"},
        "invalid_state",
        "QUO-002 expired on 2026-05-08 (today is 2026-05-11)",
    ),
    (
        "accept_quotation",
        {"quotationId": "QUO-001", "actorId": "USR-007"},
        "not_allowed",
        "Vendor VEN-012 is pending_approval (Awaiting bank verification)",
    ),
    (
        "reserve_stock",
        {"salesOrderId": "SO-5006", "lineNo": 1, "actorId": "USR-013"},
        "invalid_state",
        "Only 10 of PRD-005 are available at WH-003 (70 on hand, 60 reserved)",
    ),
    (
        "reserve_stock",
        {"salesOrderId": "SO-5003", "lineNo": 1, "actorId": "USR-013"},
        "conflict",
        "SO-5003 line 1 is already fully reserved (60 held for 30 still to ship)",
    ),
    (
        "confirm_sales_order",
        {"salesOrderId": "SO-5008", "actorId": "USR-012"},
        "limit_exceeded",
        "would take Bergzicht Adventure B.V. (CUS-007) to 32,673.39 EUR against a credit limit of "
        "30,000.00 EUR",
    ),
    (
        "confirm_sales_order",
        {"salesOrderId": "SO-5010", "actorId": "USR-012"},
        "not_allowed",
        "Customer CUS-009 (Ardennes Expéditions SPRL) is on_hold",
    ),
    (
        "create_vendor_payment",
        {
            "vendorId": "VEN-002",
            "allocations": [{"invoiceId": "VI-2002"}],
            "paymentDate": "2026-05-11",
            "actorId": "USR-004",
        },
        "not_allowed",
        "bank account SE4550000000058398257466 is rejected",
    ),
    (
        "create_vendor_payment",
        {
            "vendorId": "VEN-009",
            "allocations": [{"invoiceId": "VI-2010"}],
            "paymentDate": "2026-05-11",
            "actorId": "USR-004",
        },
        "invalid_state",
        "Vendor invoice VI-2010 is on_hold; it must be approved to be paid.",
    ),
    (
        "create_transfer",
        {
            "productId": "PRD-001",
            "fromWarehouseId": "WH-001",
            "toWarehouseId": "WH-002",
            "quantity": 49,
            "reason": "x",
            "actorId": "USR-009",
        },
        "invalid_state",
        "Only 48 of PRD-001 are available at WH-001 (64 on hand, 16 reserved); cannot move 49.",
    ),
    (
        "adjust_stock",
        {
            "productId": "PRD-016",
            "warehouseId": "WH-001",
            "quantityChange": -1,
            "reason": "x",
            "actorId": "USR-009",
        },
        "invalid_state",
        "moving -1 would leave 9, below the 10 reserved.",
    ),
    (
        "create_vendor",
        {
            "name": "Nordkap",
            "vatNumber": "NL853201946B01",
            "country": "NL",
            "email": "a@b.example",
            "paymentTerms": "NET_30",
            "iban": "NL91ABNA0417164300",
            "actorId": "USR-007",
        },
        "conflict",
        "Vendor VEN-004 (Nordkap Textiles B.V.) already has VAT number NL853201946B01.",
    ),
    (
        "merge_vendors",
        {"duplicateVendorId": "VEN-001", "survivorVendorId": "VEN-010", "actorId": "USR-006"},
        "conflict",
        "are different companies",
    ),
    (
        "revoke_approval",
        {"approvalId": "APR-0012", "reason": "x", "actorId": "USR-007"},
        "limit_exceeded",
        "Femke de Groot (USR-007, buyer) may approve purchase orders up to "
        "5,000.00 EUR; PO-1008 (purchase orders) is 6,920.00 EUR.",
    ),
    (
        "send_payment_reminder",
        {"invoiceId": "INV-8013", "actorId": "USR-005"},
        "invalid_state",
        "INV-8013 is not overdue (status issued, due 2026-05-11",
    ),
    (
        "receive_goods",
        {
            "purchaseOrderId": "PO-1007",
            "deliveryNote": "x",
            "lines": [{"lineNo": 1, "accepted": 151}],
            "actorId": "USR-010",
        },
        "invalid_input",
        '"lines[0].accepted" must be at most 150 (still due on line 1)',
    ),
    (
        "run_three_way_match",
        {"vendorInvoiceId": "VI-2013", "actorId": "USR-004"},
        "invalid_state",
        "VI-2013 has no purchase order to match; approve it directly.",
    ),
    (
        "approve_expense",
        {"expenseId": "EXP-7007", "actorId": "USR-012"},
        "not_allowed",
        "Jesper Holm (USR-012, sales_manager) cannot decide their own claim EXP-7007.",
    ),
    (
        "approve_expense",
        {"expenseId": "EXP-7006", "actorId": "USR-012"},
        "invalid_state",
        "EXP-7006 is 38.50 EUR without a receipt",
    ),
    (
        "get_purchase_order",
        {"purchaseOrderId": "PO-9999"},
        "not_found",
        'Purchase order "PO-9999" was not found.',
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "args", "code", "fragment"),
    REJECTIONS,
    ids=[f"{r[0]}-{r[2]}-{i}" for i, r in enumerate(REJECTIONS)],
)
async def test_tools_reject_with_the_rule_and_the_state(
    name: str, args: dict[str, Any], code: str, fragment: str
) -> None:
    await World().rejects(name, args, code, fragment)


@pytest.mark.anyio
async def test_a_vendor_with_no_reason_on_record_is_refused_without_one() -> None:
    world = World()
    world.state["vendors"]["VEN-012"]["statusReason"] = None
    result = await world.call("accept_quotation", {"quotationId": "QUO-001", "actorId": "USR-007"})
    assert result.output["message"] == (
        "Vendor VEN-012 is pending_approval; nothing can be ordered from it."
    )


@pytest.mark.anyio
async def test_payment_creator_cannot_approve_it() -> None:
    world = World()
    await world.ok(
        "update_vendor_bank_details",
        {
            "vendorId": "VEN-002",
            "iban": "SE7280000810340009785412",
            "reason": "call-back",
            "actorId": "USR-003",
        },
    )
    created = await world.ok("retry_payment", {"paymentId": "PAY-3002", "actorId": "USR-003"})
    result = await world.call(
        "approve_payment", {"paymentId": created["created"]["id"], "actorId": "USR-003"}
    )
    assert result.output["code"] == "not_allowed"
    assert "created PAY-3010 and cannot also approve it" in result.output["message"]


@pytest.mark.anyio
async def test_writes_are_audited_and_reads_are_not() -> None:
    world = World()
    await world.ok("list_purchase_orders")
    await world.ok("get_budget", {"budgetId": "BUD-006"})
    assert world.state["auditLog"] == world.initial["auditLog"]
    await world.ok(
        "count_stock",
        {
            "productId": "PRD-012",
            "warehouseId": "WH-001",
            "countedQuantity": 41,
            "actorId": "USR-009",
        },
    )
    new = w.grade.new_audit_entries(world.state, world.initial)
    assert [(e["id"], e["action"], e["actorId"]) for e in new] == [
        ("AUD-0011", "count_stock", "USR-009")
    ]
    assert new[0]["at"] == world.state["clock"]["now"]
    assert new[0]["changes"][0] == {"field": "onHand", "from": 45, "to": 41}


@pytest.mark.anyio
async def test_a_status_change_is_audited_with_its_reason_and_field_changes() -> None:
    world = World()
    await world.ok(
        "cancel_purchase_order",
        {"purchaseOrderId": "PO-1008", "reason": "Approved above limit", "actorId": "USR-006"},
    )
    (entry,) = w.grade.new_audit_entries(world.state, world.initial)
    assert (entry["action"], entry["entityType"], entry["entityId"], entry["detail"]) == (
        "cancel_purchase_order",
        "purchaseOrder",
        "PO-1008",
        "Approved above limit",
    )
    assert entry["changes"] == [
        {"field": "status", "from": "approved", "to": "cancelled"},
        {"field": "cancelReason", "from": None, "to": "Approved above limit"},
    ]


@pytest.mark.anyio
async def test_three_way_match_lists_each_exception_and_blocks_approval() -> None:
    world = World()
    out = await world.ok(
        "run_three_way_match", {"vendorInvoiceId": "VI-2004", "actorId": "USR-004"}
    )
    assert not out["matched"]
    assert [e["message"] for e in out["exceptions"]] == [
        "Line 1: billed at 14.90, the order price is 14.20 (4.93% above; tolerance 2%)."
    ]
    blocked = await world.call(
        "approve_vendor_invoice", {"vendorInvoiceId": "VI-2004", "actorId": "USR-003"}
    )
    assert blocked.output["code"] == "invalid_state"
    assert "failed the three-way match" in blocked.output["message"]


@pytest.mark.anyio
async def test_budget_figures_follow_the_documents() -> None:
    world = World()
    before = await world.ok("get_budget", {"budgetId": "BUD-004"})
    assert (before["committed"], before["remaining"]) == (28755, 169740)
    await world.ok("approve_requisition", {"requisitionId": "REQ-4005", "actorId": "USR-009"})
    after = await world.ok("get_budget", {"budgetId": "BUD-004"})
    assert after["committed"] == 28755 + 3140
    assert after["remaining"] == 169740 - 3140


@pytest.mark.anyio
async def test_shipping_consumes_the_lines_reservations_first() -> None:
    world = World()
    out = await world.ok("ship_sales_order", {"salesOrderId": "SO-5005", "actorId": "USR-009"})
    assert out["progress"] == "shipped"
    assert {
        r["id"]: r["status"]
        for r in world.state["reservations"].values()
        if r["salesOrderId"] == "SO-5005"
    } == {"RES-0007": "consumed", "RES-0008": "consumed"}
    level = await world.ok("get_stock_level", {"productId": "PRD-001", "warehouseId": "WH-001"})
    assert (level["onHand"], level["reserved"], level["available"]) == (48, 0, 48)


@pytest.mark.anyio
async def test_advancing_the_clock_makes_invoices_overdue() -> None:
    world = World()
    assert not (await world.ok("get_customer_invoice", {"invoiceId": "INV-8013"}))["isOverdue"]
    await world.ok("advance_clock", {"days": 1})
    late = await world.ok("get_customer_invoice", {"invoiceId": "INV-8013"})
    assert (late["isOverdue"], late["daysOverdue"]) == (True, 1)


# --- the CLI path a user takes -----------------------------------------------------------------


def test_init_validate_and_list_from_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["init", "x", "--template", "erp"]).exit_code == 0
    validated = runner.invoke(app, ["env", "validate", "--env", "x", "--json"])
    assert validated.exit_code == 0, validated.output
    assert json.loads(validated.output)["ok"] is True
    tools = json.loads(runner.invoke(app, ["tool", "list", "--env", "x", "--json"]).output)
    tasks = json.loads(runner.invoke(app, ["task", "list", "--env", "x", "--json"]).output)
    assert len(tools) >= 150
    assert len(tasks) >= 18
