"""silo_async.world lists, records, clock and audit: the shared tools, bound for real."""

from __future__ import annotations

from typing import Any

import pytest

import silo_async as silo
from silo_async import world as w

pytestmark = pytest.mark.anyio


def _world() -> dict[str, Any]:
    return {
        "clock": {"now": "2026-03-16T09:00:00Z", "timezone": "UTC"},
        "vendors": {
            f"VEN-{i:03d}": {
                "id": f"VEN-{i:03d}",
                "name": name,
                "status": status,
                "ownerId": owner,
            }
            for i, (name, status, owner) in enumerate(
                [
                    ("Acme Bearings", "active", "USR-001"),
                    ("Borealis Fasteners", "blocked", "USR-002"),
                    ("Café Crème Tools", "active", "USR-001"),
                ],
                start=1,
            )
        },
        "users": {"USR-001": {"id": "USR-001"}, "USR-002": {"id": "USR-002"}},
        "auditLog": [],
        "sequences": {"VEN": 3},
    }


views: list[str] = []


def _view(state: Any, record: Any) -> dict[str, Any]:
    views.append(record["id"])
    return {"id": record["id"], "upper": record["name"].upper()}


TOOLS = [
    w.tools.list_tool(
        "list_vendors",
        "List vendors.",
        "vendors",
        filters={
            "status": w.schema.enum("Status.", ["active", "blocked"]),
            "ownerId": w.schema.string("Owner."),
        },
        references={"ownerId": "users"},
        view=_view,
    ),
    w.tools.search_tool("search_vendors", "Search vendors.", "vendors", ["name"]),
    w.tools.get_tool("get_vendor", "One vendor.", "vendors", "vendorId", "VEN-001", view=_view),
    w.tools.get_current_time,
    w.tools.advance_clock,
    w.tools.list_audit_entries,
    w.tools.get_audit_entry,
]


class Bound:
    def __init__(self) -> None:
        self.state = _world()
        self.tools = {t.name: t for t in silo.bind_tools(self.state, TOOLS)}

    async def call(self, name: str, args: dict[str, Any] | None = None) -> silo.ToolResult:
        result, fault = await self.tools[name].invoke(args or {})
        assert fault is None, fault
        return result


def test_paginate_views_the_page_only() -> None:
    seen: list[int] = []

    def view(n: int) -> int:
        seen.append(n)
        return n

    page = w.tools.paginate(list(range(10)), {"limit": 3, "offset": 4}, view)
    assert page == {"total": 10, "count": 3, "offset": 4, "results": [4, 5, 6]}
    assert seen == [4, 5, 6]
    assert w.tools.paginate([1, 2], {}) == {"total": 2, "count": 2, "offset": 0, "results": [1, 2]}


def test_paginate_limits_in_house_style() -> None:
    with pytest.raises(silo.ToolError) as caught:
        w.tools.paginate([], {"limit": 501})
    assert caught.value.code == "invalid_input"
    assert caught.value.message == f'"limit" must be at most {w.schema.MAX_LIMIT}; received 501.'
    with pytest.raises(silo.ToolError, match=r'^"offset" must be at least 0; received -1\.$'):
        w.tools.paginate([], {"offset": -1})


async def test_list_tool_filters_checks_references_and_views_the_page() -> None:
    world = Bound()
    views.clear()
    page = (await world.call("list_vendors", {"ownerId": "USR-001", "limit": 1})).output
    assert page == {
        "total": 2,
        "count": 1,
        "offset": 0,
        "results": [{"id": "VEN-001", "upper": "ACME BEARINGS"}],
    }
    assert views == ["VEN-001"]
    missing = await world.call("list_vendors", {"ownerId": "USR-404"})
    assert missing.is_error
    assert missing.output == {
        "code": "not_found",
        "message": 'User "USR-404" was not found.',
        "details": {"collection": "users", "id": "USR-404"},
    }
    schema = world.tools["list_vendors"].spec.input_schema
    assert list(schema["properties"]) == ["status", "ownerId", "limit", "offset"]
    assert schema["additionalProperties"] is False


async def test_search_tool_is_case_and_accent_insensitive_and_searches_ids() -> None:
    world = Bound()
    hits = (await world.call("search_vendors", {"query": "cafe creme"})).output
    assert [r["id"] for r in hits["results"]] == ["VEN-003"]
    hits = (await world.call("search_vendors", {"query": "ven-00"})).output
    assert hits["total"] == 3


