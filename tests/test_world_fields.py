"""silo_async.world typed fields: one declaration gives the schema, the parsed value, the message.

Tools are built the way a world author builds them and called the way the runtime calls them
(``BoundTool.invoke_sync``: the schema check, then the body), so what is asserted is what an
agent sees.
"""

from __future__ import annotations

from typing import Any

import pytest

import silo_async as silo
from silo_async import world as w

# --- the schema comes from the declaration ------------------------------------------------


class Claim(w.Input):
    employeeId = w.fields.string("Who spent the money.")
    category = w.fields.enum("Kind of expense.", ["travel", "meals"])
    amount = w.fields.money("Amount incl. VAT.")
    incurredOn = w.fields.date("When")
    hasReceipt = w.fields.boolean("Whether a receipt is attached.")
    nights = w.fields.integer("Nights away.", minimum=0, maximum=30, default=0)
    rate = w.fields.number("Exchange rate.", minimum=0, default=None)
    tags = w.fields.strings("Labels.", "A label.", default=None)
    note = w.fields.string("Anything to add.", default=None)


def test_the_schema_is_the_builders_in_declaration_order() -> None:
    assert w.fields.schema_of(Claim) == w.schema.closed_object(
        {
            "employeeId": w.schema.string("Who spent the money."),
            "category": w.schema.enum("Kind of expense.", ["travel", "meals"]),
            "amount": w.schema.money("Amount incl. VAT."),
            "incurredOn": w.schema.date("When"),
            "hasReceipt": w.schema.boolean("Whether a receipt is attached."),
            "nights": w.schema.integer("Nights away.", minimum=0, maximum=30),
            "rate": w.schema.number("Exchange rate.", minimum=0),
            "tags": w.schema.array("Labels.", w.schema.string("A label.")),
            "note": w.schema.string("Anything to add."),
        },
        ["employeeId", "category", "amount", "incurredOn", "hasReceipt"],
    )
    assert list(w.fields.fields_of(Claim)) == list(w.fields.schema_of(Claim)["properties"])


def test_parsed_values_are_typed_and_defaults_fill_what_is_not_given() -> None:
    given = {
        "employeeId": "  USR-003 ",
        "category": "meals",
        "amount": 12.345,
        "incurredOn": "2026-03-01",
        "hasReceipt": True,
        "rate": None,  # a strict-mode model's "not given"
        "tags": [" a ", "b"],
    }
    args = Claim(given)
    assert (args.employeeId, args.category, args.amount) == ("USR-003", "meals", 12.35)
    assert (args.incurredOn, args.hasReceipt, args.tags) == ("2026-03-01", True, ["a", "b"])
    assert (args.nights, args.rate, args.note) == (0, None, None)


@pytest.mark.parametrize(
    ("field", "value", "reader", "options"),
    [
        (w.fields.string("S."), "   ", w.fields.read_string, {}),
        (w.fields.string("S."), 5, w.fields.read_string, {}),
        (w.fields.integer("I.", minimum=1), 2.5, w.fields.read_int, {"minimum": 1}),
        (w.fields.integer("I.", bounds=(1, 10)), 11, w.fields.read_int, {"maximum": 10}),
        (w.fields.integer("I."), 2**60, w.fields.read_int, {}),
        (w.fields.number("N."), float("nan"), w.fields.read_number, {}),
        (w.fields.number("N.", maximum=5), 6, w.fields.read_number, {"maximum": 5}),
        (w.fields.money("M."), 0.001, w.fields.read_money, {}),
        (w.fields.money("M.", allow_zero=True), -1, w.fields.read_money, {"allow_zero": True}),
        (w.fields.boolean("B."), 1, w.fields.read_bool, {}),
        (w.fields.date("D."), "2026-02-30", w.fields.read_date, {}),
        (w.fields.strings("L.", "One."), ["a", "a"], w.fields.read_strings, {}),
    ],
)  # fmt: skip
def test_a_field_refuses_with_its_readers_message(
    field: w.fields.Field[Any], value: Any, reader: Any, options: dict[str, Any]
) -> None:
    class One(w.Input):
        x = field

    with pytest.raises(silo.ToolError) as by_reader:
        reader({"x": value}, "x", **options)
    with pytest.raises(silo.ToolError) as by_field:
        _ = One({"x": value}).x
    assert by_field.value.to_output() == by_reader.value.to_output()
    assert by_field.value.code == "invalid_input"


