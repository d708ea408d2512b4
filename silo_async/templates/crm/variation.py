"""vary: a fresh surface for each task-family instance — new names, brands and amounts.

The structure of the seed stays (every record, id, reference, stage, date and status), so the
messes stay too: the departed rep still owns work, the duplicate contact still shares an email
(in another case), the lead of an existing customer still carries the customer's name with a
suffix. What changes is what an agent could have memorised: who the people are, what the
companies are called, what the deals are worth.

Names change by word, everywhere they occur (a deal named after its account, a subject line
naming a contact, an email address or website made of them), so the world stays consistent.
Hand-written tasks never see this: their verifiers know the seed by name.
"""

from __future__ import annotations

import functools
import random
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from silo_async.world.tools import sorted_by_id

from .state import State

__all__ = ["vary"]

_FIRST = (
    "Adaeze", "Bruno", "Carmen", "Dario", "Eilidh", "Fintan", "Gisela", "Hamid", "Ingrid",
    "Joaquin", "Kalani", "Leontine", "Matteo", "Nadia", "Oskar", "Priya", "Quentin", "Rosalind",
    "Soren", "Tamsin", "Umar", "Valentina", "Wilhelm", "Ximena", "Yusuf", "Zuzana", "Anouk",
    "Benedikt", "Cosima", "Desmond", "Esperanza", "Florian", "Greer", "Hiroshi", "Imogen",
    "Jovan", "Katya", "Lucien", "Mireille", "Nikolai",
)  # fmt: skip
_LAST = (
    "Abernathy", "Bergström", "Castellano", "Dunmore", "Eriksen", "Fairweather", "Galloway",
    "Halvorsen", "Iwasaki", "Jablonski", "Kowalczyk", "Lachance", "Montague", "Nakamura",
    "Oyelaran", "Pemberton", "Quiroga", "Rasmussen", "Szabó", "Thorne", "Underhill", "Valdés",
    "Whitlock", "Yamamoto", "Zeller", "Ashcombe", "Brightwater", "Cormack", "Delacroix",
    "Esterhazy", "Fitzgerald", "Grünewald", "Hollis", "Ivanova", "Kingsley", "Lindqvist",
    "Marchetti", "Novak", "Okonkwo", "Pellegrini",
)  # fmt: skip
#: Brand names are made of a head and a tail: hundreds of them, all plausible.
_HEADS = (
    "Alder", "Birch", "Cairn", "Dover", "Ember", "Fallow", "Glen", "Hazel", "Ivory", "Juniper",
    "Kestrel", "Larch", "Merrow", "Nettle", "Osprey", "Pine", "Quarry", "Raven", "Sable", "Thistle",
    "Umber", "Vesper", "Willow", "Yarrow",
)  # fmt: skip
_TAILS = ("brook", "crest", "dale", "field", "gate", "holm", "mere", "moor", "ridge", "wick")
_BRANDS = tuple(head + tail for head in _HEADS for tail in _TAILS)
#: How far an amount may move (a factor), and what it is rounded to.
_AMOUNT_SPREAD = (0.8, 1.25)
_AMOUNT_STEP = 500
#: The parts of the world whose text names people and companies.
_SURFACES = ("users", "accounts", "contacts", "leads", "opportunities", "activities", "auditLog")


#: German umlauts are written out in addresses ("Pölzl" -> "poelzl"), others dropped.
_SPELLED = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"})


@functools.lru_cache(maxsize=4096)
def _ascii(text: str, spell: bool = False) -> str:
    """``Petrović`` -> ``petrovic``: how a name is written inside an email or a domain."""
    text = text.translate(_SPELLED) if spell else text
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z]", "", plain.lower())


#: How people's email names are made of their names, as (first, last) -> local part.
_STYLES: tuple[Callable[[str, str], str], ...] = (
    lambda f, la: f"{f}.{la}",
    lambda f, la: f"{f[:1]}.{la}",
    lambda f, la: f,
)


def _brand_of(name: str) -> str:
    """The word (or words, "St Aldric") an account or company name is known by."""
    words = name.split()
    return " ".join(words[:2]) if words[0] in ("St", "San", "La") else words[0]


