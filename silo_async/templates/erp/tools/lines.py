"""Document lines: reading them from input, and the add / update / remove line tools.

Requisitions, purchase orders and sales orders keep ``lines`` of ``{lineNo, productId,
quantity, <price>}``; a line's number never changes once given. Lines can be edited only while
the document is a draft; every product must be active and appear once per document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Record, State, find_line
from .common import actor, in_status, target

__all__ = ["LINE_ITEM", "PriceDefault", "line_tools", "read_lines"]

#: ``default(state, document_or_input, product)``: the price of a line given without one.
PriceDefault = Callable[[State, Mapping[str, Any], Record], float]

LINE_ITEM = w.schema.closed_object(
    {
        "productId": w.schema.string("The product."),
        "quantity": w.schema.integer("Units.", minimum=1),
        "unitPrice": w.schema.money("Price per unit (default depends on the document)."),
    },
    ["productId", "quantity"],
)


def _product(state: State, product_id: str, path: str) -> Record:
    product: Record = w.records.require_record(state, "products", product_id)
    if product["status"] != "active":
        raise silo.tool_error(
            "not_allowed",
            f"{path}: product {product['id']} ({product['name']}) is discontinued.",
            {"productId": product["id"], "status": product["status"]},
        )
    return product


def _line(
    state: State,
    item: Mapping[str, Any],
    path: str,
    price_key: str,
    default: PriceDefault,
    context: Mapping[str, Any],
    number: int,
) -> Record:
    product = _product(state, w.fields.read_string(item, "productId", path=path), path)
    price = w.fields.read_money(item, "unitPrice", None, path=path)
    return {
        "lineNo": number,
        "productId": product["id"],
        "quantity": w.fields.read_int(item, "quantity", minimum=1, maximum=10_000_000, path=path),
        price_key: default(state, context, product) if price is None else price,
    }


def read_lines(
    state: State,
    input: Mapping[str, Any],
    price_key: str,
    default: PriceDefault,
    context: Mapping[str, Any] | None = None,
) -> list[Record]:
    """``input["lines"]`` as document lines numbered from 1 (one line per product)."""
    lines = []
    for index, item in enumerate(w.fields.read_objects(input, "lines")):
        lines.append(
            _line(state, item, f"lines[{index}]", price_key, default, context or input, index + 1)
        )
    seen = [ln["productId"] for ln in lines]
    repeated = sorted({p for p in seen if seen.count(p) > 1})
    if repeated:
        raise silo.tool_error(
            "invalid_input", f"Give each product once: {', '.join(repeated)} appear twice."
        )
    return lines


def _find(document: Record, line_no: int) -> Record:
    found = find_line(document, line_no)
    if found is not None:
        return found
    numbers = ", ".join(str(ln["lineNo"]) for ln in document["lines"]) or "none"
    raise silo.tool_error(
        "not_found",
        f"{document['id']} has no line {line_no} (lines: {numbers}).",
        {"collection": "lines", "id": line_no},
    )


def line_tools(
    noun: str,
    collection: str,
    id_key: str,
    price_key: str,
    default: PriceDefault,
    area: str | None,
) -> tuple[silo.Tool, silo.Tool, silo.Tool]:
    """``add_<noun>_line``, ``update_<noun>_line`` and ``remove_<noun>_line`` for drafts.

    ``area`` is the permission the actor needs (None: any active user).
    """
    label = noun.replace("_", " ")
    price_schema = w.schema.money("Price per unit.")
    by = actor() if area is None else actor(area)
    plain = target(collection, id_key, f"The {label}.", collection[:-1])
    draft = in_status(plain, ("draft",), "have its lines edited")

    def done(call: w.Write, text: str) -> Any:
        # The entry lists no field changes (lines are not fields), as it always has.
        return {"updated": call.record, "auditId": call.audit(text, ())}

    @by.write_tool(
        f"add_{noun}_line",
        f"Add a product line to a draft {label}.",
        {
            "productId": w.schema.string("The product."),
            "quantity": w.schema.integer("Units.", minimum=1),
            "unitPrice": price_schema,
        },
        ["productId", "quantity"],
        target=draft,
    )
    def add_line(call: w.Write) -> Any:
        state, document = call.state, call.record
        number = max((ln["lineNo"] for ln in document["lines"]), default=0) + 1
        line = _line(state, call.input, "line", price_key, default, document, number)
        if any(ln["productId"] == line["productId"] for ln in document["lines"]):
            raise silo.tool_error(
                "conflict", f"{document['id']} already has a line for {line['productId']}."
            )
        document["lines"].append(line)
        return done(call, f"Added line {number}.")

    @by.write_tool(
        f"update_{noun}_line",
        f"Change the quantity and/or unit price of a line of a draft {label}.",
        {
            "lineNo": w.schema.integer("The line.", minimum=1),
            "quantity": w.schema.integer("New units.", minimum=1),
            "unitPrice": price_schema,
        },
        ["lineNo"],
        target=draft,
    )
    def update_line(call: w.Write) -> Any:
        input = call.input
        line = _find(call.record, w.fields.read_int(input, "lineNo", minimum=1))
        w.fields.require_some(input, ["quantity", "unitPrice"])
        changes: list[w.records.Change] = []
        quantity = w.fields.read_int(input, "quantity", None, minimum=1, maximum=10_000_000)
        price = w.fields.read_money(input, "unitPrice", None)
        for field, value in (("quantity", quantity), (price_key, price)):
            if value is not None:
                w.records.set_field(line, field, value, changes)
        return done(call, f"Changed line {line['lineNo']}.")

    @by.write_tool(
        f"remove_{noun}_line",
        f"Remove a line from a draft {label} (the other lines keep their numbers).",
        {"lineNo": w.schema.integer("The line.", minimum=1)},
        ["lineNo"],
        target=draft,
    )
    def remove_line(call: w.Write) -> Any:
        line = _find(call.record, w.fields.read_int(call.input, "lineNo", minimum=1))
        call.record["lines"].remove(line)
        return done(call, f"Removed line {line['lineNo']}.")

    return add_line, update_line, remove_line