def test_enum_lists_the_allowed_values_and_a_required_field_is_required() -> None:
    with pytest.raises(silo.ToolError) as wrong:
        _ = Claim({"category": "shut"}).category
    assert wrong.value.message == '"category" must be one of: travel, meals; received "shut".'
    with pytest.raises(silo.ToolError, match=r'^"employeeId" is required\.$'):
        _ = Claim({"employeeId": None}).employeeId


def test_fields_are_read_when_first_asked_for_then_kept() -> None:
    args = Claim({"amount": 0, "employeeId": "USR-001"})
    assert args.employeeId == "USR-001"  # a bad amount does not stop reading another field
    with pytest.raises(silo.ToolError, match="positive amount"):
        _ = args.amount
    kept = Claim({"tags": ["x"]})
    assert kept.tags is kept.tags  # read once


def test_raw_fields_take_the_value_as_the_schema_admitted_it() -> None:
    class Raw(w.Input):
        name = w.fields.string("Name.", raw=True)
        count = w.fields.integer("Count.", raw=True)
        day = w.fields.date("Day", raw=True)
        plain = w.fields.field(w.schema.string("As given."), default="none")

    args = Raw({"name": "  padded ", "count": 3.0, "day": "2026-02-30"})
    assert (args.name, args.count, args.day, args.plain) == ("  padded ", 3.0, "2026-02-30", "none")
    assert w.fields.schema_of(Raw)["required"] == ["name", "count", "day"]


def test_a_field_of_any_schema_takes_any_reader() -> None:
    class Deal(w.Input):
        amount = w.fields.field(w.schema.number("USD."), read=w.fields.read_money)

    assert w.fields.schema_of(Deal)["properties"]["amount"] == {
        "type": "number",
        "description": "USD.",
    }
    assert Deal({"amount": 1.005}).amount == 1.01


# --- declaring an Input ------------------------------------------------------------------


def test_subclasses_inherit_fields_and_a_redeclared_one_keeps_its_place() -> None:
    class Base(w.Input):
        a = w.fields.string("A.")
        b = w.fields.string("B.")

    class Child(Base):
        a = w.fields.string("A again.", default="a")
        c = w.fields.string("C.")

    assert list(w.fields.fields_of(Child)) == ["a", "b", "c"]
    assert w.fields.schema_of(Child)["required"] == ["b", "c"]
    assert w.fields.schema_of(Base)["required"] == ["a", "b"]  # the base is untouched


def test_a_python_keyword_takes_a_trailing_underscore() -> None:
    class Move(w.Input):
        from_ = w.fields.string("From.")
        to = w.fields.string("To.")

    assert list(w.fields.schema_of(Move)["properties"]) == ["from", "to"]
    assert Move({"from": "a", "to": "b"}).from_ == "a"


def test_a_field_name_starting_with_an_underscore_is_refused() -> None:
    with pytest.raises(silo.DefinitionError, match="may not start with '_'"):

        class Bad(w.Input):
            _secret = w.fields.string("Hidden.")


def test_given_lists_what_the_input_gives_without_reading_it() -> None:
    args = Claim({"amount": 0, "note": None, "employeeId": "USR-1", "hasReceipt": False})
    assert w.fields.given(args) == ["employeeId", "amount", "hasReceipt"]  # declaration order
    with pytest.raises(silo.ToolError, match="positive amount"):
        _ = args.amount  # given, but judged only when read


