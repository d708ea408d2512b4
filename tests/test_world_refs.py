"""``w.fields.ref``: an id field that knows its collection, and list filters declared as fields.

A ref reads ``<name>Id`` and gives the record it names (``not_found`` in the one shape of
``require_record``); a list tool's filters are an ``Input`` class like any tool's input, a ref
among them comparing the id. Tools are bound and called for real.
"""

from __future__ import annotations

from typing import Any

import pytest

import silo_async as silo
from silo_async import world as w


def _world() -> dict[str, Any]:
    return {
        "clock": {"now": "2026-03-16T09:00:00Z"},
        "users": {"USR-001": {"id": "USR-001", "name": "Ada"}, "USR-002": {"id": "USR-002"}},
        "rfqs": {"RFQ-1": {"id": "RFQ-1"}},
        "vendors": {
            "VEN-001": {"id": "VEN-001", "name": "Acme", "status": "active", "ownerId": "USR-001"},
            "VEN-002": {"id": "VEN-002", "name": "Bolt", "status": "blocked", "ownerId": "USR-002"},
            "VEN-003": {"id": "VEN-003", "name": "Cog", "status": "active", "ownerId": "USR-002"},
        },
        "auditLog": [],
        "sequences": {},
    }


def _call(tool: silo.Tool, state: Any, input: dict[str, Any]) -> Any:
    result, fault = silo.BoundTool(tool, state).invoke_sync(input)
    assert fault is None
    return result.output


def _error(tool: silo.Tool, state: Any, input: dict[str, Any]) -> tuple[str, str, Any]:
    out = _call(tool, state, input)
    return out["code"], out["message"], out.get("details")


class Owned(w.Input):
    vendor = w.fields.ref("vendors", "The vendor, e.g. VEN-001.")
    owner = w.fields.ref("users", "A user.", default=None, raw=True)


@w.define_tool(Owned)
def describe(state: Any, args: Owned) -> dict[str, Any]:
    """A vendor and, if given, a user."""
    owner = args.owner
    return {"vendor": args.vendor["name"], "owner": None if owner is None else owner["name"]}


def test_a_ref_reads_name_id_with_the_schema_of_a_string() -> None:
    schema = describe.spec.input_schema
    assert schema["properties"] == {
        "vendorId": w.schema.string("The vendor, e.g. VEN-001."),
        "ownerId": w.schema.string("A user."),
    }
    assert schema["required"] == ["vendorId"]
    assert list(w.fields.fields_of(Owned)) == ["vendorId", "ownerId"]
    assert isinstance(Owned.vendor, w.fields.Ref) and Owned.vendor.collection == "vendors"


def test_a_ref_gives_the_record_or_not_found_as_require_record_says_it() -> None:
    state = _world()
    assert _call(describe, state, {"vendorId": " VEN-001 "}) == {"vendor": "Acme", "owner": None}
    assert _call(describe, state, {"vendorId": "VEN-002", "ownerId": "USR-001"})["owner"] == "Ada"
    with pytest.raises(silo.ToolError) as expected:
        w.records.require_record(state, "vendors", "VEN-404")
    assert _error(describe, state, {"vendorId": "VEN-404"}) == (
        "not_found",
        str(expected.value),
        {"collection": "vendors", "id": "VEN-404"},
    )
    assert str(expected.value) == 'Vendor "VEN-404" was not found.'
    # raw=True: the id as given (not stripped), so a padded id names no user
    assert _error(describe, state, {"vendorId": "VEN-001", "ownerId": "USR-001 "})[1] == (
        'User "USR-001 " was not found.'
    )
    blank = _error(describe, state, {"vendorId": "  "})
    assert blank[:2] == ("invalid_input", '"vendorId" must not be empty; received "  ".')


def test_a_ref_is_read_when_asked_for_so_the_body_orders_its_checks() -> None:
    class Pair(w.Input):
        survivor = w.fields.ref("vendors", "Keep.")
        duplicate = w.fields.ref("vendors", "Merge away.")

    @w.define_tool(Pair)
    def merge(state: Any, args: Pair) -> str:
        """Merge."""
        given = w.fields.input_of(args)
        if given["survivorId"] == given["duplicateId"]:
            raise silo.tool_error("invalid_input", "survivorId and duplicateId must differ.")
        return f"{args.duplicate['id']} -> {args.survivor['id']}"

    state = _world()
    same = {"survivorId": "VEN-404", "duplicateId": "VEN-404"}
    assert _error(merge, state, same)[0] == "invalid_input"  # before any lookup
    assert _error(merge, state, {"survivorId": "VEN-001", "duplicateId": "VEN-9"})[1] == (
        'Vendor "VEN-9" was not found.'  # the duplicate is read first
    )
    assert _call(merge, state, {"survivorId": "VEN-001", "duplicateId": "VEN-002"}) == (
        "VEN-002 -> VEN-001"
    )


def test_key_and_label_name_what_the_convention_cannot() -> None:
    class Quote(w.Input):
        rfq = w.fields.ref("rfqs", "The RFQ.", label="RFQ")
        decider = w.fields.ref("users", "Who decided.", key="decidedBy", default=None)

    @w.define_tool(Quote)
    def quote(state: Any, args: Quote) -> Any:
        """Quote."""
        return [args.rfq["id"], args.decider]

    assert list(quote.spec.input_schema["properties"]) == ["rfqId", "decidedBy"]
    state = _world()
    assert _call(quote, state, {"rfqId": "RFQ-1"}) == ["RFQ-1", None]
    assert _error(quote, state, {"rfqId": "RFQ-2"})[1] == 'RFQ "RFQ-2" was not found.'
    assert _error(quote, state, {"rfqId": "RFQ-1", "decidedBy": "USR-9"})[1] == (
        'User "USR-9" was not found.'
    )


