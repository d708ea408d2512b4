"""Money and rounding: one round-half-up for every world.

Money is a plain number in the world's currency, kept to cents. Rounding goes through the
decimal text of the float (``repr``), so ``1.005`` rounds to ``1.01`` as a person expects, not
to ``1.00`` as binary floating point would, without the epsilon tricks that misround elsewhere.
Whole amounts are ``int`` so derived figures read like the seed data (``48000``, not ``48000.0``).

Amounts that already hold whole cents (nearly all of a world's money) take a fast path in whole
cents, exact in integer arithmetic and giving the same result as the decimal path: a world
computes its derived money on every read, so this is on every rollout's path.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

__all__ = ["multiply_money", "percent", "round_half_up", "sum_money", "to_money"]

_NO_FRACTION = Decimal(2**53)
#: Cents beyond this are not exact in a float; such amounts take the decimal path.
_MAX_CENTS = 2**53


def _cents(value: Any) -> int | None:
    """``value`` in whole cents when it holds whole cents exactly, else None.

    A float equal to ``cents / 100`` is the nearest float to that two-decimal amount, so its
    decimal text has at most two decimals and rounding it to cents changes nothing.
    """
    kind = type(value)
    if kind is int:
        cents: int = value * 100
    elif kind is float and -1e13 < value < 1e13:
        cents = round(value * 100)
        if cents / 100 != value:
            return None
    else:
        return None
    return cents if -_MAX_CENTS < cents < _MAX_CENTS else None


def _from_cents(cents: int) -> float:
    return cents // 100 if cents % 100 == 0 else cents / 100


_STEPS = {places: Decimal(1).scaleb(-places) for places in range(7)}


def round_half_up(value: float, places: int = 2) -> float:
    """``value`` rounded to ``places`` decimals, halves away from zero (2.5 -> 3, -2.5 -> -3).

    Raises:
        ValueError: ``value`` is not finite, or ``places`` is outside 0..6.
    """
    step = _STEPS.get(places)
    if step is None:
        raise ValueError(f"places must be 0..6, not {places}")
    exact = Decimal(repr(value))
    if not exact.is_finite():
        raise ValueError(f"cannot round {value!r}")
    if abs(exact) >= _NO_FRACTION:
        return float(exact)  # a float this large has no decimals left to round
    return float(exact.quantize(step, rounding=ROUND_HALF_UP))


def to_money(value: float) -> float:
    """``value`` rounded half up to cents; an ``int`` when it is a whole amount."""
    cents = _cents(value)
    if cents is not None:
        return _from_cents(cents)
    rounded = round_half_up(value, 2)
    return int(rounded) if rounded.is_integer() else rounded


def sum_money(values: Iterable[float]) -> float:
    """The sum of amounts, rounded to cents once at the end (no drift from adding floats)."""
    amounts = list(values)
    cents = [_cents(v) for v in amounts]
    if None not in cents:
        whole = sum(cents)  # type: ignore[arg-type]
        if -_MAX_CENTS < whole < _MAX_CENTS:
            return _from_cents(whole)
    total = sum((Decimal(repr(v)) for v in amounts), Decimal(0))
    return to_money(float(total))


def multiply_money(amount: float, factor: float) -> float:
    """``amount x factor`` (a line total, a tax) computed exactly, then rounded half up to cents.

    Multiplying floats first can land just below a half cent (``3 x 1.005`` is
    ``3.0149999...``); the product of the decimal texts is exact (``3.015`` -> ``3.02``).
    """
    for money, times in ((amount, factor), (factor, amount)):
        cents, whole = _cents(money), _cents(times)
        if cents is not None and whole is not None and whole % 100 == 0:
            product = cents * (whole // 100)  # whole cents x a whole number: exact
            if -_MAX_CENTS < product < _MAX_CENTS:
                return _from_cents(product)
    exact = Decimal(repr(amount)) * Decimal(repr(factor))
    if not exact.is_finite():
        raise ValueError(f"cannot multiply {amount!r} by {factor!r}")
    return to_money(float(exact.quantize(_STEPS[2], rounding=ROUND_HALF_UP)))


def percent(part: float, whole: float, places: int = 1) -> float | None:
    """``part`` as a percentage of ``whole``, rounded half up; None when ``whole`` is 0."""
    if whole == 0:
        return None
    return round_half_up(part / whole * 100, places)
