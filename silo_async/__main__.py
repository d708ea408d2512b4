"""``python -m silo_async``: the same command line as ``silo-async``."""

from __future__ import annotations

from silo_async.cli import main

if __name__ == "__main__":
    main()
