"""The CLI as the tests drive it: in process, through click's test runner."""

from __future__ import annotations

from click.testing import CliRunner, Result

from silo_async.cli._app import app


def cli(*args: str) -> Result:
    """Run ``silo-async ARGS`` in this process; click's result holds the output and exit code."""
    return CliRunner().invoke(app, list(args))
