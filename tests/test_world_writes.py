"""silo_async.world write tools: the actor, the target, tracked changes and the audit entry."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

import silo_async as silo
from silo_async import world as w

pytestmark = pytest.mark.anyio


def _world() -> dict[str, Any]:
    return {
        "clock": {"now": "2026-03-16T09:00:00Z"},
        "users": {
            "USR-001": {"id": "USR-001", "active": True},
            "USR-002": {"id": "USR-002", "active": False},
        },
        "vendors": {
            "VEN-001": {"id": "VEN-001", "name": "Acme", "status": "active", "email": None},
            "VEN-002": {"id": "VEN-002", "name": "Borealis", "status": "merged", "email": None},
        },
        "auditLog": [],
        "sequences": {"VEN": 2},
    }


def _acting_user(state: Any, user_id: str) -> Any:
    user = w.records.require_record(state, "users", user_id)
    if not user["active"]:
        raise silo.tool_error("not_allowed", f"User {user_id} has left.")
    return user


def _not_merged(state: Any, vendor: Any) -> None:
    if vendor["status"] == "merged":
        raise silo.tool_error("invalid_state", f"Vendor {vendor['id']} was merged.")


ACTOR = w.Actor(w.schema.string("Who acts."), _acting_user)
FIRST = w.Actor(w.schema.string("Who acts."), _acting_user, first=True)
VENDOR = w.Target("vendors", "vendorId", w.schema.string("Vendor id."), "vendor")
LIVE_VENDOR = VENDOR.guarded(_not_merged)


@ACTOR.write_tool(
    "block_vendor",
    "Block a vendor.",
    {"reason": w.schema.string("Why.")},
    ["reason"],
    target=LIVE_VENDOR,
)
def block_vendor(call: w.Write) -> dict[str, Any]:
    """Block one vendor."""
    call.set("status", "blocked")
    call.set("name", call.record["name"])  # unchanged: not a change
    return {"changes": call.changes, "auditId": call.audit(f"Blocked: {call.input['reason']}")}


@ACTOR.write_tool(
    "update_vendor",
    "Change a vendor's name or email.",
    {"name": w.schema.string("New name."), "email": w.schema.string("New email.")},
    target=VENDOR,
)
def update_vendor(call: w.Write) -> dict[str, Any]:
    """Set the fields given."""
    call.set_given(("email", "name"))
    return {"changes": call.changes, "auditId": call.audit("Updated.", entity="supplier")}


@FIRST.write_tool("create_vendor", "Create a vendor.", {"name": w.schema.string("Name.")}, ["name"])
def create_vendor(call: w.Write) -> dict[str, Any]:
    """Register a vendor."""
    vendor = {
        "id": w.records.next_id(call.state, "VEN"),
        "name": call.input["name"],
        "status": "active",
    }
    return {"created": vendor, "auditId": call.add(VENDOR, vendor, "Created.")}


@ACTOR.write_tool("touch", "Audit without a target or an entity.")
def touch(call: w.Write) -> str:
    """Fails: nothing to name in the audit entry."""
    return call.audit("Touched.")


READ_VENDOR = w.Target(
    "vendors", "vendorId", w.schema.string("Vendor id."), "vendor", read=w.fields.read_string
)


@ACTOR.write_tool(
    "rename_vendor", "Rename.", {"name": w.schema.string("Name.")}, ["name"], target=READ_VENDOR
)
def rename_vendor(call: w.Write) -> dict[str, Any]:
    """Rename a vendor whose id may come padded."""
    call.set("name", call.input["name"])
    return {"id": call.record["id"], "changes": call.changes}


TOOLS = [block_vendor, update_vendor, create_vendor, touch, rename_vendor]


class Bound:
    def __init__(self) -> None:
        self.state = _world()
        self.tools = {t.name: t for t in silo.bind_tools(self.state, TOOLS)}

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        result, fault = await self.tools[name].invoke(args)
        if fault is not None:
            return fault
        return result.output


def test_schemas_put_the_target_first_and_the_actor_last_or_first() -> None:
    schema = block_vendor.spec.input_schema
    assert list(schema["properties"]) == ["vendorId", "reason", "actorId"]
    assert schema["required"] == ["vendorId", "reason", "actorId"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["vendorId"] == w.schema.string("Vendor id.")
    assert update_vendor.spec.input_schema["required"] == ["vendorId", "actorId"]
    created = create_vendor.spec.input_schema
    assert list(created["properties"]) == ["actorId", "name"]
    assert created["required"] == ["actorId", "name"]
    assert inspect.unwrap(block_vendor.fn).__doc__ == "Block one vendor."


async def test_the_actor_is_resolved_before_the_target_is_looked_up() -> None:
    world = Bound()
    gone = {"vendorId": "VEN-999", "reason": "x", "actorId": "USR-002"}
    assert (await world.call("block_vendor", gone))["code"] == "not_allowed"
    unknown = await world.call("block_vendor", {**gone, "actorId": "USR-404"})
    assert unknown["details"] == {"collection": "users", "id": "USR-404"}
    missing = await world.call("block_vendor", {**gone, "actorId": "USR-001"})
    assert missing == {
        "code": "not_found",
        "message": 'Vendor "VEN-999" was not found.',
        "details": {"collection": "vendors", "id": "VEN-999"},
    }
    merged = await world.call("block_vendor", {**gone, "vendorId": "VEN-002", "actorId": "USR-001"})
    assert merged == {"code": "invalid_state", "message": "Vendor VEN-002 was merged."}
    assert world.state["auditLog"] == []
    assert world.state["vendors"]["VEN-002"]["status"] == "merged"


async def test_changes_are_tracked_and_audited_under_the_tool_name() -> None:
    world = Bound()
    out = await world.call(
        "block_vendor", {"vendorId": "VEN-001", "reason": "fraud", "actorId": "USR-001"}
    )
    change = {"field": "status", "from": "active", "to": "blocked"}
    assert out == {"changes": [change], "auditId": "AUD-0001"}
    assert world.state["auditLog"] == [
        {
            "id": "AUD-0001",
            "at": "2026-03-16T09:00:00Z",
            "actorId": "USR-001",
            "action": "block_vendor",
            "entityType": "vendor",
            "entityId": "VEN-001",
            "detail": "Blocked: fraud",
            "changes": [change],
        }
    ]


async def test_set_given_follows_the_order_asked_and_entity_can_be_named() -> None:
    world = Bound()
    args = {"vendorId": "VEN-001", "name": "Acme BV", "email": "ap@acme.test", "actorId": "USR-001"}
    out = await world.call("update_vendor", args)
    assert [c["field"] for c in out["changes"]] == ["email", "name"]
    assert world.state["auditLog"][0]["entityType"] == "supplier"
    only_name = await world.call("update_vendor", {**args, "name": "Acme", "email": "ap@acme.test"})
    assert only_name["changes"] == [{"field": "name", "from": "Acme BV", "to": "Acme"}]


async def test_add_stores_the_record_and_audits_its_creation() -> None:
    world = Bound()
    out = await world.call("create_vendor", {"actorId": "USR-001", "name": "Cedar"})
    assert out["created"]["id"] == "VEN-003"
    assert world.state["vendors"]["VEN-003"] is not out["created"]  # the agent got a copy
    assert world.state["vendors"]["VEN-003"]["name"] == "Cedar"
    entry = world.state["auditLog"][0]
    assert (entry["action"], entry["entityType"], entry["entityId"], entry["changes"]) == (
        "create_vendor",
        "vendor",
        "VEN-003",
        [],
    )


async def test_audit_without_target_or_entity_is_a_definition_error() -> None:
    world = Bound()
    fault = await world.call("touch", {"actorId": "USR-001"})
    assert isinstance(fault, silo.ToolFault)
    assert fault.message == "touch: audit() needs entity and entity_id"


async def test_a_target_can_read_its_id_with_a_reader() -> None:
    world = Bound()
    args = {"vendorId": " VEN-001 ", "name": "Acme BV", "actorId": "USR-001"}
    out = await world.call("rename_vendor", args)
    assert out == {"id": "VEN-001", "changes": [{"field": "name", "from": "Acme", "to": "Acme BV"}]}
    blank = await world.call("rename_vendor", {**args, "vendorId": "  "})
    assert blank["code"] == "invalid_input"
    assert blank["message"].startswith('"vendorId" must not be empty')
    padded = {"vendorId": " VEN-001 ", "reason": "x", "actorId": "USR-001"}
    as_given = await world.call("block_vendor", padded)  # no reader: the id as given
    assert as_given["details"] == {"collection": "vendors", "id": " VEN-001 "}


@ACTOR.write_tool({"reason": w.schema.string("Why.")}, ["reason"], target=LIVE_VENDOR)
def suspend_vendor(call: w.Write) -> dict[str, Any]:
    """Suspend a vendor that is not merged; its open orders stay as
    they are.

    Developer notes: this paragraph is not part of the description.
    """
    call.set("status", "suspended")
    return {"auditId": call.audit("Suspended.")}


async def test_a_write_tool_is_named_and_described_by_its_function() -> None:
    assert suspend_vendor.name == "suspend_vendor"
    assert suspend_vendor.description == (
        "Suspend a vendor that is not merged; its open orders stay as they are."
    )
    assert suspend_vendor.input_schema == block_vendor.input_schema
    bound = {t.name: t for t in silo.bind_tools(_world(), [suspend_vendor])}
    result, _ = await bound["suspend_vendor"].invoke(
        {"vendorId": "VEN-001", "reason": "late", "actorId": "USR-001"}
    )
    assert result.output == {"auditId": "AUD-0001"}


def test_a_declared_name_or_description_wins_over_the_function() -> None:
    @ACTOR.write_tool(name="pause_vendor", description="Pause.", target=VENDOR)
    def anything(call: w.Write) -> None:
        """Not what the agent reads."""

    assert (anything.name, anything.description) == ("pause_vendor", "Pause.")

    @w.define_tool({"q": w.schema.string("Query.")}, ["q"], name="find")
    def lookup(state: Any, input: dict[str, Any]) -> None:
        """Find things."""

    assert (lookup.name, lookup.description) == ("find", "Find things.")
    assert lookup.input_schema["required"] == ["q"]


def test_both_declaration_forms_give_the_same_tool() -> None:
    def body(state: Any, input: dict[str, Any]) -> None:
        """Count vendors."""

    props = {"status": w.schema.string("Only this status.")}
    short = w.define_tool(props)(body)
    named = w.define_tool("body", "Count vendors.", props)(body)
    keyed = w.define_tool(properties=props)(body)
    assert short.spec.to_dict() == named.spec.to_dict() == keyed.spec.to_dict()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (("count_vendors",), "needs its description next to it"),
        (("count_vendors", {"a": w.schema.string("A.")}), "needs its description next to it"),
        (({}, [], "extra"), "takes an Input class, (properties, required) or (name, description"),
    ],
)
def test_a_malformed_declaration_says_which_forms_there_are(
    spec: tuple[Any, ...], message: str
) -> None:
    with pytest.raises(TypeError, match=re.escape(message)):
        w.define_tool(*spec)
    with pytest.raises(TypeError, match=re.escape(message)):
        ACTOR.write_tool(*spec)


def test_a_tool_with_neither_description_nor_docstring_is_refused_when_defined() -> None:
    def undocumented(call: Any, input: Any = None) -> None:
        return None

    message = 'Tool "undocumented" has no description: give its function a docstring'
    with pytest.raises(silo.DefinitionError, match=message) as caught:
        ACTOR.write_tool(target=VENDOR)(undocumented)
    assert caught.value.code == "definition_invalid"
    with pytest.raises(silo.DefinitionError, match=message):
        w.define_tool()(undocumented)
    assert w.define_tool(description="Stated.")(undocumented).description == "Stated."
