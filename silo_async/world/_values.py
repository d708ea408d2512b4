"""Short, JSON-safe descriptions of whatever an agent sent, for error messages and details.

A tool error must never fail to be written: the value an agent sent can be NaN, an integer of
ten thousand digits (which ``str`` refuses to print) or a megabyte of text. :func:`shown` gives
a value that is always valid, compact JSON; :func:`quoted` the same as message text.
"""

from __future__ import annotations

import math
import unicodedata
from typing import Any

__all__ = ["fold", "quoted", "shown"]

_MAX_TEXT = 60
_MAX_INT_DIGITS = 30


def shown(value: Any) -> Any:
    """``value`` if it is a short JSON scalar, else a short string describing it."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if value.bit_length() > _MAX_INT_DIGITS * 10 // 3:
            digits = math.floor(value.bit_length() * math.log10(2)) + 1
            return f"an integer of about {digits} digits"
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, str):
        return value if len(value) <= _MAX_TEXT else value[:_MAX_TEXT] + "…"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def quoted(value: Any) -> str:
    """:func:`shown` as message text: strings in double quotes, the rest as JSON would print."""
    if isinstance(value, str):
        return f'"{shown(value)}"'
    safe = shown(value)
    if isinstance(safe, str):  # a description (NaN, a long integer, a list...), not a string
        return safe
    if safe is None:
        return "null"
    if isinstance(safe, bool):
        return "true" if safe else "false"
    return repr(safe)


def fold(text: str) -> str:
    """``text`` for comparison: case- and accent-insensitive (``Élodie`` -> ``elodie``)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()
