"""Money and rounding: one round-half-up for every world.

Money is a plain number in the world's currency, kept to cents. Rounding goes through the
decimal text of the float (``repr``), so ``1.005`` rounds to ``1.01`` as a person expects, not
to ``1.00`` as binary floating point would, without the epsilon tricks that misround elsewhere.
Whole amounts are ``int`` so derived figures read like the seed data (``48000``, not ``48000.0``).
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

__all__ = ["multiply_money", "percent", "round_half_up", "sum_money", "to_money"]

_NO_FRACTION = Decimal(2**53)
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
    rounded = round_half_up(value, 2)
    return int(rounded) if rounded.is_integer() else rounded


def sum_money(values: Iterable[float]) -> float:
    """The sum of amounts, rounded to cents once at the end (no drift from adding floats)."""
    total = sum((Decimal(repr(v)) for v in values), Decimal(0))
    return to_money(float(total))


def multiply_money(amount: float, factor: float) -> float:
    """``amount x factor`` (a line total, a tax) computed exactly, then rounded half up to cents.

    Multiplying floats first can land just below a half cent (``3 x 1.005`` is
    ``3.0149999...``); the product of the decimal texts is exact (``3.015`` -> ``3.02``).
    """
    exact = Decimal(repr(amount)) * Decimal(repr(factor))
    if not exact.is_finite():
        raise ValueError(f"cannot multiply {amount!r} by {factor!r}")
    return to_money(float(exact.quantize(_STEPS[2], rounding=ROUND_HALF_UP)))


def percent(part: float, whole: float, places: int = 1) -> float | None:
    """``part`` as a percentage of ``whole``, rounded half up; None when ``whole`` is 0."""
    if whole == 0:
        return None
    return round_half_up(part / whole * 100, places)
