"""Reading ``eval.json`` back, every field checked: a hand-edited plan is a coded error.

``eval.json`` is written once, before the first rollout, and never changed by silo_async. A
plan whose fields are not what silo_async wrote (a count that is text, a task list with a
number in it, a fault rule that does not read) would otherwise fail deep inside the resume
with a bare ``TypeError``; here it is ``SiloError("eval_invalid")`` naming the field, before
anything runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn, TypeVar

from .._errors import SiloError

__all__ = ["PlanFields", "read_fields"]

T = TypeVar("T")


class _Invalid(Exception):  # never leaves this module: read_fields makes it a SiloError
    """A field of the plan is not what silo_async writes; ``field`` and ``problem`` say how."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f'"{field}" {problem}')
        self.field = field
        self.problem = problem


def _is_count(value: Any, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _check_text(path: str, value: str) -> None:
    """Refuse a string no file name can hold: a lone surrogate not standing for a raw byte.

    silo_async writes a name that is not UTF-8 (a directory's raw bytes) as the surrogates
    U+DC80..U+DCFF, which the file system takes back as those bytes; any other lone surrogate
    was written by hand, and would fail the first time it meets a file name.
    """
    try:
        value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        code = ord(value[exc.start])
        raise _Invalid(
            path, f"holds a lone surrogate (U+{code:04X}), which no text can hold"
        ) from None


class PlanFields:
    """The fields of a parsed ``eval.json``, each read with the kind it must have.

    Args:
        data: the document (a JSON object).
    """

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data

    def value(self, path: str, default: Any = ...) -> Any:
        """The value at the dotted ``path`` (``default`` when absent; absent without one: bad)."""
        node: Any = self._data
        for part in path.split("."):
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, Mapping) and part in node:
                node = node[part]
            elif default is ...:
                raise _Invalid(path, "is missing")
            else:
                return default
        return node

    def bad(self, path: str, problem: str) -> NoReturn:
        """Refuse the field at ``path``: ``problem`` says what is wrong with it."""
        raise _Invalid(path, problem)

    def text(self, path: str, *, optional: bool = False, default: Any = ...) -> str | None:
        """A non-empty string (or null with ``optional``)."""
        value = self.value(path, default)
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value:
            raise _Invalid(path, f"must be a non-empty string{' or null' if optional else ''}")
        _check_text(path, value)
        return value

    def count(self, path: str, minimum: int, *, optional: bool = False, default: Any = ...) -> Any:
        """A whole number ``>= minimum`` (or null with ``optional``)."""
        value = self.value(path, default)
        if (value is None and optional) or _is_count(value, minimum):
            return value
        raise _Invalid(path, f"must be a whole number >= {minimum}{' or null' if optional else ''}")

    def flag(self, path: str, *, default: Any = ...) -> bool:
        """``true`` or ``false``."""
        value = self.value(path, default)
        if not isinstance(value, bool):
            raise _Invalid(path, "must be true or false")
        return value

    def mapping(self, path: str, *, optional: bool = False, default: Any = ...) -> Any:
        """A JSON object (or null with ``optional``)."""
        value = self.value(path, default)
        if (value is None and optional) or isinstance(value, Mapping):
            return value
        raise _Invalid(path, f"must be an object{' or null' if optional else ''}")

    def texts(self, path: str) -> list[str]:
        """A non-empty list of distinct non-empty strings."""
        value = self.value(path)
        if not isinstance(value, list) or not value:
            raise _Invalid(path, "must be a non-empty list")
        if not all(isinstance(item, str) and item for item in value):
            raise _Invalid(path, "must hold only non-empty strings")
        if len(set(value)) != len(value):
            raise _Invalid(path, "lists an entry twice")
        for n, item in enumerate(value):
            _check_text(f"{path}.{n}", item)
        return list(value)

    def items(self, path: str) -> list[Mapping[str, Any]]:
        """A non-empty list of JSON objects."""
        value = self.value(path)
        if not isinstance(value, list) or not value:
            raise _Invalid(path, "must be a non-empty list")
        if not all(isinstance(item, Mapping) for item in value):
            raise _Invalid(path, "must hold only objects")
        return list(value)

    def number(self, path: str, *, optional: bool = False) -> Any:
        """A number ``> 0`` (or null with ``optional``)."""
        value = self.value(path)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise _Invalid(path, f"must be a number > 0{' or null' if optional else ''}")
        return value

    def made(self, path: str, make: Callable[[], Any]) -> Any:
        """What ``make`` builds from the field at ``path``; its failure is the field's fault."""
        try:
            return make()
        except (SiloError, ValueError, TypeError, KeyError) as exc:
            message = exc.message if isinstance(exc, SiloError) else str(exc)
            raise _Invalid(path, f"cannot be read: {message}") from None


def read_fields(data: Mapping[str, Any], where: str, build: Callable[[PlanFields], T]) -> T:
    """What ``build`` makes of ``data`` (the plan read from ``where``), its fields checked.

    Raises:
        SiloError: ``eval_invalid`` naming the first field that is not what silo_async writes.
    """
    try:
        return build(PlanFields(data))
    except _Invalid as bad:
        raise SiloError(
            "eval_invalid",
            f"{where} is not a plan silo_async can run: {bad}. silo_async writes eval.json once, "
            "before the first rollout, and never changes it: put back the plan as it was, or "
            "start a new eval.",
            {"path": where, "field": bad.field, "problem": bad.problem},
        ) from None
