"""How the CLI reports failures: one line on stderr, then the exit code.

* ``SiloError`` -> ``error: <code>: <message>``, exit 1.
* :class:`CliError` and agent-loading errors -> ``error: <message>``, exit 1 (failures about
  the user's own files and flags rather than the project store, so they carry no code).
* Usage errors (bad flags, missing arguments) are click's ``UsageError``: exit 2.
* Anything else (a bug, or an exception escaping environment code such as ``create_state``) ->
  ``error: unexpected <Type>: <message> (<file>:<line> in <function>; ...)``, exit 1; the
  global ``--traceback`` flag lets it propagate with its full traceback instead.

Errors stay one line of text even with ``--json``: stdout carries only successful output, so a
script can parse it without first checking what kind of document it got.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from .._agentload import AgentLoadError
from .._errors import SiloError

__all__ = ["CliError", "error_line", "reporting_errors", "unexpected_line"]


class CliError(Exception):
    """A user-facing failure without a SiloError code (printed as ``error: <message>``)."""


def _leaf(exc: BaseException) -> BaseException:
    # A task group wraps a lone failure in an ExceptionGroup; report the failure itself.
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def error_line(exc: BaseException) -> str | None:
    """The ``error: ...`` line for an expected failure, or None for anything else (a bug)."""
    exc = _leaf(exc)
    if isinstance(exc, SiloError):
        return f"error: {exc.code}: {exc.message}"
    if isinstance(exc, CliError | AgentLoadError):
        return f"error: {exc}"
    return None


def _shown(path: str) -> str:
    try:
        relative = Path(path).resolve().relative_to(Path.cwd().resolve())
    except (OSError, ValueError):
        return path
    return relative.as_posix() if os.sep == "/" else str(relative)


def unexpected_line(exc: BaseException) -> str:
    """One line for an unexpected exception, naming where it was raised."""
    exc = _leaf(exc)
    text = f"error: unexpected {type(exc).__name__}: {exc}"
    frames = traceback.extract_tb(exc.__traceback__)
    where = (
        f"{_shown(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name}; "
        if frames
        else ""
    )
    return f"{text} ({where}rerun with --traceback for details)"


@contextmanager
def reporting_errors(*, show_traceback: bool = False) -> Iterator[None]:
    """Report failures raised inside the block as one line on stderr and exit 1.

    Args:
        show_traceback: let unexpected exceptions propagate (with their traceback) instead.
    """
    try:
        yield
    except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
        raise
    except Exception as exc:
        line = error_line(exc)
        if line is None:
            if show_traceback:
                raise
            line = unexpected_line(exc)
        click.echo(line, err=True)
        raise click.exceptions.Exit(1) from None
