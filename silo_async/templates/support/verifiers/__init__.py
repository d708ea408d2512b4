"""The support verifier registry: exactly the verifiers listed here exist."""

from __future__ import annotations

import silo_async as silo

from . import (
    duplicate_boost,
    duplicate_line,
    fraud_hold,
    lost_phone,
    new_sim,
    no_service,
    old_plan_price,
    outage,
    partner_usage,
    plan_upgrade,
    roaming_spain,
    second_goodwill,
    stolen_phone,
    trip_pass,
    unpaid_bill,
    wrong_apn,
)

__all__ = ["verifiers"]

verifiers: list[silo.Verifier] = [
    no_service.verify,
    wrong_apn.verify,
    roaming_spain.verify,
    trip_pass.verify,
    unpaid_bill.verify,
    duplicate_boost.verify,
    stolen_phone.verify,
    second_goodwill.verify,
    partner_usage.verify,
    fraud_hold.verify,
    plan_upgrade.verify,
    old_plan_price.verify,
    duplicate_line.verify,
    new_sim.verify,
    outage.verify,
    lost_phone.verify,
]
