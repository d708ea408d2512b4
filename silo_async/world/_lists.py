"""Lists: paging, text search, and ready-made list / search / get tools over one collection.

Every list in a world answers ``{total, count, offset, results}``, sorted by id unless its
description says otherwise. :func:`paginate` applies the (often costly) view to the page only,
never to every match. The tool factories build the read tools most collections need from a
few facts about them, so two worlds list, search and look up records exactly alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from .._tools import Tool, tool
from ._builders import DEFAULT_LIMIT, MAX_LIMIT, PAGING, Schema, closed_object, string
from ._fields import Field, Input, fields_of, input_of
from ._numbers import read_int
from ._readers import read_string
from ._records import check_references, require_record
from ._values import fold

__all__ = [
    "View",
    "Where",
    "get_tool",
    "list_tool",
    "matches_text",
    "paginate",
    "search_tool",
    "sorted_by_id",
]

T = TypeVar("T")
#: ``view(state, record)``: what an agent sees of one record.
View = Callable[[Any, Any], Any]
#: ``where(state, record, input)``: whether a record belongs in a list (``input``: the typed
#: view of the list's ``extra`` Input class, or the input as given).
Where = Callable[[Any, Any, Any], bool]
#: A property of a list tool: a schema (its value compared as given) or a field (read by it).
Property = Schema | Field[Any]
#: A list tool's filters or extra properties: an Input class, or (the form from before typed
#: fields) a mapping of properties.
Properties = type[Input] | Mapping[str, Property]


def paginate(
    items: Sequence[T], input: Input | Mapping[str, Any], view: Callable[[T], Any] | None = None
) -> dict[str, Any]:
    """One page of ``items`` as ``{total, count, offset, results}``.

    Args:
        items: every match, in list order.
        input: the tool's input (or its typed view); ``limit`` (1..MAX_LIMIT, default
            DEFAULT_LIMIT) and ``offset``, as ``fields.LIMIT`` and ``fields.OFFSET`` read them.
        view: applied to the records of the page only.

    Raises:
        ToolError: ``invalid_input`` for a ``limit`` or ``offset`` out of range.
    """
    given = input_of(input)
    limit = read_int(given, "limit", DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT)
    offset = read_int(given, "offset", 0, minimum=0)
    page = items[offset : offset + limit]
    results = list(page) if view is None else [view(item) for item in page]
    return {"total": len(items), "count": len(results), "offset": offset, "results": results}


def sorted_by_id(records: Mapping[str, T]) -> list[T]:
    """The records of a collection in id order: the order every list uses."""
    return [records[key] for key in sorted(records)]


def matches_text(query: str, *fields: str | None) -> bool:
    """Whether ``query`` occurs in any of ``fields`` (case- and accent-insensitive)."""
    wanted = fold(query.strip())
    return any(wanted in fold(text) for text in fields if text)


def _viewer(view: View | None, state: Any) -> Callable[[Any], Any] | None:
    return None if view is None else (lambda record: view(state, record))


def _schemas(properties: Properties | None) -> dict[str, Schema]:
    if isinstance(properties, type):
        return {key: field.schema for key, field in fields_of(properties).items()}
    return {k: p.schema if isinstance(p, Field) else p for k, p in (properties or {}).items()}


def _required(*declared: Properties | None) -> list[str]:
    """The keys an Input class declares without a default (a mapping's are all optional)."""
    return [
        key
        for properties in declared
        if isinstance(properties, type)
        for key, field in fields_of(properties).items()
        if field.required
    ]


def _filter_value(input: Mapping[str, Any], key: str, prop: Property) -> Any:
    """The filter's value (``None``: not given): read by its field, or as given."""
    value = input.get(key)
    return value if value is None or not isinstance(prop, Field) else prop.read(input, key)


#: ``wanted(state, input)``: the (record field, value) pairs a list's records must match.
Wanted = Callable[[Any, Mapping[str, Any]], list[tuple[str, Any]]]


def _wanted(filters: Properties | None, references: Mapping[str, str] | None) -> Wanted:
    """How a list reads its equality filters from a call's input."""
    if isinstance(filters, type):
        if references:
            raise TypeError(
                "filters declared as an Input class name their collections: w.fields.ref"
            )
        fields = list(fields_of(filters).values())
        view = filters

        def wanted(state: Any, input: Mapping[str, Any]) -> list[tuple[str, Any]]:
            args = view(input, state=state)  # each field read in turn, a ref looked up
            return [(f.key, f.stored(args)) for f in fields if input.get(f.key) is not None]

        return wanted
    equal = dict(filters or {})
    refs = dict(references or {})

    def wanted_as_given(state: Any, input: Mapping[str, Any]) -> list[tuple[str, Any]]:
        check_references(state, input, refs)
        given = [(key, _filter_value(input, key, prop)) for key, prop in equal.items()]
        return [(key, value) for key, value in given if value is not None]

    return wanted_as_given


def list_tool(
    name: str,
    description: str,
    collection: str,
    *,
    filters: Properties | None = None,
    references: Mapping[str, str] | None = None,
    extra: Properties | None = None,
    where: Where | None = None,
    view: View | None = None,
) -> Tool:
    """A paged list of ``state[collection]`` in id order.

    Its filters are declared as an :class:`Input` class whose every field is an equality
    filter on the records' field of its key (not given: no filter)::

        class VendorFilters(w.Input):
            status = w.fields.enum("Only vendors with this status.", STATUSES, default=None)
            owner = w.fields.ref("users", "Only vendors this user owns.", default=None)

    A ref compares the id and is ``not_found`` for an unknown one (a mistake to report, not an
    empty page). The schema is the filters' fields, ``extra``'s, then ``limit`` and ``offset``.

    Args:
        name: the tool name.
        description: what the agent reads.
        collection: the state key of the collection.
        filters: the equality filters: an Input class, or (the form from before typed
            fields) a mapping of key to schema (compared as given) or field (read by it).
        references: with a mapping of filters: filter key -> the collection its value must
            name a record of (an Input class says it with ``w.fields.ref``).
        extra: more properties, for ``where`` to read: an Input class (``where`` then gets its
            typed view) or a mapping (``where`` gets the input as given).
        where: an extra predicate ``where(state, record, input)``.
        view: ``view(state, record)``, applied to the page only.

    Raises:
        TypeError: ``references`` beside filters declared as an Input class.
    """
    wanted_of = _wanted(filters, references)
    extra_view = extra if isinstance(extra, type) else None

    def list_records(state: Any, input: dict[str, Any]) -> dict[str, Any]:
        wanted = wanted_of(state, input)
        seen = input if extra_view is None else extra_view(input, state=state)
        rows = [
            record
            for record in sorted_by_id(state[collection])
            if all(record.get(key) == value for key, value in wanted)
            and (where is None or where(state, record, seen))
        ]
        return paginate(rows, input, _viewer(view, state))

    properties = {**_schemas(filters), **_schemas(extra), **PAGING}
    schema = closed_object(properties, _required(filters, extra))
    return tool(name=name, description=description, input_schema=schema)(list_records)


def search_tool(
    name: str,
    description: str,
    collection: str,
    fields: Sequence[str] | Callable[[Any, Any], Iterable[str | None]],
    *,
    view: View | None = None,
) -> Tool:
    """A paged text search over ``state[collection]``: ``query`` in the id or any of ``fields``.

    Args:
        name: the tool name.
        description: what the agent reads.
        collection: the state key of the collection.
        fields: record fields to search, or ``fields(state, record)`` giving the texts.
        view: ``view(state, record)``, applied to the page only.
    """

    def texts(state: Any, record: Any) -> Iterable[str | None]:
        if callable(fields):
            return fields(state, record)
        return [record.get(field) for field in fields]

    def search_records(state: Any, input: dict[str, Any]) -> dict[str, Any]:
        query = read_string(input, "query")
        rows = [
            record
            for record in sorted_by_id(state[collection])
            if matches_text(query, record["id"], *texts(state, record))
        ]
        return paginate(rows, input, _viewer(view, state))

    schema = closed_object(
        {"query": string("Text to look for (case-insensitive)."), **PAGING}, ["query"]
    )
    return tool(name=name, description=description, input_schema=schema)(search_records)


def get_tool(
    name: str,
    description: str,
    collection: str,
    id_key: str,
    example: str,
    *,
    view: View | None = None,
) -> Tool:
    """Read one record of ``state[collection]`` by id (``not_found`` when it does not exist).

    Args:
        name: the tool name.
        description: what the agent reads.
        collection: the state key of the collection.
        id_key: the input key holding the id, e.g. ``vendorId``.
        example: an example id for the schema description, e.g. ``VEN-001``.
        view: ``view(state, record)``; default a copy of the record.
    """

    def get_record(state: Any, input: dict[str, Any]) -> Any:
        record = require_record(state, collection, read_string(input, id_key))
        return dict(record) if view is None else view(state, record)

    schema = closed_object({id_key: string(f"The id, e.g. {example}.")}, [id_key])
    return tool(name=name, description=description, input_schema=schema)(get_record)
