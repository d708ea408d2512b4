"""``silo_async.world.amounts``: money, rounded one way everywhere.

* :func:`round_half_up` (the one rounding: ``1.005`` -> ``1.01``), :func:`to_money`,
  :func:`sum_money`, :func:`multiply_money` (exact products: ``3 x 1.005`` -> ``3.02``),
  :func:`percent`.
"""

from __future__ import annotations

from ._money import multiply_money as multiply_money
from ._money import percent as percent
from ._money import round_half_up as round_half_up
from ._money import sum_money as sum_money
from ._money import to_money as to_money

__all__ = [
    "multiply_money",
    "percent",
    "round_half_up",
    "sum_money",
    "to_money",
]