def test_read_again_with_a_bound_known_only_at_call_time() -> None:
    class Pay(w.Input):
        amount = w.fields.money("Amount.", default=None)

    args = Pay({"amount": 80})
    assert w.fields.read(args, "amount", maximum=100) == 80
    with pytest.raises(silo.ToolError) as over:
        w.fields.read(args, "amount", maximum=50)
    assert over.value.message == '"amount" must be at most 50; received 80.'
    assert w.fields.read(Pay({}), "amount", default=7) == 7


# --- nested objects -----------------------------------------------------------------------


class Line(w.Input):
    productId = w.fields.string("The product.")
    quantity = w.fields.integer("Units.", minimum=1, bounds=(1, 10_000_000))
    unitPrice = w.fields.money("Price per unit.", default=None)


class Order(w.Input):
    lines = w.fields.objects("What is ordered.", Line)


def test_objects_are_views_whose_messages_name_their_place() -> None:
    assert w.fields.schema_of(Order)["properties"]["lines"] == w.schema.array(
        "What is ordered.", w.fields.schema_of(Line)
    )
    lines = Order(
        {"lines": [{"productId": "P-1", "quantity": 2}, {"productId": " ", "quantity": 1}]}
    ).lines
    assert (lines[0].productId, lines[0].quantity, lines[0].unitPrice) == ("P-1", 2, None)
    with pytest.raises(silo.ToolError) as blank:
        _ = lines[1].productId
    assert blank.value.message == '"lines[1].productId" must not be empty; received " ".'
    assert Line({"quantity": 2}, "line").quantity == 2
    with pytest.raises(silo.ToolError, match=r'^"line.productId" is required\.$'):
        _ = Line({}, "line").productId


# --- tools declared with an Input ---------------------------------------------------------


def _world() -> dict[str, Any]:
    return {
        "clock": {"now": "2026-03-16T09:00:00Z"},
        "users": {"USR-001": {"id": "USR-001"}},
        "vendors": {
            "VEN-001": {"id": "VEN-001", "name": "Acme", "status": "active", "email": None},
        },
        "auditLog": [],
        "sequences": {},
    }


def _call(tool: silo.Tool, state: Any, input: dict[str, Any]) -> Any:
    result, fault = silo.BoundTool(tool, state).invoke_sync(input)
    assert fault is None
    return result.output


class Lookup(w.Input):
    vendorId = w.fields.string("The vendor, e.g. VEN-001.")
    loud = w.fields.boolean("Shout the name.", default=False)


@w.define_tool(Lookup)
def vendor_name(state: Any, args: Lookup) -> str:
    """The name of a vendor."""
    name: str = w.records.require_record(state, "vendors", args.vendorId)["name"]
    return name.upper() if args.loud else name


def test_define_tool_with_an_input_class() -> None:
    assert vendor_name.spec.to_dict() == {
        "name": "vendor_name",
        "description": "The name of a vendor.",
        "inputSchema": w.fields.schema_of(Lookup),
    }
    state = _world()
    assert _call(vendor_name, state, {"vendorId": " VEN-001 ", "loud": True}) == "ACME"
    blank = _call(vendor_name, state, {"vendorId": "  "})
    assert blank["message"] == '"vendorId" must not be empty; received "  ".'
    assert _call(vendor_name, state, {})["code"] == "invalid_input"  # the schema's check


def test_define_tool_with_a_name_description_and_input_and_async_bodies() -> None:
    @w.define_tool("named", "Stated.", Lookup)
    async def body(state: Any, args: Lookup) -> str:
        return args.vendorId

    assert (body.name, body.description, body.is_async) == ("named", "Stated.", True)


def test_required_beside_an_input_class_or_fields_outside_one_are_refused() -> None:
    with pytest.raises(TypeError, match="says which fields are required"):
        w.define_tool(Lookup, ["vendorId"])
    with pytest.raises(TypeError, match="attributes of an Input class"):
        w.define_tool({"vendorId": w.fields.string("Vendor.")}, ["vendorId"])


def _acting_user(state: Any, user_id: str) -> Any:
    return w.records.require_record(state, "users", user_id)


ACTOR = w.Actor(w.fields.string("Who acts."), _acting_user)
VENDOR = w.Target("vendors", "vendorId", w.fields.string("Vendor id."), "vendor")


