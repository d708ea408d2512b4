"""What a tool input may hold, decided once: JSON values, finite numbers, bounded nesting.

Every tool input is copied by :func:`copy_input` before its schema is checked, and the body
receives that copy. The copy is what JSON (RFC 8259) and every reader of it can represent:

* objects with string keys, arrays (a tuple becomes a list), strings (any ``str``, a lone
  surrogate included: artifacts escape it losslessly), booleans and ``null``;
* finite numbers: NaN and ±Infinity are refused, and so is an integer beyond the largest finite
  double (about 1.8e308), which no double-based reader can hold; the schema's ``integer`` is
  bounded further (see ``silo_async._schema``);
* at most :data:`~silo_async._jsonutil.MAX_DEPTH` nested arrays/objects.

Anything else is ``invalid_input``, phrased by :func:`input_problems`, so a tool body (and a
template's number helpers) only ever sees data it can compute with and the trace can write.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from ._jsonutil import MAX_DEPTH

__all__ = ["LARGEST_NUMBER", "InputRejectedError", "copy_input", "input_problems"]

#: The largest magnitude a number in a tool input may have: the largest finite double.
LARGEST_NUMBER = int(sys.float_info.max)


class InputRejectedError(ValueError):
    """The input is not a JSON value a tool may receive (see :func:`input_problems` for why)."""


def copy_input(value: Any, _depth: int = MAX_DEPTH) -> Any:
    """A plain copy of ``value`` that every rule above holds for.

    Raises:
        InputRejectedError: the input breaks one of the rules (without a message: this is the hot
            path, and only a rejected call pays for :func:`input_problems`).
    """
    t = type(value)
    if t is str or t is bool or value is None:
        return value
    if t is dict:
        if not _depth:
            raise InputRejectedError
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                k = _key(k)
            # The usual values are checked inline: a call per number would double the cost.
            tv = type(v)
            if (
                tv is str
                or tv is bool
                or v is None
                or (tv is int and -LARGEST_NUMBER <= v <= LARGEST_NUMBER)
                or (tv is float and v - v == 0.0)
            ):
                out[k] = v
            else:
                out[k] = copy_input(v, _depth - 1)
        return out
    if t is list or t is tuple:
        if not _depth:
            raise InputRejectedError
        return [v if type(v) is str else copy_input(v, _depth - 1) for v in value]
    if t is int:
        if -LARGEST_NUMBER <= value <= LARGEST_NUMBER:
            return value
        raise InputRejectedError
    if t is float:
        if value - value == 0.0:  # False for NaN and ±Infinity
            return value
        raise InputRejectedError
    return _subclass(value, _depth)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return str.__str__(key)
    raise InputRejectedError


def _subclass(value: Any, depth: int) -> Any:
    # Subclasses of the JSON types (an IntEnum, a str subclass) become the plain type.
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return copy_input(int(value), depth)
    if isinstance(value, float):
        return copy_input(float(value), depth)
    if isinstance(value, dict):
        return copy_input(dict(value), depth)
    if isinstance(value, list | tuple):
        return copy_input(list(value), depth)
    raise InputRejectedError


def input_problems(value: Any) -> list[str]:
    """Why :func:`copy_input` refuses ``value``, phrased for an agent (empty when it does not)."""
    out: list[str] = []
    _walk(value, "", MAX_DEPTH, out)
    return out


def _walk(value: Any, where: str, depth: int, out: list[str]) -> None:
    if isinstance(value, str | bool) or value is None:
        return
    if isinstance(value, dict | list | tuple):
        if not depth:
            # Named by its top-level parameter: the full path would be 64 segments long.
            top = where.split(".")[0].split("[")[0]
            out.append(f"{_at(top)} nests more than {MAX_DEPTH} arrays/objects")
            return
        if isinstance(value, dict):
            for k, v in value.items():
                if not isinstance(k, str):
                    out.append(f"{_at(where)} has a key that is not a string ({k!r})")
                    continue
                _walk(v, f"{where}.{k}" if where else k, depth - 1, out)
        else:
            for i, v in enumerate(value):
                _walk(v, f"{where}[{i}]", depth - 1, out)
        return
    if isinstance(value, float) and not math.isfinite(value):
        shown = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        out.append(f"{_at(where)} must be a finite number, received {shown}")
    elif isinstance(value, int) and not -LARGEST_NUMBER <= value <= LARGEST_NUMBER:
        digits = int(value.bit_length() * math.log10(2)) + 1
        out.append(
            f"{_at(where)} must be a number of at most about 1.8e308, received an integer "
            f"of about {digits} digits"
        )
    elif not isinstance(value, int | float):
        out.append(f"{_at(where)} must be a JSON value, received {type(value).__name__}")


def _at(where: str) -> str:
    return f'"{where}"' if where else "arguments"
