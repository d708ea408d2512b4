"""Number options whose errors say what was expected, in words (not click's type names).

click's own ranges answer ``'abc' is not a valid integer range.``; these answer ``'abc' is
not a whole number (for example 5).`` and keep click's range check and message for a number
out of range. Every numeric option of the CLI uses them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # generic in click 8.2+ only: subscripted for the type checker alone
    _TaskListBase = click.ParamType[list[str], Any]
else:
    _TaskListBase = click.ParamType

__all__ = ["Number", "TaskList", "WholeNumber"]


class WholeNumber(click.IntRange):
    """An integer option, optionally bounded (as :class:`click.IntRange`)."""

    name = "whole number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Parse ``value``; text that is no integer fails naming what was expected."""
        if isinstance(value, str):
            try:
                int(value)
            except ValueError:
                self.fail(f"{value!r} is not a whole number (for example 5).", param, ctx)
        return super().convert(value, param, ctx)


class Number(click.FloatRange):
    """A decimal option, optionally bounded (as :class:`click.FloatRange`)."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Parse ``value``; text that is no number fails naming what was expected."""
        if isinstance(value, str):
            try:
                float(value)
            except ValueError:
                self.fail(f"{value!r} is not a number (for example 0.8).", param, ctx)
        return super().convert(value, param, ctx)


class TaskList(_TaskListBase):
    """``--tasks``: ``all``, or task ids separated by commas (``TASK-001,TASK-002``).

    Converts to the list of ids (``["all"]`` for every task); the repeatable ``--task ID`` is
    the other spelling, named in the error.
    """

    name = "tasks"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Split the ids; an empty list fails naming both spellings."""
        if isinstance(value, list):
            return value
        ids = [part.strip() for part in str(value).split(",") if part.strip()]
        if not ids:
            self.fail(
                f"{value!r} names no task: give --tasks all, ids separated by commas "
                "(--tasks TASK-001,TASK-002), or repeat --task ID.",
                param,
                ctx,
            )
        return ["all"] if ids == ["all"] else ids
