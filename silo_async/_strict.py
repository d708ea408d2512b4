"""Strict function calling: tool schemas in strict form, and ``null`` meaning "not given".

Strict function calling (OpenAI's ``strict: true``, the Agents SDK's
``convert_schemas_to_strict``) makes every property of every object required and lets the model
send ``null`` for one it means to leave out. Two halves:

* :func:`strict_schema` turns a tool's input schema into that form: at every depth, every
  declared property required, the optional ones made nullable (an optional ``enum`` lists
  ``null`` too), ``additionalProperties: false``, every other keyword kept.
* :class:`NullPlan` undoes it on the way in: ``null`` for an optional property whose schema
  does not allow ``null`` is dropped, at every depth, so the tool body sees the key as absent.
  The validator applies it only to an input its schema refused (see
  ``SchemaValidator.drop_nulls``): inputs without such nulls never pay for it.

Both follow the structural keywords tools use: ``properties`` / ``required``, ``items``,
``prefixItems``, ``additionalProperties`` (a schema), ``allOf``; and the strict form also
``anyOf`` / ``oneOf`` members and ``$defs``. An object that declares no properties but takes
any keys (a free-form map) has no strict form and is kept as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
from jsonschema import Draft202012Validator

from ._jsonutil import clone_json

__all__ = ["NullPlan", "null_plan", "strict_schema"]

#: Keywords that apply to values of every type: a schema carrying one cannot be made nullable
#: by adding ``"null"`` to its ``type``; it is wrapped in ``anyOf`` instead.
_ANY_TYPE_KEYWORDS = ("const", "not", "anyOf", "allOf", "oneOf", "$ref", "if")


# -- the strict form --------------------------------------------------------------------------


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` in strict form (a new dict; ``schema`` is not changed).

    Example::

        >>> strict_schema({"type": "object", "properties": {"q": {"type": "string"}}})
        {'type': 'object', 'properties': {'q': {'type': ['string', 'null']}}, \
'required': ['q'], 'additionalProperties': False}
    """
    out: dict[str, Any] = _strict(clone_json(dict(schema)))
    return out


def _strict(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in ("items", "additionalProperties", "not"):
        if isinstance(out.get(key), dict):
            out[key] = _strict(out[key])
    for key in ("prefixItems", "anyOf", "oneOf", "allOf"):
        if isinstance(out.get(key), list):
            out[key] = [_strict(member) for member in out[key]]
    if isinstance(out.get("$defs"), dict):
        out["$defs"] = {name: _strict(sub) for name, sub in out["$defs"].items()}
    properties = out.get("properties")
    if isinstance(properties, dict) and not isinstance(out.get("additionalProperties"), dict):
        required = set(out.get("required", ()))
        out["properties"] = {
            name: _strict(sub) if name in required else _nullable(_strict(sub))
            for name, sub in properties.items()
        }
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out


def _nullable(schema: Any) -> Any:
    """``schema`` that also admits ``null`` (unchanged when it already does)."""
    if not isinstance(schema, dict) or _admits_null(schema):
        return schema
    if any(key in schema for key in _ANY_TYPE_KEYWORDS) or (
        "type" not in schema and "enum" not in schema
    ):
        return {"anyOf": [schema, {"type": "null"}]}
    out = dict(schema)
    if "type" in out:
        kinds = [out["type"]] if isinstance(out["type"], str) else list(out["type"])
        out["type"] = [*kinds, "null"]
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    return out


def _admits_null(schema: Any, root: Draft202012Validator | None = None) -> bool:
    """True when ``null`` is valid against ``schema`` (its ``$ref`` resolved against ``root``)."""
    if not isinstance(schema, dict | bool):
        return False
    try:
        check = root.evolve(schema=schema) if root is not None else Draft202012Validator(schema)
        return bool(check.is_valid(None))
    except Exception:  # an unresolvable $ref or a broken keyword: not known to admit null
        return False


# -- null means "not given" -------------------------------------------------------------------


@attrs.frozen
class NullPlan:
    """Where an input's ``null`` values mean "not given", for one schema (and its parts).

    Attributes:
        drop: optional properties whose schema refuses ``null``: a ``null`` there is dropped.
        declared: every declared property (the others' values follow ``additional``).
        properties: the plans of properties with droppable nulls further in.
        items: the plan of every array item (``items``), if any.
        prefix: the plans of the leading array items (``prefixItems``).
        additional: the plan of undeclared properties' values (``additionalProperties``).
    """

    drop: frozenset[str] = frozenset()
    declared: frozenset[str] = frozenset()
    properties: Mapping[str, NullPlan] = attrs.field(factory=dict)
    items: NullPlan | None = None
    prefix: tuple[NullPlan | None, ...] = ()
    additional: NullPlan | None = None

    def apply(self, value: Any) -> bool:
        """Drop the planned nulls from ``value`` in place; True when anything was dropped.

        ``value`` must be the caller's own copy (the validator's ``copy_input`` copy).
        """
        changed = False
        if type(value) is dict:
            for key in [k for k in self.drop if k in value and value[k] is None]:
                del value[key]
                changed = True
            for key, sub in value.items():
                plan = self.properties.get(key)
                if plan is None and key not in self.declared:
                    plan = self.additional
                if plan is not None and sub is not None:
                    changed = plan.apply(sub) or changed
        elif type(value) is list:
            for i, item in enumerate(value):
                plan = self.prefix[i] if i < len(self.prefix) else self.items
                if plan is not None and item is not None:
                    changed = plan.apply(item) or changed
        return changed


def null_plan(schema: Any) -> NullPlan | None:
    """The :class:`NullPlan` of ``schema``, or ``None`` when no null anywhere may be dropped."""
    if not isinstance(schema, dict):
        return None
    try:
        root = Draft202012Validator(schema)
    except Exception:  # not a schema jsonschema can load: nothing is planned
        return None
    return _plan(schema, root)


def _plan(schema: Any, root: Draft202012Validator) -> NullPlan | None:
    if not isinstance(schema, dict):
        return None
    drop: set[str] = set()
    declared: set[str] = set()
    properties: dict[str, NullPlan] = {}
    items = additional = None
    prefix: tuple[NullPlan | None, ...] = ()
    parts = [schema, *_all_of(schema)]
    # A property any part requires is required: its null is an answer to check, not a gap.
    required = {name for part in parts for name in part.get("required", ())}
    for part in parts:
        names = part.get("properties")
        if isinstance(names, dict):
            for name, sub in names.items():
                declared.add(name)
                if name not in required and not _admits_null(sub, root):
                    drop.add(name)
                inner = _plan(sub, root)
                if inner is not None:
                    properties[name] = inner
        items = items or _plan(part.get("items"), root)
        additional = additional or _plan(part.get("additionalProperties"), root)
        if isinstance(part.get("prefixItems"), list) and not prefix:
            prefix = tuple(_plan(member, root) for member in part["prefixItems"])
    if not any(p is not None for p in prefix):
        prefix = ()
    if not (drop or properties or items or prefix or additional):
        return None
    return NullPlan(frozenset(drop), frozenset(declared), properties, items, prefix, additional)


def _all_of(schema: dict[str, Any]) -> list[dict[str, Any]]:
    members = schema.get("allOf")
    return [m for m in members if isinstance(m, dict)] if isinstance(members, list) else []