def test_a_ref_named_like_its_key_or_read_without_the_world_is_refused() -> None:
    with pytest.raises(silo.DefinitionError, match="name it 'vendor' or pass key='vendorId'"):

        class Wrong(w.Input):
            vendorId = w.fields.ref("vendors", "Vendor.")

    with pytest.raises(TypeError, match="build the view with state="):
        _ = Owned({"vendorId": "VEN-001"}).vendor
    assert Owned({}).owner is None  # an absent optional ref needs no world


def _acting(state: Any, user_id: str) -> Any:
    return w.records.require_record(state, "users", user_id)


ACTOR = w.Actor(w.fields.string("Who acts."), _acting)
VENDOR = w.Target("vendors", "vendorId", w.fields.string("Vendor id."), "vendor")


class Handover(w.Input):
    owner = w.fields.ref("users", "The new owner.", default=None)


@ACTOR.write_tool(Handover, target=VENDOR)
def hand_over(call: w.Write[Handover]) -> Any:
    """Give a vendor to another user."""
    call.set_given(["ownerId"])
    return call.changes


def test_an_update_sets_the_id_a_ref_read() -> None:
    state = _world()
    done = _call(
        hand_over, state, {"vendorId": "VEN-001", "ownerId": " USR-002", "actorId": "USR-001"}
    )
    assert done == [{"field": "ownerId", "from": "USR-001", "to": "USR-002"}]
    missing = _error(
        hand_over, state, {"vendorId": "VEN-001", "ownerId": "U-9", "actorId": "USR-001"}
    )
    assert missing[:2] == ("not_found", 'User "U-9" was not found.')
    assert _call(hand_over, state, {"vendorId": "VEN-001", "actorId": "USR-001"}) == []


def test_a_ref_inside_a_list_of_objects_sees_the_world() -> None:
    class Line(w.Input):
        vendor = w.fields.ref("vendors", "Vendor.")

    class Order(w.Input):
        lines = w.fields.objects("Lines.", Line)

    @w.define_tool(Order)
    def order(state: Any, args: Order) -> list[str]:
        """Order."""
        return [line.vendor["name"] for line in args.lines]

    state = _world()
    lines = [{"vendorId": "VEN-001"}, {"vendorId": "VEN-003"}]
    assert _call(order, state, {"lines": lines}) == ["Acme", "Cog"]
    lines[1]["vendorId"] = "VEN-9"
    assert _error(order, state, {"lines": lines})[1] == 'Vendor "VEN-9" was not found.'


# --- list filters declared as fields ------------------------------------------------------

VENDORS = w.Collection("vendors", "vendorId", "VEN-001")


class VendorFilters(w.Input):
    status = w.fields.enum("Only this status.", ["active", "blocked"], default=None)
    owner = w.fields.ref("users", "Only this owner's.", default=None, raw=True)


class VendorOptions(w.Input):
    named = w.fields.string("Only names with this text.", default=None)


def _named(state: Any, vendor: Any, args: VendorOptions) -> bool:
    return args.named is None or args.named.lower() in vendor["name"].lower()


by_fields = VENDORS.list_tool("Vendors.", filters=VendorFilters, extra=VendorOptions, where=_named)
by_schemas = VENDORS.list_tool(
    "Vendors.",
    filters={
        "status": w.schema.enum("Only this status.", ["active", "blocked"]),
        "ownerId": w.schema.string("Only this owner's."),
    },
    references={"ownerId": "users"},
    extra={"named": w.schema.string("Only names with this text.")},
    where=lambda state, vendor, input: _named(state, vendor, VendorOptions(input)),
)


def test_filters_declared_as_fields_state_the_same_schema_as_schemas() -> None:
    assert by_fields.spec.to_dict() == by_schemas.spec.to_dict()


@pytest.mark.parametrize(
    "given",
    [
        {},
        {"status": "active"},
        {"ownerId": "USR-002"},
        {"ownerId": "USR-002", "status": "active"},
        {"ownerId": "USR-002 "},  # as given: not found
        {"ownerId": "USR-404", "status": "blocked"},
        {"named": "o", "limit": 1, "offset": 1},
        {"status": None, "ownerId": None},
    ],
)
def test_filters_declared_as_fields_answer_as_the_schemas_did(given: dict[str, Any]) -> None:
    assert _call(by_fields, _world(), given) == _call(by_schemas, _world(), given)


def test_a_ref_filter_compares_the_id_and_an_unknown_one_is_not_found() -> None:
    state = _world()
    assert [v["id"] for v in _call(by_fields, state, {"ownerId": "USR-002"})["results"]] == [
        "VEN-002",
        "VEN-003",
    ]
    assert _error(by_fields, state, {"ownerId": "USR-404"})[:2] == (
        "not_found",
        'User "USR-404" was not found.',
    )


def test_a_required_filter_is_required_and_references_need_the_mapping_form() -> None:
    class Mine(w.Input):
        owner = w.fields.ref("users", "Whose.")

    mine = VENDORS.list_tool("Vendors.", filters=Mine)
    assert mine.spec.input_schema["required"] == ["ownerId"]
    assert _call(mine, _world(), {"ownerId": "USR-001"})["total"] == 1
    with pytest.raises(TypeError, match="their collections: w"):
        VENDORS.list_tool("Vendors.", filters=Mine, references={"ownerId": "users"})