async def test_get_tool_and_not_found_details() -> None:
    world = Bound()
    assert (await world.call("get_vendor", {"vendorId": "VEN-002"})).output["upper"] == (
        "BOREALIS FASTENERS"
    )
    missing = await world.call("get_vendor", {"vendorId": "VEN-404"})
    assert missing.output["message"] == 'Vendor "VEN-404" was not found.'
    assert missing.output["details"] == {"collection": "vendors", "id": "VEN-404"}


PURCHASE_ORDERS = w.Collection("purchaseOrders", "purchaseOrderId", "PO-1007", view=_view)


def test_a_collection_names_its_read_tools_after_itself() -> None:
    listed = PURCHASE_ORDERS.list_tool("List orders.")
    searched = PURCHASE_ORDERS.search_tool("Find orders.", ["name"])
    got = PURCHASE_ORDERS.get_tool("One order.")
    assert [listed.name, searched.name, got.name] == [
        "list_purchase_orders",
        "search_purchase_orders",
        "get_purchase_order",
    ]
    assert got.spec.to_dict() == (
        w.tools.get_tool(
            "get_purchase_order", "One order.", "purchaseOrders", "purchaseOrderId", "PO-1007"
        ).spec.to_dict()
    )
    assert PURCHASE_ORDERS.list_tool("Pending.", name="list_pending_orders").name == (
        "list_pending_orders"
    )


async def test_a_collection_s_tools_share_its_view_unless_they_say_otherwise() -> None:
    vendors = w.Collection("vendors", "vendorId", "VEN-001", view=_view)
    tools = [
        vendors.list_tool("List."),
        vendors.get_tool("One vendor, as stored.", view=None),
        vendors.search_tool("Find.", ["name"], view=lambda state, v: v["name"]),
    ]
    bound = {t.name: t for t in silo.bind_tools(_world(), tools)}
    listed, _ = await bound["list_vendors"].invoke({"limit": 1})
    assert listed.output["results"] == [{"id": "VEN-001", "upper": "ACME BEARINGS"}]
    got, _ = await bound["get_vendor"].invoke({"vendorId": "VEN-002"})
    assert got.output["status"] == "blocked"
    found, _ = await bound["search_vendors"].invoke({"query": "cafe"})
    assert found.output["results"] == ["Café Crème Tools"]


def test_a_get_tool_needs_the_collection_s_id_key_and_example() -> None:
    with pytest.raises(silo.DefinitionError, match="Collection 'stages' needs id_key and example"):
        w.Collection("stages").get_tool("One stage.")


def test_require_status_names_current_and_needed() -> None:
    order = {"id": "PO-204", "status": "draft"}
    w.records.require_status(order, "purchaseOrders", ["draft"], "be edited")
    with pytest.raises(silo.ToolError) as caught:
        w.records.require_status(
            order, "purchaseOrders", ["approved", "sent", "received"], "be received"
        )
    assert caught.value.code == "invalid_state"
    assert caught.value.message == (
        "Purchase order PO-204 is draft; it must be approved, sent or received to be received."
    )
    assert caught.value.details == {
        "collection": "purchaseOrders",
        "id": "PO-204",
        "status": "draft",
        "allowed": ["approved", "sent", "received"],
    }
    with pytest.raises(silo.ToolError, match="is blocked; it must be active to order"):
        w.records.require_status(
            {"id": "V-1", "state": "blocked"}, "vendors", ["active"], "order", "state"
        )
    with pytest.raises(
        silo.ToolError, match=r"^RFQ RFQ-001 is draft; it must be sent to be closed"
    ):
        w.records.require_status(
            {"id": "RFQ-001", "status": "draft"}, "rfqs", ["sent"], "be closed", label="RFQ"
        )


def test_labels_and_ids() -> None:
    assert w.records.label_of("purchaseOrders") == "Purchase order"
    assert w.records.label_of("activities") == "Activity"
    assert w.records.label_of("addresses") == "Address"
    assert w.records.label_of("inventory") == "Inventory"
    state: dict[str, Any] = {"sequences": {"PO": 209}}
    assert w.records.next_id(state, "PO") == "PO-210"
    assert w.records.next_id(state, "AUD", width=4) == "AUD-0001"
    assert state["sequences"] == {"PO": 210, "AUD": 1}
    assert w.records.format_id("WI", 7) == "WI-007"


