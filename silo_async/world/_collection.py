"""A collection's read tools, named by one convention: ``list_<x>``, ``search_<x>``, ``get_<x>``.

Most collections of a world are listed, searched and read one at a time. :class:`Collection`
states the facts those three tools share (the state key, the id key, an example id, the view)
once, and names the tools after the collection, so every world built on the toolkit calls its
read tools alike: ``salesOrders`` with ``salesOrderId`` gives ``list_sales_orders``,
``search_sales_orders`` and ``get_sales_order``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from .._errors import DefinitionError
from .._tools import Tool
from ._lists import Properties, View, Where, get_tool, list_tool, search_tool

__all__ = ["Collection"]


class _Inherit:
    """The default of a tool's ``view``: the collection's (``None`` means the record itself)."""

    def __repr__(self) -> str:
        return "<the collection's view>"


_INHERIT: Final = _Inherit()


def snake_case(name: str) -> str:
    """``salesOrders`` -> ``sales_orders``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@attrs.frozen
class Collection:
    """One collection of a world, and the read tools an agent uses on it.

    Attributes:
        name: the state key, e.g. ``salesOrders``; the list and search tools are named after it
            (``list_sales_orders``, ``search_sales_orders``).
        id_key: the input key a get tool reads the id from, e.g. ``salesOrderId``; the get tool
            is named after it without ``Id`` (``get_sales_order``).
        example: an example id for the get tool's schema, e.g. ``SO-5007``.
        view: ``view(state, record)``: what the agent sees of a record (default: the record).

    Example::

        ORDERS = w.Collection("salesOrders", "salesOrderId", "SO-5007", view=order_view)
        list_sales_orders = ORDERS.list_tool("List sales orders sorted by id. Paged.")
        get_sales_order = ORDERS.get_tool("One sales order.")
    """

    name: str
    id_key: str | None = None
    example: str | None = None
    view: View | None = None

    def list_tool(
        self,
        description: str,
        *,
        filters: Properties | None = None,
        references: Mapping[str, str] | None = None,
        extra: Properties | None = None,
        where: Where | None = None,
        view: View | _Inherit | None = _INHERIT,
        name: str | None = None,
    ) -> Tool:
        """``list_<collection>``: a paged list in id order (see :func:`list_tool`).

        Args:
            description: what the agent reads.
            filters: the equality filters, an Input class: each field compares the records'
                field of its key (a ``w.fields.ref`` compares the id, ``not_found`` when
                unknown); or, the form from before typed fields, a mapping of properties.
            references: with a mapping of filters: filter key -> the collection its value
                must name a record of.
            extra: more properties, for ``where`` to read: an Input class (``where`` gets its
                typed view) or a mapping (``where`` gets the input as given).
            where: an extra predicate ``where(state, record, input)``.
            view: this tool's view, when not the collection's.
            name: the tool name, when not the convention's.
        """
        return list_tool(
            name or f"list_{snake_case(self.name)}",
            description,
            self.name,
            filters=filters,
            references=references,
            extra=extra,
            where=where,
            view=self._view(view),
        )

    def search_tool(
        self,
        description: str,
        fields: Sequence[str] | Callable[[Any, Any], Iterable[str | None]],
        *,
        view: View | _Inherit | None = _INHERIT,
        name: str | None = None,
    ) -> Tool:
        """``search_<collection>``: a paged text search (see :func:`search_tool`).

        Args:
            description: what the agent reads.
            fields: record fields to search, or ``fields(state, record)`` giving the texts.
            view: this tool's view, when not the collection's.
            name: the tool name, when not the convention's.
        """
        tool_name = name or f"search_{snake_case(self.name)}"
        return search_tool(tool_name, description, self.name, fields, view=self._view(view))

    def get_tool(
        self,
        description: str,
        *,
        view: View | _Inherit | None = _INHERIT,
        name: str | None = None,
    ) -> Tool:
        """``get_<record>``: one record by id, ``not_found`` when missing (see :func:`get_tool`).

        Args:
            description: what the agent reads.
            view: this tool's view, when not the collection's.
            name: the tool name, when not the convention's.

        Raises:
            DefinitionError: the collection was declared without ``id_key`` and ``example``.
        """
        if self.id_key is None or self.example is None:
            raise DefinitionError(
                f"Collection {self.name!r} needs id_key and example for a get tool: declare it "
                f"as Collection({self.name!r}, '<record>Id', '<an example id>', ...).",
                {"collection": self.name},
            )
        tool_name = name or f"get_{snake_case(self.id_key.removesuffix('Id'))}"
        return get_tool(
            tool_name, description, self.name, self.id_key, self.example, view=self._view(view)
        )

    def _view(self, view: View | _Inherit | None) -> View | None:
        return self.view if isinstance(view, _Inherit) else view
