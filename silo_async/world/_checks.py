"""Checks verifiers keep writing: "every one of these happened", with the count as detail.

A state-changing task is often graded as "each record that should have moved, moved": the check
passes when there was something to do and all of it was done, and its detail says how far the
agent got (``2 of 3 moved (WI-004, WI-007, WI-012)``), so a failed rollout shows what is missing.
"""

from __future__ import annotations

from collections.abc import Collection

from .._verify import Check, check, optional

__all__ = ["every"]


def every(
    label: str,
    done: Collection[object],
    expected: Collection[object],
    what: str = "",
    *,
    listed: bool = False,
    allow_empty: bool = False,
    required: bool = True,
) -> Check:
    """A check that all of ``expected`` is done: ``len(done) == len(expected)``.

    ``done`` holds the members of ``expected`` found done (a subset of it), so equal sizes mean
    none is missing. With nothing expected the check fails (the seed promised work to do) unless
    ``allow_empty``.

    Args:
        label: what the check proves.
        done: the expected things that were done.
        expected: everything that should have been done.
        what: a word or two for the detail, e.g. ``moved``: ``2 of 3 moved``.
        listed: append the expected ids to the detail: ``2 of 3 moved (A, B, C)``.
        allow_empty: pass when nothing was expected.
        required: a required check (default) or an optional one.
    """
    passed = (allow_empty or len(expected) > 0) and len(done) == len(expected)
    detail = f"{len(done)} of {len(expected)}" + (f" {what}" if what else "")
    if listed:
        detail += f" ({', '.join(str(item) for item in expected)})"
    return (check if required else optional)(label, passed, detail)
