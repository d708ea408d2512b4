"""The support desk's task family registry: exactly the families listed here exist.

Every family is a conversation: each instance has its own scripted customer (built from its
params in ``_common``), and its ``solve`` plays it as the gold agent does. Instances
``FAMILY#SEED`` are tasks of this environment
(``silo-async task sample --env <name> --family switch-plan``).
"""

from __future__ import annotations

import silo_async as silo

from . import bill_balance, goodwill_credit, lost_phone, roaming_trip, switch_plan

__all__ = ["families"]

families: list[silo.TaskFamily] = [
    bill_balance.family,
    lost_phone.family,
    switch_plan.family,
    roaming_trip.family,
    goodwill_credit.family,
]
