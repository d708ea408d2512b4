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

from ..state import Record, State
from .common import ACTOR, acting_user, require_permission

__all__ = ["LINE_ITEM", "PriceDefault", "line_tools", "read_lines"]

#: ``default(state, document_or_input, product)``: the price of a line given without one.
PriceDefault = Callable[[State, Mapping[str, Any], Record], float]

LINE_ITEM = w.closed_object(
    {
        "productId": w.string("The product."),
        "quantity": w.integer("Units.", minimum=1),
        "unitPrice": w.money("Price per unit (default depends on the document)."),
    },
    ["productId", "quantity"],
)


def _product(state: State, product_id: str, path: str) -> Record:
    product: Record = w.require_record(state, "products", product_id)
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
    product = _product(state, w.read_string(item, "productId", path=path), path)
    price = w.read_money(item, "unitPrice", None, path=path)
    return {
        "lineNo": number,
        "productId": product["id"],
        "quantity": w.read_int(item, "quantity", minimum=1, maximum=10_000_000, path=path),
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
    for index, item in enumerate(w.read_objects(input, "lines")):
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
    for line in document["lines"]:
        if line["lineNo"] == line_no:
            found: Record = line
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
    price_schema = w.money("Price per unit.")

    def open_draft(state: State, input: dict[str, Any]) -> tuple[Record, Record]:
        actor = acting_user(state, input)
        if area is not None:
            require_permission(state, actor, area)
        document: Record = w.require_record(state, collection, w.read_string(input, id_key))
        w.require_status(document, collection, ("draft",), "have its lines edited")
        return actor, document

    def done(state: State, actor: Record, document: Record, action: str, text: str) -> Any:
        audit_id = w.audit(state, actor["id"], action, collection[:-1], document["id"], text)
        return {"updated": document, "auditId": audit_id}

    @w.define_tool(
        f"add_{noun}_line",
        f"Add a product line to a draft {label}.",
        {
            id_key: w.string(f"The {label}."),
            "productId": w.string("The product."),
            "quantity": w.integer("Units.", minimum=1),
            "unitPrice": price_schema,
            **ACTOR,
        },
        [id_key, "productId", "quantity", "actorId"],
    )
    def add_line(state: State, input: dict[str, Any]) -> Any:
        actor, document = open_draft(state, input)
        number = max((ln["lineNo"] for ln in document["lines"]), default=0) + 1
        line = _line(state, input, "line", price_key, default, document, number)
        if any(ln["productId"] == line["productId"] for ln in document["lines"]):
            raise silo.tool_error(
                "conflict", f"{document['id']} already has a line for {line['productId']}."
            )
        document["lines"].append(line)
        return done(state, actor, document, f"add_{noun}_line", f"Added line {number}.")

    @w.define_tool(
        f"update_{noun}_line",
        f"Change the quantity and/or unit price of a line of a draft {label}.",
        {
            id_key: w.string(f"The {label}."),
            "lineNo": w.integer("The line.", minimum=1),
            "quantity": w.integer("New units.", minimum=1),
            "unitPrice": price_schema,
            **ACTOR,
        },
        [id_key, "lineNo", "actorId"],
    )
    def update_line(state: State, input: dict[str, Any]) -> Any:
        actor, document = open_draft(state, input)
        line = _find(document, w.read_int(input, "lineNo", minimum=1))
        w.require_some(input, ["quantity", "unitPrice"])
        changes: list[w.Change] = []
        quantity = w.read_int(input, "quantity", None, minimum=1, maximum=10_000_000)
        price = w.read_money(input, "unitPrice", None)
        for field, value in (("quantity", quantity), (price_key, price)):
            if value is not None:
                w.set_field(line, field, value, changes)
        return done(
            state, actor, document, f"update_{noun}_line", f"Changed line {line['lineNo']}."
        )

    @w.define_tool(
        f"remove_{noun}_line",
        f"Remove a line from a draft {label} (the other lines keep their numbers).",
        {id_key: w.string(f"The {label}."), "lineNo": w.integer("The line.", minimum=1), **ACTOR},
        [id_key, "lineNo", "actorId"],
    )
    def remove_line(state: State, input: dict[str, Any]) -> Any:
        actor, document = open_draft(state, input)
        line = _find(document, w.read_int(input, "lineNo", minimum=1))
        document["lines"].remove(line)
        return done(
            state, actor, document, f"remove_{noun}_line", f"Removed line {line['lineNo']}."
        )

    return add_line, update_line, remove_line