def _people(world: State) -> list[dict[str, Any]]:
    """Everyone with a name: users, contacts and leads (plain dicts: vary edits them)."""
    kinds: tuple[dict[str, Any], ...] = (world["users"], world["contacts"], world["leads"])
    return [person for kind in kinds for person in kind.values()]


def _words(world: State) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The seed's first names, last names and brands, sorted."""
    people = _people(world)
    brands = {_brand_of(a["name"]) for a in world["accounts"].values()}
    brands |= {_brand_of(lead["company"]) for lead in world["leads"].values()}
    return (
        tuple(sorted({p["firstName"] for p in people})),
        tuple(sorted({p["lastName"] for p in people})),
        tuple(sorted(brands)),
    )


def _braces(text: str) -> str:
    """Text kept as it is in a ``str.format`` template."""
    return text.replace("{", "{{").replace("}", "}}")


class _Surface:
    """The words of one seed, and each of its strings made a template of them, once.

    Every instance starts from the same seed, so a string is parsed the first time it is met
    (``"Chase Inês on sampling"`` -> ``"Chase {d3} on sampling"``) and each instance fills
    the templates with its own words: vary costs a ``str.format_map`` per worded string.
    """

    def __init__(self, words: Iterable[str]) -> None:
        self.words = tuple(words)
        self._index = {word: i for i, word in enumerate(self.words)}
        ordered = sorted(self.words, key=len, reverse=True)  # the longest first: "St Aldric"
        self._display = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, ordered)) + r")(?!\w)")
        # Inside an address a name is lowercase ASCII and may run into another word
        # ("pellucidwater", "staldric"); "Pölzl" is written "poelzl" or "polzl".
        self._plain = {_ascii(w, spell): w for w in ordered for spell in (False, True)}
        self._plain.pop("", None)
        plain = sorted(self._plain, key=len, reverse=True)
        self._address = re.compile("|".join(map(re.escape, plain)), re.IGNORECASE)
        self._templates: dict[str, str | None] = {}
        self._styles: dict[tuple[str, str, str], int | None] = {}
        self._paths: tuple[tuple[tuple[Any, ...], str], ...] | None = None

    def _parse(self, text: str) -> str | None:
        """``text`` as a template of the seed's words (``None``: it names none)."""
        in_address = "@" in text or text.startswith("http")
        pattern = self._address if in_address else self._display

        def slot(match: re.Match[str]) -> str:
            found = match.group(0)
            if not in_address:
                return f"{{d{self._index[found]}}}"
            kind = "A" if found[0].isupper() else "a"  # Capitalised, or as addresses are
            return f"{{{kind}{self._index[self._plain[found.lower()]]}}}"

        out, at = [], 0
        for match in pattern.finditer(text):
            out += [_braces(text[at : match.start()]), slot(match)]
            at = match.end()
        return None if not out else "".join(out) + _braces(text[at:])

    def template(self, text: str) -> str | None:
        """The template of ``text`` (parsed once), or ``None`` when it names no word."""
        if text not in self._templates:
            self._templates[text] = self._parse(text)
        return self._templates[text]

    def forms(self, new: dict[str, str]) -> dict[str, str]:
        """What each slot of a template becomes, for one instance's new words."""
        out: dict[str, str] = {}
        for i, word in enumerate(self.words):
            plain = _ascii(new[word])
            out[f"d{i}"], out[f"a{i}"], out[f"A{i}"] = new[word], plain, plain.capitalize()
        return out

    def render(self, text: str, forms: dict[str, str]) -> str:
        """``text`` with the seed's words replaced (``forms``: from :meth:`forms`)."""
        template = self.template(text)
        return text if template is None else template.format_map(forms)

    def worded_paths(self, world: State) -> tuple[tuple[tuple[Any, ...], str], ...]:
        """Where the world's worded strings are: found in the first world, kept after.

        Every instance's world is built from the same seed, so its worded strings sit at the
        same paths; :func:`vary` checks each is still the text it was before using it.
        """
        if self._paths is None:
            self._paths = tuple(
                found
                for key in _SURFACES
                for found in _worded(world[key], self, _CODES, (key,))  # type: ignore[literal-required]
            )
        return self._paths

    def email_style(self, local: str, first: str, last: str) -> int | None:
        """Which of :data:`_STYLES` an email name follows (``None``: none of them)."""
        key = (local, first, last)
        if key not in self._styles:
            self._styles[key] = next(
                (
                    index
                    for spell in (False, True)
                    for index, style in enumerate(_STYLES)
                    if local.lower() == style(_ascii(first, spell), _ascii(last, spell))
                ),
                None,
            )
        return self._styles[key]


