"""Number readers: whole numbers, numbers and money, each within a finite range by default.

A JSON value can be NaN, ``1e400`` or an integer of ten thousand digits; these readers refuse
anything that is not a finite number in range with ``invalid_input`` (house style, see
:mod:`silo_async.world._readers`), so a value that passes is safe to compute with and to write
as JSON.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, TypeVar, overload

from ._money import to_money
from ._readers import REQUIRED, invalid, take

__all__ = [
    "MAX_AMOUNT",
    "MAX_INTEGER",
    "MAX_NUMBER",
    "int_rule",
    "money_rule",
    "number_rule",
    "read_int",
    "read_money",
    "read_number",
]

T = TypeVar("T")

#: Default bound of :func:`read_int`: the largest integer a float (and so every JSON reader)
#: represents exactly.
MAX_INTEGER: Final = 2**53 - 1
#: Default bound of :func:`read_number`.
MAX_NUMBER: Final = 1e15
#: Default ceiling of :func:`read_money`: a trillion in the world's currency.
MAX_AMOUNT: Final = 1e12


def _bounded(name: str, value: Any, number: float, lo: float, hi: float) -> None:
    if number < lo:
        raise invalid(name, f"must be at least {_plain(lo)}", value, minimum=lo)
    if number > hi:
        raise invalid(name, f"must be at most {_plain(hi)}", value, maximum=hi)


def _plain(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() and abs(bound) < 1e16 else f"{bound:g}"


def int_rule(name: str, value: Any, minimum: int | None = None, maximum: int | None = None) -> int:
    """A whole number within ``[minimum, maximum]`` (default ``±MAX_INTEGER``); ``3.0`` is 3."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid(name, "must be a whole number", value)
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise invalid(name, "must be a whole number", value)
    lo = -MAX_INTEGER if minimum is None else minimum
    hi = MAX_INTEGER if maximum is None else maximum
    _bounded(name, value, value, lo, hi)
    return int(value)


def _finite(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid(name, "must be a number", value)
    if isinstance(value, float) and not math.isfinite(value):
        raise invalid(name, "must be a finite number", value)
    return value


def number_rule(
    name: str, value: Any, minimum: float | None = None, maximum: float | None = None
) -> Any:
    """A finite number within ``[minimum, maximum]`` (default ``±MAX_NUMBER``), as given."""
    number = _finite(name, value)
    lo = -MAX_NUMBER if minimum is None else minimum
    hi = MAX_NUMBER if maximum is None else maximum
    _bounded(name, value, number, lo, hi)
    return value


def money_rule(
    name: str, value: Any, allow_zero: bool = False, maximum: float = MAX_AMOUNT
) -> float:
    """A positive (or, with ``allow_zero``, non-negative) amount, rounded half up to cents."""
    number = _finite(name, value)
    if number < 0 or (number == 0 and not allow_zero):
        rule = "must not be negative" if allow_zero else "must be a positive amount"
        raise invalid(name, rule, value)
    _bounded(name, value, number, 0, maximum)
    amount = to_money(number)
    if amount == 0 and not allow_zero:
        raise invalid(name, "must be at least 0.01", value, minimum=0.01)
    return amount


@overload
def read_int(
    input: Mapping[str, Any],
    key: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    path: str | None = None,
) -> int: ...
@overload
def read_int(
    input: Mapping[str, Any],
    key: str,
    default: T,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    path: str | None = None,
) -> int | T: ...
def read_int(
    input: Mapping[str, Any],
    key: str,
    default: Any = REQUIRED,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    path: str | None = None,
) -> Any:
    """A whole number within ``[minimum, maximum]`` (default ``±MAX_INTEGER``).

    ``3.0`` is read as ``3`` (JSON Schema counts it as an integer too); booleans are refused.
    """
    return take(input, key, default, path, int_rule, minimum=minimum, maximum=maximum)


@overload
def read_number(
    input: Mapping[str, Any],
    key: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    path: str | None = None,
) -> float: ...
@overload
def read_number(
    input: Mapping[str, Any],
    key: str,
    default: T,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    path: str | None = None,
) -> float | T: ...
def read_number(
    input: Mapping[str, Any],
    key: str,
    default: Any = REQUIRED,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    path: str | None = None,
) -> Any:
    """A finite number within ``[minimum, maximum]`` (default ``±MAX_NUMBER``), as given."""
    return take(input, key, default, path, number_rule, minimum=minimum, maximum=maximum)


@overload
def read_money(
    input: Mapping[str, Any],
    key: str,
    *,
    allow_zero: bool = False,
    maximum: float = MAX_AMOUNT,
    path: str | None = None,
) -> float: ...
@overload
def read_money(
    input: Mapping[str, Any],
    key: str,
    default: T,
    *,
    allow_zero: bool = False,
    maximum: float = MAX_AMOUNT,
    path: str | None = None,
) -> float | T: ...
def read_money(
    input: Mapping[str, Any],
    key: str,
    default: Any = REQUIRED,
    *,
    allow_zero: bool = False,
    maximum: float = MAX_AMOUNT,
    path: str | None = None,
) -> Any:
    """A positive (or, with ``allow_zero``, non-negative) amount, rounded half up to cents.

    Whole amounts come back as ``int`` (see :func:`~silo_async.world.to_money`).
    """
    return take(input, key, default, path, money_rule, allow_zero=allow_zero, maximum=maximum)
