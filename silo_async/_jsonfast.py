"""Fast paths for JSON text, each measured, each beside the readable reference it must equal.

**Pretty JSON** (:func:`pretty`): what ``result.json``, ``state-diff.json``, ``run.json`` and
``summary.json`` hold. The reference is the standard library's ``json.dumps(value, indent=2,
ensure_ascii=False)`` (:func:`silo_async._jsonutil.pretty_reference`). On CPython 3.11 the
standard library writes indented JSON with its pure-Python encoder, generators and all; this
one-pass writer of the exact JSON types is about 4 × faster on a rollout's three documents
(a crm-sized rollout: 122 µs with ``json.dumps``, 82 µs with a prebuilt ``JSONEncoder``, 31 µs
here), which ``benchmarks/bench_rollouts.py`` sees as rollouts per second written to tmpfs.
Anything it does not handle the way the reference does (tuples, subclasses, keys that are not
``str``, non-finite floats, integers too long to print, unknown objects, nesting too deep for
recursion) raises :class:`FastPathError`, and the caller uses the reference. A hypothesis test
(``tests/test_jsonfast.py``) checks that both give the same text for any JSON-like data.

Only public APIs: strings are escaped by a prebuilt ``json.JSONEncoder(ensure_ascii=False)``
(its ``encode`` of a ``str`` is the C escaper the reference uses), numbers by ``int.__repr__``
and ``float.__repr__`` (what the reference calls).

**Compact JSON** (:func:`compact`): every trace line and tool output. The reference is
``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``
(:func:`silo_async._jsonutil.compact_reference`). The standard library builds a new C encoder
on every call, which costs more than encoding a small document (a trace event: 1.5 µs here,
2.5 µs with a prebuilt ``JSONEncoder``, 3.4 µs with ``json.dumps``); CPython's C encoder holds
no state when it keeps no circular-reference table, so this one is built once and shared (also by
threads). That takes the constructor and escaper the standard library itself uses,
``json.encoder.c_make_encoder`` and ``json.encoder.encode_basestring``: the two names here that
the ``json`` documentation does not list, kept because ``benchmarks/bench_rollouts.py`` shows
what they save. Where it is missing (another interpreter), :func:`compact` always raises
:class:`FastPathError` and the reference writes everything.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

__all__ = ["FastPathError", "compact", "pretty"]


class FastPathError(ValueError):
    """Data a fast path leaves to its reference (see the module docstring)."""


#: A JSON string literal of a str, escaped as the reference escapes it (ensure_ascii=False).
_string = json.JSONEncoder(ensure_ascii=False).encode
_INF = math.inf


def _shared_c_encoder() -> Callable[[Any, int], Any] | None:
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has it
        return None
    # No marker table (circular data recurses until RecursionError), default=str, the
    # reference's escaper and separators, sort_keys/skipkeys off, allow_nan off: a non-finite
    # float raises and the reference writes it as null.
    encoder: Callable[[Any, int], Any] = make(
        None, str, json.encoder.encode_basestring, None, ":", ",", False, False, False
    )
    return encoder


_c_encoder = _shared_c_encoder()


def compact(value: Any) -> str:
    """``value`` as compact JSON: no spaces, unknown objects as their ``str``.

    Byte for byte ``json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)``.

    Raises:
        FastPathError: a non-finite float, an integer too long to print, a key JSON cannot hold,
            circular or too deep data, or no C encoder: for the reference to write.
    """
    if _c_encoder is None:  # pragma: no cover
        raise FastPathError
    try:
        return "".join(_c_encoder(value, 0))
    except (ValueError, TypeError, RecursionError):
        raise FastPathError from None


def pretty(value: Any) -> str:
    """``value`` as pretty JSON (2-space indent) with a trailing newline.

    Byte for byte ``json.dumps(value, indent=2, ensure_ascii=False)`` and a newline.

    Raises:
        FastPathError: ``value`` holds something this writer leaves to the reference.
    """
    parts: list[str] = []
    try:
        _into(value, "", parts.append)
    except (ValueError, RecursionError):  # an int too long to print; circular or too deep
        raise FastPathError from None
    parts.append("\n")
    return "".join(parts)


def _atom(value: Any, kind: type) -> str:
    if kind is str:
        return _string(value)
    if kind is int:
        return int.__repr__(value)  # ValueError beyond the digits Python prints
    if kind is float:
        if value != value or value == _INF or value == -_INF:
            raise FastPathError
        return float.__repr__(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    raise FastPathError


def _into(value: Any, pad: str, out: Callable[[str], None]) -> None:
    """Append ``value``'s pretty JSON to ``out`` at indentation ``pad`` (one recursive pass)."""
    kind = type(value)
    if kind is dict:
        if not value:
            out("{}")
            return
        inner = pad + "  "
        sep, next_sep = "{\n" + inner, ",\n" + inner
        for key, item in value.items():
            if type(key) is not str:
                raise FastPathError
            kind = type(item)
            if kind is dict or kind is list:
                out(f"{sep}{_string(key)}: ")
                _into(item, inner, out)
            else:
                out(f"{sep}{_string(key)}: {_atom(item, kind)}")
            sep = next_sep
        out(f"\n{pad}}}")
    elif kind is list:
        if not value:
            out("[]")
            return
        inner = pad + "  "
        sep, next_sep = "[\n" + inner, ",\n" + inner
        for item in value:
            kind = type(item)
            if kind is dict or kind is list:
                out(sep)
                _into(item, inner, out)
            else:
                out(f"{sep}{_atom(item, kind)}")
            sep = next_sep
        out(f"\n{pad}]")
    else:
        out(_atom(value, kind))
