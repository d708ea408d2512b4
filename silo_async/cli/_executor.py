"""``eval``'s executor flags: ``--executor``, ``--ray-address``, ``--workers``, and so on.

``--executor local|ray``, ``--ray-address auto|HOST:PORT``, ``--workers N``,
``--worker-concurrency C``. The Ray executor is built here, but nothing imports Ray until the
eval starts: a missing Ray is ``error: executor_unavailable: ...`` naming the ``pip install``
line, an address or size it cannot use ``error: executor_invalid: ...``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..eval import RayExecutor
from ..eval._executor import Executor
from ._types import WholeNumber

__all__ = ["build_executor", "executor_options"]

F = TypeVar("F", bound=Callable[..., Any])


def executor_options(fn: F) -> F:
    """The four executor flags (see the module docstring)."""
    fn = click.option(
        "--worker-concurrency",
        type=WholeNumber(min=1),
        default=None,
        metavar="C",
        help="Rollouts at once per Ray worker (default: --concurrency shared out).",
    )(fn)
    fn = click.option(
        "--workers",
        type=WholeNumber(min=1),
        default=None,
        metavar="N",
        help="Ray workers, one CPU each (default: every CPU of the Ray cluster).",
    )(fn)
    fn = click.option(
        "--ray-address",
        default=None,
        metavar="auto|HOST:PORT",
        help="Join this Ray cluster (auto: the one RAY_ADDRESS names) instead of starting a "
        "local Ray.",
    )(fn)
    return click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="Where rollouts run: this process's event loop, or a pool of Ray workers (all "
        "cores, or a cluster; needs pip install 'silo_async[ray]').",
    )(fn)


def build_executor(
    executor: str, ray_address: str | None, workers: int | None, worker_concurrency: int | None
) -> Executor | None:
    """The executor the flags ask for (None: the local default).

    Raises:
        click.UsageError: a Ray flag without ``--executor ray``.
        SiloError: ``executor_invalid`` for an address that is not ``auto`` or ``HOST:PORT``.
    """
    if executor == "local":
        given = [
            flag
            for flag, value in (
                ("--ray-address", ray_address),
                ("--workers", workers),
                ("--worker-concurrency", worker_concurrency),
            )
            if value is not None
        ]
        if given:
            raise click.UsageError(f"{', '.join(given)} apply to --executor ray; add it.")
        return None
    return RayExecutor(address=ray_address, workers=workers, concurrency=worker_concurrency)