def test_set_field_tracks_changes() -> None:
    record: dict[str, Any] = {"a": 1, "b": 1}
    changes: list[w.records.Change] = []
    assert w.records.set_field(record, "a", 2, changes)
    assert not w.records.set_field(record, "b", 1, changes)
    assert w.records.set_field(record, "b", 1.0, changes)  # 1 -> 1.0 is a change in JSON
    assert changes == [{"field": "a", "from": 1, "to": 2}, {"field": "b", "from": 1, "to": 1.0}]


async def test_clock_tools_move_time_and_audit_it() -> None:
    world = Bound()
    assert (await world.call("get_current_time")).output == {
        "now": "2026-03-16T09:00:00Z",
        "today": "2026-03-16",
        "weekday": "Monday",
        "timezone": "UTC",
    }
    moved = await world.call("advance_clock", {"days": 3, "hours": 20, "reason": "month end"})
    assert moved.output["previous"] == "2026-03-16T09:00:00Z"
    assert moved.output["now"] == "2026-03-20T05:00:00Z"
    assert moved.output["auditId"] == "AUD-0001"
    entry = world.state["auditLog"][0]
    assert entry == {
        "id": "AUD-0001",
        "at": "2026-03-20T05:00:00Z",
        "actorId": "system",
        "action": "advance_clock",
        "entityType": "clock",
        "entityId": "clock",
        "detail": "Clock moved 3 day(s) and 20 hour(s): month end.",
        "changes": [{"field": "now", "from": "2026-03-16T09:00:00Z", "to": "2026-03-20T05:00:00Z"}],
    }
    nothing = await world.call("advance_clock", {})
    assert nothing.output["code"] == "invalid_input"
    too_far = await world.call("advance_clock", {"days": w.clock.MAX_ADVANCE_DAYS + 1})
    assert too_far.is_error


async def test_audit_lists_oldest_first_with_filters() -> None:
    world = Bound()
    for vendor in ("VEN-001", "VEN-002", "VEN-001"):
        w.records.audit(world.state, "USR-001", "update_vendor", "vendor", vendor, "Updated.")
    page = (await world.call("list_audit_entries", {"entityId": "VEN-001"})).output
    assert [e["id"] for e in page["results"]] == ["AUD-0001", "AUD-0003"]
    one = (await world.call("get_audit_entry", {"auditId": "AUD-0002"})).output
    assert one["entityId"] == "VEN-002"
    missing = await world.call("get_audit_entry", {"auditId": "AUD-9999"})
    assert missing.output["details"] == {"collection": "auditLog", "id": "AUD-9999"}
    initial = {"auditLog": world.state["auditLog"][:1]}
    assert [e["id"] for e in w.grade.new_audit_entries(world.state, initial)] == [
        "AUD-0002",
        "AUD-0003",
    ]


def test_written_by_checks_who_made_every_new_entry() -> None:
    world = Bound()
    initial: dict[str, list[dict[str, str]]] = {"auditLog": []}
    nobody = w.grade.written_by(world.state, initial, "USR-001")
    assert (nobody.passed, nobody.detail) == (True, "0 entries by USR-001")
    w.records.audit(world.state, "USR-001", "update_vendor", "vendor", "VEN-001", "Updated.")
    w.records.audit(world.state, "USR-002", "block_vendor", "vendor", "VEN-002", "Blocked.")
    mixed = w.grade.written_by(world.state, initial, "USR-001")
    assert mixed.label == "every change was made as USR-001" and mixed.required
    assert (mixed.passed, mixed.detail) == (False, "AUD-0002 block_vendor by USR-002")
    # With two people acting, each is held to the actions that are theirs.
    assert w.grade.written_by(world.state, initial, "USR-001", {"update_vendor"}).passed
    assert w.grade.written_by(world.state, initial, "USR-002", {"block_vendor"}, label="x").passed
    either = w.grade.written_by(world.state, initial, ["USR-002", "USR-001"])
    assert (either.label, either.passed) == ("every change was made as USR-001 or USR-002", True)


def test_dates() -> None:
    assert w.clock.add_days("2026-02-27", 2) == "2026-03-01"
    assert w.clock.days_between("2026-03-16T09:00:00Z", "2026-03-01") == -15
    state = {"clock": {"now": "2026-03-16T09:00:00Z"}}
    assert (w.clock.now(state), w.clock.today(state)) == ("2026-03-16T09:00:00Z", "2026-03-16")
