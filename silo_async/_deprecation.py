"""Deprecated names: how an old public name keeps working for a release, and says so.

A module that renames or moves a public name keeps the old one importable until the release that
removes it, through one :class:`DeprecatedNames` serving as the module's ``__getattr__``::

    _DEPRECATED = DeprecatedNames("silo_async", {"ToolCallLimitExceeded":
                                                 "silo_async.ToolCallLimitExceededError"})
    __deprecated__ = _DEPRECATED.replacements
    if not TYPE_CHECKING:  # type checkers see the old names declared under TYPE_CHECKING
        __getattr__ = _DEPRECATED.attribute

Every old name warns alike: a ``DeprecationWarning`` pointing at the caller's line, naming the
old name, its replacement and the release that removes it. Old names stay out of ``__all__``
(a star import stays quiet); ``__deprecated__`` maps each one to its replacement, for tools that
walk the surface and for the CHANGELOG's "Deprecated" section, which a test holds to it.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping
from typing import Any

__all__ = ["REMOVAL", "DeprecatedNames", "warn_deprecated"]

#: The release that removes the names deprecated in this one.
REMOVAL = "0.2.0"


def warn_deprecated(old: str, new: str, removal: str = REMOVAL, *, stacklevel: int = 2) -> None:
    """Warn that ``old`` is deprecated in favour of ``new`` and goes in release ``removal``.

    Args:
        old: the deprecated name, dotted in full (``silo_async.world.read_string``).
        new: what to use instead, dotted in full.
        removal: the release without ``old``.
        stacklevel: as for :func:`warnings.warn`, counted from the caller of this function.
    """
    warnings.warn(
        f"{old} is deprecated: use {new} instead; {old} goes in silo_async {removal}.",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


class DeprecatedNames:
    """The deprecated names of one module, each with its replacement and its removal release.

    Args:
        module: the module's dotted name (``__name__``).
        replacements: old name -> its replacement, dotted in full (the replacement is imported
            when the old name is read).
        removal: the release that removes them.
    """

    def __init__(
        self, module: str, replacements: Mapping[str, str], removal: str = REMOVAL
    ) -> None:
        self.module = module
        self.replacements: dict[str, str] = dict(replacements)
        self.removal = removal

    def attribute(self, name: str) -> Any:
        """The module's ``__getattr__``: a deprecated name's replacement, with the warning.

        Raises:
            AttributeError: ``name`` is not a deprecated name of the module either.
        """
        new = self.replacements.get(name)
        if new is None:
            raise AttributeError(f"module {self.module!r} has no attribute {name!r}")
        warn_deprecated(f"{self.module}.{name}", new, self.removal, stacklevel=2)
        home, _, attr = new.rpartition(".")
        return getattr(importlib.import_module(home), attr)
