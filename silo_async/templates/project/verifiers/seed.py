"""The seed records a verifier grades against, found by what they are rather than by id.

A verifier whose records are missing (a seed edited by hand) fails with one check saying so,
instead of raising on the first lookup.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import silo_async as silo
from silo_async.world.grade import find_by, written_by

from ..state import Record, State

__all__ = ["acting", "needs_seed", "seed_record"]

Grade = Callable[[State, State, silo.VerifierContext], list[silo.Check]]


class _MissingSeed(LookupError):
    """A record :func:`seed_record` looked for is not in the seed."""


def seed_record(initial: State, collection: str, field: str, value: str) -> Record:
    """The first seed record of ``collection`` whose ``field`` is ``value`` (as ``find_by``).

    Raises:
        LookupError: when there is none, which :func:`needs_seed` turns into a failing check.
    """
    found: Record | None = find_by(initial, collection, field, value)
    if found is None:
        raise _MissingSeed(f"No {collection} record with {field} {value!r} in the seed.")
    return found


def needs_seed(missing: str) -> Callable[[Grade], Grade]:
    """The verifier returns the single failing check ``missing`` when a seed record is absent."""

    def wrap(grade: Grade) -> Grade:
        @functools.wraps(grade)
        def graded(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
            try:
                return grade(final, initial, ctx)
            except _MissingSeed:
                return [silo.check(missing, False)]

        return graded

    return wrap


def acting(final: State, initial: State, name: str) -> silo.Check:
    """Every change the rollout made was made as the member ``name`` ("You are Ruth Abebe")."""
    member = seed_record(initial, "members", "name", name)
    label = f"every change was made as {name} ({member['id']})"
    return written_by(final, initial, member["id"], label=label)
