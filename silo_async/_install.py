"""How a message says to install an optional extra: the index's way and the clone's.

silo_async is installed from a clone of its repository (``pip install -e '.[mcp]'``) until it
is published; every "needs the X extra" message names both, so the line it gives works for
either kind of install.
"""

from __future__ import annotations

__all__ = ["install_line"]


def install_line(extra: str) -> str:
    """``pip install 'silo_async[EXTRA]'`` and the same from a clone, for a message."""
    clone = f"pip install -e '.[{extra}]'"
    return f"pip install 'silo_async[{extra}]' (from a clone of silo_async: {clone})"
