"""How the CLI reports failures: one line on stderr, then the exit code.

* ``SiloError`` (:class:`CliError` and agent-loading errors among them) ->
  ``error: <code>: <message>``, exit 1. Besides the 17 authoring codes, the CLI's own failures
  use the codes of :data:`CLI_ERROR_CODES` (Silo printed these without a code; silo_async
  gives one on every error line).
* Usage errors (bad flags, missing arguments) are click's ``UsageError``: exit 2, printed as
  ``error: usage_error: <message> See '<command> --help'.`` (``_usage.OneLineUsageError``).
* Anything else (a bug, or an exception escaping environment code such as ``create_state``) ->
  ``error: internal_error: unexpected <Type>: <message> (<file>:<line> in <function>; ...)``,
  exit 1 (``internal_error``, as for a tool that raises); the
  global ``--traceback`` flag lets it propagate with its full traceback instead.

Errors stay one line of text even with ``--json``: stdout carries only successful output, so a
script can parse it without first checking what kind of document it got.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import click

from .._errors import SiloError

__all__ = [
    "CLI_ERROR_CODES",
    "EXIT_INTERRUPTED",
    "CliError",
    "error_line",
    "fail",
    "reporting_errors",
    "unexpected_line",
]

#: Exit status when stdout's reader went away: what a process killed by SIGPIPE reports.
EXIT_BROKEN_PIPE = 141
#: Exit status of a command stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130

#: Codes of failures that are not about the project store (which raises SiloErrors).
CLI_ERROR_CODES = (
    "agent_not_found",  # --agent names no file, module or attribute (or ./silo_agent.py is missing)
    "agent_invalid",  # found, but not a usable async def agent(ctx); or two agents share a label
    "run_not_found",  # runs show / replay: no run with that id (or part of an id)
    "run_ambiguous",  # part of an id that matches several runs
    "run_invalid",  # a run directory whose files are damaged or incomplete
    "eval_not_found",  # runs list --eval: no such eval
    "out_dir_not_empty",  # eval --out: the directory already holds files
    "eval_locked",  # eval --out / --resume: another process writes that eval directory
    "eval_invalid",  # eval --resume: eval.json was edited into a plan silo_async cannot run
    "model_invalid",  # --model: bad spec, unknown provider, missing SDK extra or missing key
    "executor_invalid",  # eval --executor ray: an address, size or object it cannot use or ship
    "executor_unavailable",  # eval --executor ray: Ray missing, unreachable or failing to start
    "cancelled",  # run or eval interrupted (Ctrl-C); exit 130
    "disk_full",  # no space left (or quota exceeded) where runs or files are written
    "not_writable",  # where runs or files are written is not a writable directory
    "fail_under",  # eval --fail-under RATE: an agent's pass rate is below RATE
    "prices_invalid",  # eval --prices FILE: missing, not JSON, or not a price table
    "internal_error",  # an unexpected exception (a bug, or environment code that raised)
    "mcp_not_installed",  # serve: the mcp extra is missing
    "tool_name_reserved",  # serve: the environment has its own tool named "submit"
    "serve_unprotected",  # serve --transport http on a non-loopback host without a token
    "token_invalid",  # serve --token / SILO_SERVE_TOKEN: bytes that are not UTF-8
    "address_unavailable",  # serve --transport http / scripted-model: the port cannot be bound
    "model_script_not_found",  # scripted-model: no such script file or attribute
    "model_script_invalid",  # scripted-model: it does not import, or is no list nor function
    "model_script_failed",  # scripted-model: the script function raised while serving
    "usage_error",  # a wrong flag, command, argument or value (exit 2)
)


class CliError(SiloError):
    """A user-facing failure of the CLI itself, printed as ``error: <code>: <message>``.

    Args:
        code: the error code (see :data:`CLI_ERROR_CODES`).
        message: what went wrong and the fix.
        status: the exit status (1, or 130 for an interrupted command).
    """

    def __init__(self, code: str, message: str, status: int = 1) -> None:
        super().__init__(code, message)
        self.status = status


def fail(code: str, message: str, status: int = 1) -> NoReturn:
    """Stop the command with ``error: <code>: <message>`` on stderr, exit ``status`` (1)."""
    raise CliError(code, message, status)


#: Errors of the file system that are the machine's state, not a bug: a full disk or quota.
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
#: ... and a place to write that is a file, read-only or not ours: the user's setup, not a bug.
_NOT_WRITABLE = (errno.ENOTDIR, errno.EISDIR, errno.EROFS, errno.EACCES, errno.EPERM)


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside ``exc``, task groups (ExceptionGroups) flattened."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _expected(exc: BaseException) -> bool:
    return isinstance(exc, SiloError) or (
        isinstance(exc, OSError) and exc.errno in (*_DISK_FULL, *_NOT_WRITABLE)
    )


def _leaf(exc: BaseException) -> tuple[BaseException, int]:
    """The failure to report from ``exc`` and how many others came with it.

    Concurrent rollouts that fail alike (a full disk under ``--runs 3``) arrive as one group:
    the first expected failure is reported, else the first failure.
    """
    leaves = _leaves(exc) or [exc]
    chosen = next((leaf for leaf in leaves if _expected(leaf)), leaves[0])
    return chosen, len(leaves) - 1


def error_line(exc: BaseException) -> str | None:
    """The ``error: ...`` line for an expected failure, or None for anything else (a bug)."""
    exc, _ = _leaf(exc)
    if isinstance(exc, SiloError):  # CliError and AgentLoadError among them
        return f"error: {exc.code}: {exc.message}"
    if isinstance(exc, OSError) and exc.errno in _DISK_FULL:
        return f"error: disk_full: {_disk_full(exc)}"
    if isinstance(exc, OSError) and exc.errno in _NOT_WRITABLE and exc.filename is not None:
        return f"error: not_writable: {_not_writable(exc)}"
    return None


def _disk_full(exc: OSError) -> str:
    what = exc.strerror or "No space left on device"
    if exc.filename is None:
        return f"{what}; free some space and run again."
    directory = _shown(os.path.dirname(os.fspath(exc.filename)) or ".")
    return (
        f"{what} while writing in {directory}; free some space there (or write elsewhere, "
        "e.g. eval --out DIR on another disk) and run again."
    )


def _not_writable(exc: OSError) -> str:
    """What is in the way of ``exc.filename``: a file where a directory should be, or rights."""
    path = Path(os.fspath(exc.filename))
    blocker = next((p for p in (path, *path.parents) if p.exists() or p.is_symlink()), path)
    if exc.errno == errno.ENOTDIR and not blocker.is_dir():
        problem = f"{_shown(str(blocker))} is a file, not a directory"
    else:
        problem = f"{exc.strerror or 'cannot write'}: {_shown(str(path))}"
    return (
        f"{problem}; make it a directory you can write (or write elsewhere, e.g. eval --out "
        "DIR) and run again."
    )


def _shown(path: str) -> str:
    try:
        relative = Path(path).resolve().relative_to(Path.cwd().resolve())
    except (OSError, ValueError):
        return path
    return relative.as_posix() if os.sep == "/" else str(relative)


def unexpected_line(exc: BaseException) -> str:
    """One line for an unexpected exception, naming where it was raised."""
    exc, others = _leaf(exc)
    text = f"error: internal_error: unexpected {type(exc).__name__}: {exc}"
    if others:
        text += f" (and {others} more error{'s' if others > 1 else ''})"
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
    except KeyboardInterrupt:
        # Ctrl-C outside a long command's own handling (loading an environment, an agent).
        click.echo("error: cancelled: interrupted (Ctrl-C).", err=True)
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
    except BrokenPipeError:
        # The reader went away (`silo-async runs list | head`): nothing to report, and the
        # interpreter's final flush must not hit the closed pipe again.
        with contextlib.suppress(OSError, ValueError):  # stdout may have no descriptor
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise click.exceptions.Exit(EXIT_BROKEN_PIPE) from None
    except Exception as exc:
        line = error_line(exc)
        if line is None:
            if show_traceback:
                raise
            line = unexpected_line(exc)
        click.echo(line, err=True)
        leaf, _ = _leaf(exc)
        raise click.exceptions.Exit(leaf.status if isinstance(leaf, CliError) else 1) from None
