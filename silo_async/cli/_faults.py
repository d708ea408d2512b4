"""``--faults SPEC [--fault-seed N]``: faults injected on purpose (``run``, ``eval``, ``serve``).

The options only read the plan (:meth:`silo_async.Faults.parse`); a malformed one is the one
line ``error: faults_invalid: ...`` naming the bad entry, before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from .._faults import Faults
from ._types import WholeNumber

__all__ = ["fault_options", "read_faults"]

F = TypeVar("F", bound=Callable[..., Any])


def fault_options(fn: F) -> F:
    """``--faults SPEC`` and ``--fault-seed N``."""
    fn = click.option(
        "--fault-seed",
        type=WholeNumber(min=0),
        default=None,
        metavar="N",
        help="The seed the faults are drawn with (default 0): the same seed, the same faults.",
    )(fn)
    return click.option(
        "--faults",
        "faults_spec",
        default=None,
        metavar="SPEC",
        help="Inject tool faults: [GLOB:]KIND[=Nms]@P entries separated by commas "
        "(latency=200ms@0.2,unavailable@0.05,rate_limited=2000ms@0.05,search_*:timeout=3000ms@0.3"
        "), or a JSON file of them. Kinds: latency, unavailable, rate_limited, timeout.",
    )(fn)


def read_faults(spec: str | None, seed: int | None) -> Faults | None:
    """The plan ``--faults``/``--fault-seed`` give, or None without ``--faults``.

    Raises:
        click.UsageError: ``--fault-seed`` without ``--faults``.
        SiloError: ``faults_invalid`` for a SPEC that cannot be read.
    """
    if spec is None:
        if seed is not None:
            raise click.UsageError("--fault-seed needs --faults SPEC (the faults to draw).")
        return None
    return Faults.parse(spec, seed=seed or 0)
