"""What Larkspur sells and the rules its staff follow: plans, add-ons, zones, the policy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from silo_async import world as w
from silo_async.world.tools import sorted_by_id

from ..state import Country, Plan, PolicySection, State

__all__ = ["get_country", "get_support_policy", "list_addons", "list_countries", "list_plans"]


def section_view(state: State, section: PolicySection) -> dict[str, Any]:
    """A policy section with the figures it quotes filled in from the stored policies."""
    figures = {key: _figure(value) for key, value in state["policies"].items()}
    text = section["text"].format(**figures)
    return {"id": section["id"], "topic": section["topic"], "text": text}


def _figure(value: Any) -> str:
    if isinstance(value, float | int) and not isinstance(value, bool):
        return f"{value:g}"
    return str(value)


class _Topic(w.Input):
    topic = w.fields.string(
        "Only the section on this topic, e.g. identity, privacy, roaming, credits.", default=None
    )


@w.define_tool(_Topic)
def get_support_policy(state: State, args: _Topic) -> dict[str, Any]:
    """The support policy the team follows (identity checks, privacy, SIM swaps, credits,
    roaming, holds, plans, cancellations, outages), in sections; optionally one topic.
    """
    sections = sorted_by_id(state["policy"])
    if args.topic is not None:
        sections = [s for s in sections if w.tools.matches_text(args.topic, s["topic"])]
    return {"sections": [section_view(state, s) for s in sections]}


def _active(state: State, plan: Plan, input: Mapping[str, Any]) -> bool:
    return bool(input.get("includeRetired")) or plan["active"]


list_plans = w.Collection("plans").list_tool(
    "List the monthly plans sorted by id (fee in EUR, data in GB, null = unlimited); retired "
    "plans only with includeRetired. Every plan roams like at home in zone 1. Paged.",
    extra={"includeRetired": w.schema.boolean("Also list plans no longer sold (default false).")},
    where=_active,
)


list_addons = w.Collection("addons").list_tool(
    "List the add-ons for sale sorted by id: roaming passes (a zone, a number of days from the "
    "start date, a data allowance) and data boosts. Prices in EUR. Paged.",
    filters={
        "kind": w.fields.enum("Only this kind.", ["roaming_pass", "data_boost"], default=None),
        "zone": w.fields.integer("Only passes for this roaming zone.", default=None),
    },
)


def _named(state: State, country: Country, input: Mapping[str, Any]) -> bool:
    name = input.get("name")
    return name is None or w.tools.matches_text(name, country["name"])


COUNTRIES = w.Collection("countries", "countryCode", "ES")
list_countries = COUNTRIES.list_tool(
    "List countries and their roaming zone (0 home, 1 EU/EEA and UK, 2 and 3 need a roaming "
    "pass), sorted by ISO code, optionally one zone's or those whose name contains a text. "
    "Paged.",
    filters={"zone": w.fields.integer("Only this zone.", default=None)},
    extra={"name": w.schema.string("Only countries whose name contains this text.")},
    where=_named,
)
get_country = COUNTRIES.get_tool(
    "One country by its two-letter ISO code (as diagnostics show it), with its roaming zone.",
    name="get_country",
)
