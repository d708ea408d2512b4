"""An eval's rollouts across Ray workers: :class:`RayExecutor`.

Kept apart from the rest of :mod:`silo_async.eval`: nothing here is imported (and Ray never is)
unless an eval runs on Ray. ``_executor`` is the executor the eval sees, ``_session`` starts or
joins Ray, ``_shipping`` sends environments and agents to the workers, ``_worker`` is the actor
that runs rollouts in its own event loop and ``_dispatch`` feeds the workers from the plan.
"""

from ._executor import RayExecutor

__all__ = ["RayExecutor"]
