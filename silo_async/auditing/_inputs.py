"""Schema-valid inputs built from what was seen: the explorer's and the spammer's arguments.

A value for a property comes, in order of preference, from values met under the same key (or
ids of records listed under a collection of that name), then values of the same shape met
anywhere (ids with a known prefix, figures, dates), and only then a random valid value. Every
choice draws from the caller's seeded ``random.Random``, so the same seed builds the same
inputs. The whole input is checked against the tool's schema (Draft 2020-12) before use.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator

from .._tools import ToolSpec
from ._values import Seen, id_prefix, is_date

__all__ = ["NONE", "InputMaker", "takes_id"]

#: No value could be built (a pattern nothing seen matches, a schema this does not read).
NONE: Any = object()
#: How often the best tier of candidates is taken (else any tier that has one).
_BEST = 0.75
_ATTEMPTS = 6
_WORDS = ("test", "probe", "sample", "urgent", "note", "update", "review", "other")


def takes_id(key: str) -> bool:
    """Whether a property named ``key`` takes a record id (``orderId``, ``case_id``, ``id``)."""
    return bool(re.search(r"(?:Id|_id|ID|Ids|_ids)$", key)) or key.lower() in ("id", "ids")


def _prefixes(values: Sequence[Any]) -> set[str]:
    return {p for v in values if isinstance(v, str) and (p := id_prefix(v)) is not None}


class InputMaker:
    """Builds inputs for one tool that its schema accepts.

    Args:
        spec: the tool as the agent sees it.
    """

    def __init__(self, spec: ToolSpec) -> None:
        self.name = spec.name
        self.schema = spec.input_schema
        self._validator = Draft202012Validator(self.schema)

    @property
    def required(self) -> list[str]:
        """The names of the required top-level properties."""
        return [str(r) for r in self.schema.get("required", ())]

    def property_schema(self, key: str) -> Any:
        """The schema of one top-level property (``{}`` when not described)."""
        return (self.schema.get("properties") or {}).get(key, {})

    def valid(self, value: Any) -> bool:
        """Whether the tool's schema accepts ``value``."""
        return bool(self._validator.is_valid(value))

    @staticmethod
    def fits(schema: Any, value: Any) -> bool:
        """Whether one property's ``schema`` accepts ``value``."""
        if not isinstance(schema, Mapping | bool):
            return False
        return bool(Draft202012Validator(schema).is_valid(value))

    def make(
        self, seen: Seen, rng: random.Random, *, optional: float = 0.5, invent: bool = True
    ) -> dict[str, Any] | None:
        """An input the schema accepts, or ``None`` when none could be built.

        Args:
            seen: the values to build from.
            rng: the seeded random generator every choice draws from.
            optional: how often an optional property is given.
            invent: a required id or text nothing seen fits may be made up (a random valid
                string); without it such a tool cannot be called yet.
        """
        build = _Builder(seen, rng, optional, invent)
        for _ in range(_ATTEMPTS):
            value = build.value(self.schema, "", 0)
            if isinstance(value, dict) and self.valid(value):
                return value
        return None


class _Builder:
    """Builds one value for a schema from what was seen, drawing every choice from ``rng``."""

    def __init__(self, seen: Seen, rng: random.Random, optional: float, invent: bool) -> None:
        self.seen = seen
        self.rng = rng
        self.optional = optional
        self.invent = invent

    def pick(self, tiers: Sequence[Sequence[Any]]) -> Any:
        """A value of the best tier that has one (or, now and then, of another)."""
        filled = [t for t in tiers if t]
        if not filled:
            return NONE
        tier = filled[0] if self.rng.random() < _BEST else self.rng.choice(filled)
        return self.rng.choice(list(tier))

    def value(self, schema: Any, key: str, depth: int) -> Any:
        """A value for ``schema`` (the property ``key``), or ``NONE``."""
        if depth > 6:
            return NONE
        if not isinstance(schema, Mapping):
            return self.string({}, key)
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self.rng.choice(schema["enum"])
        for combinator in ("anyOf", "oneOf"):
            branches = schema.get(combinator)
            if isinstance(branches, list) and branches:
                useful = [
                    b for b in branches if not (isinstance(b, Mapping) and b.get("type") == "null")
                ]
                return self.value(self.rng.choice(useful or branches), key, depth + 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"] or kind
            kind = self.rng.choice(kinds) if kinds else None
        if kind is None:
            kind = "object" if "properties" in schema else "string"
        if kind == "object":
            return self.object(schema, depth)
        if kind == "array":
            return self.array(schema, key, depth)
        if kind in ("integer", "number"):
            return self.number(schema, key, integer=kind == "integer")
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        return self.string(schema, key)

    def object(self, schema: Mapping[str, Any], depth: int) -> Any:
        """Every required property, and each optional one now and then."""
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or ())
        built: dict[str, Any] = {}
        for name, sub in properties.items():
            if name not in required and self.rng.random() >= self.optional:
                continue
            value = self.value(sub, str(name), depth + 1)
            if value is NONE:
                if name in required:
                    return NONE
                continue
            built[str(name)] = value
        return built

    def array(self, schema: Mapping[str, Any], key: str, depth: int) -> Any:
        """A short list (its ``minItems`` at least)."""
        low = int(schema.get("minItems", 0))
        high = max(low, min(int(schema.get("maxItems", 2)), low + 2))
        count = self.rng.randint(max(low, 1 if low == 0 and self.rng.random() < 0.7 else low), high)
        items = []
        for _ in range(count):
            value = self.value(schema.get("items", {}), key, depth + 1)
            if value is NONE:
                return NONE if low else []
            items.append(value)
        return items

    def number(self, schema: Mapping[str, Any], key: str, *, integer: bool) -> Any:
        """A figure seen under the key, else any seen, else a random one within the bounds."""
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))

        def fits(v: Any) -> bool:
            if isinstance(v, bool) or not isinstance(v, int | float):
                return False
            if integer and float(v) != int(v):
                return False
            return (low is None or v >= low) and (high is None or v <= high)

        found = self.pick(
            [
                [v for v in self.seen.under(key) if fits(v)],
                [v for v in self.seen.numbers if fits(v)],
            ]
        )
        if found is NONE:
            start = int(low) if low is not None else 0
            stop = int(high) if high is not None else start + 100
            found = self.rng.randint(start, max(start, stop))
        return int(found) if integer else found

    def string(self, schema: Mapping[str, Any], key: str) -> Any:
        """A string seen under the key, else one of the same shape, else (inventing) a word."""
        pattern = schema.get("pattern")
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")

        def fits(v: Any) -> bool:
            if not isinstance(v, str) or len(v) < low or (high is not None and len(v) > high):
                return False
            return pattern is None or re.search(str(pattern), v) is not None

        seen = self.seen
        under: list[Any] = [v for v in seen.under(key) if fits(v)]
        if schema.get("format") in ("date", "date-time") or "date" in key.lower():
            tiers: list[list[Any]] = [under, [v for v in seen.dates if fits(v) and is_date(v)]]
        elif takes_id(key):
            prefixes = _prefixes(under)
            same = [v for v in seen.ids if fits(v) and id_prefix(v) in prefixes]
            tiers = [under, same, [v for v in seen.ids if fits(v)]]
        else:
            tiers = [under, [v for v in seen.strings if fits(v)]]
        found = self.pick(tiers)
        if found is not NONE or pattern is not None or not self.invent:
            return found
        word = f"{self.rng.choice(_WORDS)}-{self.rng.randint(1, 999)}".ljust(low, "x")
        return word[:high] if high is not None else word
