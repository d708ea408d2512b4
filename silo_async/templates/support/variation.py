"""vary: a fresh surface for each task-family instance — new customers' names, PINs and staff.

What an agent could memorise about the seed changes: who the customers are (a family keeps its
surname, so the couple on two accounts stay a couple), their email addresses, their security
PINs, and who answers the chat. Everything else — lines, numbers, SIMs, phones, bills, holds,
incidents, every id and reference — stays, and so do the seed's problems. Hand-written tasks
never see this: their customers' scripts know the seed's PINs.
"""

from __future__ import annotations

import random
import re
import unicodedata

from silo_async.world.tools import sorted_by_id

from .state import State

__all__ = ["vary"]

_FIRST = (
    "Aine", "Barra", "Cathal", "Deirdre", "Emer", "Fionn", "Gearoid", "Hannah", "Ita", "Jarlath",
    "Kate", "Lorcan", "Muireann", "Naoise", "Oisin", "Peadar", "Rian", "Saoirse", "Tadhg", "Una",
    "Aidan", "Brid", "Colm", "Dervla", "Eamon", "Fiachra", "Grace", "Hugh", "Isolde", "Jack",
    "Killian", "Laoise", "Mairead", "Neasa", "Odhran", "Padraig", "Roisin", "Sean", "Tara", "Vera",
)  # fmt: skip
_LAST = (
    "Ahern", "Barry", "Cullen", "Daly", "Egan", "Flynn", "Geraghty", "Healy", "Joyce", "Keane",
    "Lennon", "Madden", "Nagle", "O'Connell", "Power", "Quigley", "Regan", "Sheehan", "Tierney",
    "Vaughan", "Brophy", "Corcoran", "Dolan", "Fahy", "Galvin", "Hogan", "Kinsella", "Lyons",
    "McCarthy", "Noonan",
)  # fmt: skip
_STAFF = (
    "Ailbhe Moran", "Cormac Ryan", "Dara Foley", "Elaine Burke", "Frank Nevin", "Gemma Coyle",
    "Ivan Horgan", "Jane Cotter", "Karl Dempsey", "Lisa Mahon", "Mark Furey", "Nora Slattery",
)  # fmt: skip


def _plain(name: str) -> str:
    """How a name is written in an email address: ``O'Connell`` -> ``oconnell``."""
    ascii_only = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z]", "", ascii_only.lower())


def vary(world: State, rng: random.Random) -> None:
    """Give ``world`` new customer names, emails and PINs and new staff names, in place.

    Args:
        world: a freshly built support world.
        rng: the instance's random source (seeded from the instance id).
    """
    customers = sorted_by_id(world["customers"])
    surnames = sorted({c["lastName"] for c in customers})
    new_surname = dict(zip(surnames, rng.sample(_LAST, len(surnames)), strict=True))
    firsts = rng.sample(_FIRST, len(customers))
    pins = rng.sample(range(1000, 10_000), len(customers))
    for customer, first, pin in zip(customers, firsts, pins, strict=True):
        last = new_surname[customer["lastName"]]
        domain = customer["email"].partition("@")[2]
        customer["firstName"], customer["lastName"] = first, last
        customer["email"] = f"{_plain(first)}.{_plain(last)}@{domain}"
        customer["securityPin"] = str(pin)
    staff = sorted_by_id(world["staff"])
    for member, name in zip(staff, rng.sample(_STAFF, len(staff)), strict=True):
        member["name"] = name
