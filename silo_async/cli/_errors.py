"""How the CLI reports failures: one line on stderr, then the exit code.

* ``SiloError`` -> ``error: <code>: <message>``, exit 1.
* :class:`CliError` and agent-loading errors -> ``error: <message>``, exit 1.
* Usage errors (bad flags, missing arguments) are click's ``UsageError``: exit 2.

Errors stay one line of text even with ``--json``: stdout carries only successful output, so a
script can parse it without first checking what kind of document it got.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from .._agentload import AgentLoadError
from .._errors import SiloError

__all__ = ["CliError", "error_line", "reporting_errors"]


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


@contextmanager
def reporting_errors() -> Iterator[None]:
    """Turn expected failures raised inside the block into the one-line report and exit 1."""
    try:
        yield
    except click.ClickException:
        raise
    except Exception as exc:
        line = error_line(exc)
        if line is None:
            raise
        click.echo(line, err=True)
        raise click.exceptions.Exit(1) from None
