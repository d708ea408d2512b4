"""Where an object came from, so another process can rebuild it instead of copying it.

An environment loaded from ``.silo/environments/<name>/`` or an agent loaded from a file lives in
a private module (imported by path under a made-up name) that no other process can import. What
such an object *is* is better described by how it was made: ``load_environment(name, project)``,
``load an agent from spec``. The loaders record that recipe here; a shipper (the Ray executor)
sends the recipe instead of the object, and the receiving process runs it.

Only the exact objects the loaders returned are recorded (weakly: recording keeps nothing
alive), so an environment derived from a loaded one is not mistaken for it.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Recipe", "origin_of", "rebuild", "remember"]

T = TypeVar("T")

#: ``(function, args, kwargs)``: calling ``function(*args, **kwargs)`` rebuilds the object. The
#: function must be importable by name wherever the recipe is run.
Recipe = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]

_recipes: weakref.WeakKeyDictionary[Any, Recipe] = weakref.WeakKeyDictionary()


def remember(obj: T, function: Callable[..., Any], *args: Any, **kwargs: Any) -> T:
    """Record that ``function(*args, **kwargs)`` rebuilds ``obj``; returns ``obj``.

    Objects that cannot be weakly referenced are not recorded (they ship as themselves).
    """
    with contextlib.suppress(TypeError):
        _recipes[obj] = (function, tuple(args), dict(kwargs))
    return obj


def origin_of(obj: object) -> Recipe | None:
    """The recipe recorded for ``obj``, or None."""
    try:
        return _recipes.get(obj)
    except TypeError:  # unhashable or not weakly referenceable: never recorded
        return None


def rebuild(function: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
    """Run a recipe (what an unpickled reference calls on the receiving side)."""
    return function(*args, **kwargs)