@functools.lru_cache(maxsize=4)
def _surface(words: tuple[str, ...]) -> _Surface:
    return _Surface(words)


def _new_words(
    words: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], rng: random.Random
) -> dict[str, str]:
    """What each first name, last name and brand becomes (distinct draws from the pools)."""
    firsts, lasts, brands = words
    new = dict(zip(firsts, rng.sample(_FIRST, len(firsts)), strict=True))
    new.update(zip(lasts, rng.sample(_LAST, len(lasts)), strict=True))
    new.update(zip(brands, rng.sample(_BRANDS, len(brands)), strict=True))
    return new


def _readdress(
    surface: _Surface, person: dict[str, Any], old: dict[str, str], forms: dict[str, str]
) -> None:
    """A renamed person's email: the new name in the old one's style, the domain rewritten."""
    local, at, domain = old["email"].partition("@")
    style = surface.email_style(local, old["firstName"], old["lastName"])
    if style is None:  # not a style we know: the word-by-word rewrite stands
        return
    name = _STYLES[style](_ascii(person["firstName"]), _ascii(person["lastName"]))
    if local[:1].isupper():
        name = ".".join(part.capitalize() for part in name.split("."))
    person["email"] = name + at + surface.render("@" + domain, forms)[1:]


def _worded(
    value: Any, surface: _Surface, skip: frozenset[str], path: tuple[Any, ...] = ()
) -> Iterator[tuple[tuple[Any, ...], str]]:
    """``(path, text)`` of every string in ``value`` that names a word of the seed.

    Strings under a key in ``skip`` (ids and codes) are never words.
    """
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, dict):
        items = ((k, v) for k, v in value.items() if k not in skip)
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, item in items:
        if isinstance(item, str):
            if surface.template(item) is not None:
                yield (*path, key), item
        else:
            yield from _worded(item, surface, skip, (*path, key))


def _replace(world: State, path: tuple[Any, ...], text: str, render: Callable[[str], str]) -> None:
    """The string at ``path`` rendered anew: it is ``text`` in a fresh world."""
    container: Any = world
    for key in path[:-1]:
        container = container[key]
    current = container[path[-1]]
    # A world that is not the seed's (a caller's own) is rendered from what it holds.
    container[path[-1]] = render(text if current == text else current)


#: Keys whose strings are identifiers or codes, never words: left exactly as they are.
_CODES = frozenset(
    {
        "id", "ownerId", "managerId", "accountId", "primaryContactId", "stageId", "sourceLeadId",
        "mergedIntoId", "convertedAccountId", "convertedContactId", "convertedOpportunityId",
        "actorId", "entityId", "role", "status", "tier", "industry", "type", "source", "outcome",
        "lostReason", "country", "currency", "timezone",
    }
)  # fmt: skip


def vary(world: State, rng: random.Random) -> None:
    """Give ``world`` new people, brands and deal amounts in place (structure unchanged).

    Args:
        world: a freshly built CRM world.
        rng: the instance's random source (seeded from the instance id).
    """
    words = _words(world)
    surface = _surface(words[0] + words[1] + words[2])
    forms = surface.forms(_new_words(words, rng))
    names = [(p, {k: p[k] for k in ("firstName", "lastName", "email")}) for p in _people(world)]
    for path, text in surface.worded_paths(world):
        _replace(world, path, text, lambda old: surface.render(old, forms))
    for person, old in names:
        _readdress(surface, person, old, forms)  # rewritten word by word above: redone from the old
    low, high = _AMOUNT_SPREAD
    for deal in sorted_by_id(world["opportunities"]):
        scaled = round(deal["amount"] * rng.uniform(low, high) / _AMOUNT_STEP) * _AMOUNT_STEP
        # The same JSON type as before (185000 stays an integer): only the value changes.
        deal["amount"] = type(deal["amount"])(max(_AMOUNT_STEP, scaled))
