"""The ``silo-async`` command line: a thin click shell over the library and the project SDK.

``main`` is the console-script entry point (also ``python -m silo_async``). Commands are
imported on first use so ``import silo_async`` never pays for click or the CLI.
"""

from __future__ import annotations

__all__ = ["main"]


def main() -> None:
    """Run the ``silo-async`` command line (exits the process)."""
    from ._app import app

    app(prog_name="silo-async")