class Rename(w.Input):
    name = w.fields.string("New name.")
    email = w.fields.string("New email.", default=None)


@ACTOR.write_tool(Rename, target=VENDOR)
def rename_vendor(call: w.Write[Rename]) -> dict[str, Any]:
    """Rename a vendor."""
    call.set_given(("name", "email"))
    return {"changes": call.changes, "auditId": call.audit(f"Renamed to {call.args.name}.")}


def test_write_tool_with_an_input_class() -> None:
    schema = rename_vendor.spec.input_schema
    assert list(schema["properties"]) == ["vendorId", "name", "email", "actorId"]
    assert schema["required"] == ["vendorId", "name", "actorId"]
    state = _world()
    done = _call(
        rename_vendor, state, {"vendorId": " VEN-001", "name": " Acme B.V. ", "actorId": "USR-001 "}
    )
    assert done["changes"] == [
        {"field": "name", "from": "Acme", "to": "Acme B.V."}
    ]  # read stripped
    assert state["auditLog"][0]["actorId"] == "USR-001"
    assert state["auditLog"][0]["detail"] == "Renamed to Acme B.V.."
    refused = _call(rename_vendor, state, {"vendorId": "VEN-001", "name": "X", "actorId": " "})
    assert refused["message"] == '"actorId" must not be empty; received " ".'


def test_the_actor_key_among_a_tools_own_fields_keeps_its_place() -> None:
    class Cancel(w.Input):
        actorId = w.fields.string("Who acts.")
        reason = w.fields.string("Why.")

    @ACTOR.write_tool(Cancel, target=VENDOR)
    def cancel(call: w.Write[Cancel]) -> str:
        """Cancel."""
        return call.args.reason

    schema = cancel.spec.input_schema
    assert list(schema["properties"]) == ["vendorId", "actorId", "reason"]
    assert schema["required"] == ["vendorId", "reason", "actorId"]


def test_a_tool_declared_with_schema_properties_still_gets_the_input_as_given() -> None:
    @ACTOR.write_tool({"name": w.schema.string("Name.")}, ["name"], target=VENDOR)
    def old_style(call: w.Write) -> Any:
        """The input as given."""
        return [call.args, call.input["name"]]

    assert _call(
        old_style, _world(), {"vendorId": "VEN-001", "name": " x ", "actorId": "USR-001"}
    ) == [None, " x "]


# --- lists, references and updates take the typed view ------------------------------------


def test_collection_filters_declared_as_fields_are_read_by_them() -> None:
    vendors = w.Collection("vendors", "vendorId", "VEN-001")
    by_field = vendors.list_tool("Vendors.", filters={"status": w.fields.string("Status.")})
    by_schema = vendors.list_tool("Vendors.", filters={"status": w.schema.string("Status.")})
    assert by_field.spec.input_schema == by_schema.spec.input_schema
    state = _world()
    assert _call(by_field, state, {"status": " active "})["total"] == 1
    assert _call(by_schema, state, {"status": " active "})["total"] == 0  # compared as given


def test_paginate_references_and_require_some_take_an_input() -> None:
    class Page(w.Input):
        vendorId = w.fields.string("Vendor.", default=None)
        limit = w.fields.LIMIT
        offset = w.fields.OFFSET

    args = Page({"vendorId": " VEN-404", "limit": 2, "offset": 1})
    assert w.tools.paginate(list(range(5)), args)["results"] == [1, 2]
    assert (args.limit, args.offset) == (2, 1)
    assert w.fields.schema_of(Page)["properties"]["limit"] == w.schema.PAGING["limit"]
    with pytest.raises(silo.ToolError) as missing:
        w.records.check_references(_world(), args, {"vendorId": "vendors"})
    assert missing.value.details == {"collection": "vendors", "id": "VEN-404"}  # read stripped
    with pytest.raises(silo.ToolError, match="give at least one of vendorId"):
        w.fields.require_some(Page({}), ["vendorId"])
