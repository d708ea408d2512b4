"""Document lines: reading them from input, and the add / update / remove line tools.

Requisitions, purchase orders and sales orders keep ``lines`` of ``{lineNo, productId,
quantity, <price>}``; a line's number never changes once given. Lines can be edited only while
the document is a draft; every product must be active and appear once per document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Record, State, find_line
from .common import actor, in_status, target

__all__ = ["LineItem", "PriceDefault", "line_tools", "read_lines"]

#: ``default(state, document_or_context, product)``: the price of a line given without one.
PriceDefault = Callable[[State, Mapping[str, Any], Record], float]

#: The most units one line may hold (read, not stated in the schema).
_MAX_UNITS = 10_000_000


class LineItem(w.Input):
    """A document line as a tool's input gives it."""

    productId = w.fields.string("The product.")
    quantity = w.fields.integer("Units.", minimum=1, bounds=(1, _MAX_UNITS))
    unitPrice = w.fields.money("Price per unit (default depends on the document).", default=None)


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
    item: LineItem,
    path: str,
    price_key: str,
    default: PriceDefault,
    context: Mapping[str, Any],
    number: int,
) -> Record:
    """A document line (numbered ``number``) from ``item``, which sits at ``path`` of the input."""
    product = _product(state, item.productId, path)
    price = item.unitPrice
    return {
        "lineNo": number,
        "productId": product["id"],
        "quantity": item.quantity,
        price_key: default(state, context, product) if price is None else price,
    }


def read_lines(
    state: State,
    items: Sequence[LineItem],
    price_key: str,
    default: PriceDefault,
    context: Mapping[str, Any],
) -> list[Record]:
    """``items`` (an input's ``lines``) as document lines numbered from 1 (one per product)."""
    lines = []
    for index, item in enumerate(items):
        lines.append(_line(state, item, f"lines[{index}]", price_key, default, context, index + 1))
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


class _NewLine(LineItem):
    unitPrice = w.fields.money("Price per unit.", default=None)


class _LineNo(w.Input):
    lineNo = w.fields.integer("The line.", minimum=1)


class _LineChange(_LineNo):
    quantity = w.fields.integer("New units.", minimum=1, bounds=(1, _MAX_UNITS), default=None)
    unitPrice = w.fields.money("Price per unit.", default=None)


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
    by = actor() if area is None else actor(area)
    plain = target(collection, id_key, f"The {label}.", collection[:-1])
    draft = in_status(plain, ("draft",), "have its lines edited")

    def done(call: w.Write, text: str) -> Any:
        # The entry lists no field changes (lines are not fields), as it always has.
        return {"updated": call.record, "auditId": call.audit(text, ())}

    @by.write_tool(
        f"add_{noun}_line", f"Add a product line to a draft {label}.", _NewLine, target=draft
    )
    def add_line(call: w.Write[_NewLine]) -> Any:
        state, document = call.state, call.record
        number = max((ln["lineNo"] for ln in document["lines"]), default=0) + 1
        # Messages name the new line's fields "line.productId", "line.quantity"...
        item = _NewLine(call.input, "line")
        line = _line(state, item, "line", price_key, default, document, number)
        if any(ln["productId"] == line["productId"] for ln in document["lines"]):
            raise silo.tool_error(
                "conflict", f"{document['id']} already has a line for {line['productId']}."
            )
        document["lines"].append(line)
        return done(call, f"Added line {number}.")

    @by.write_tool(
        f"update_{noun}_line",
        f"Change the quantity and/or unit price of a line of a draft {label}.",
        _LineChange,
        target=draft,
    )
    def update_line(call: w.Write[_LineChange]) -> Any:
        args = call.args
        line = _find(call.record, args.lineNo)
        w.fields.require_some(args, ["quantity", "unitPrice"])
        changes: list[w.records.Change] = []
        quantity, price = args.quantity, args.unitPrice
        for field, value in (("quantity", quantity), (price_key, price)):
            if value is not None:
                w.records.set_field(line, field, value, changes)
        return done(call, f"Changed line {line['lineNo']}.")

    @by.write_tool(
        f"remove_{noun}_line",
        f"Remove a line from a draft {label} (the other lines keep their numbers).",
        _LineNo,
        target=draft,
    )
    def remove_line(call: w.Write[_LineNo]) -> Any:
        line = _find(call.record, call.args.lineNo)
        call.record["lines"].remove(line)
        return done(call, f"Removed line {line['lineNo']}.")

    return add_line, update_line, remove_line
