"""The support world's types and the pure domain helpers that tools and verifiers share.

Two sides share one world. The carrier's side (customers, lines, SIMs, plans, bills, payments,
credits, cases, incidents) is what the agent reaches through its tools. The customer's side is
their phone (``devices``: airplane mode, mobile data, data roaming, the APN, the SIM in the tray,
where the phone is) and their banking app (payment requests waiting on a card): only the
customer's own tools touch it, and the agent learns about it only by asking.

Everything that follows from the facts is derived on read here, never stored: whether a phone
is in service and whether its data works (from the phone's settings, its SIM, the line, the
network's incidents and the roaming rules), bill balances and overdue flags, card expiry,
the plan in force, the end date of a roaming pass. Nothing here reads the wall clock: "today"
is the date part of ``state["clock"]["now"]``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Literal, NamedTuple, TypedDict

from silo_async.world import Records, WorldState
from silo_async.world.amounts import sum_money, to_money
from silo_async.world.clock import add_days, today
from silo_async.world.tools import sorted_by_id

# --- records ------------------------------------------------------------------------------------

StaffRole = Literal["agent", "senior_agent", "supervisor"]
LineStatus = Literal["active", "suspended", "cancelled"]
SuspensionReason = Literal["non_payment", "lost_or_stolen", "customer_request"]
SimStatus = Literal["inactive", "active", "deactivated"]
ChargeKind = Literal["plan", "addon", "usage", "fee"]
CreditReason = Literal["goodwill", "duplicate_charge", "billing_error", "outage"]
PaymentStatus = Literal["awaiting_approval", "settled", "cancelled"]
CaseStatus = Literal["open", "resolved", "escalated"]
Team = Literal["billing", "technical", "fraud", "retention"]
AddonKind = Literal["roaming_pass", "data_boost"]

#: The carrier's home country: abroad is anywhere else.
HOME_COUNTRY = "IE"


class Company(TypedDict):
    """The carrier."""

    name: str
    country: str
    currency: str


class Policies(TypedDict):
    """The carrier's rules stored as facts (the support policy text quotes them)."""

    apn: str
    goodwillMaxAmount: float
    goodwillWindowMonths: int
    pinAttempts: int
    billDueDays: int
    suspendAfterDaysOverdue: int
    earlyTerminationFee: float


class PolicySection(TypedDict):
    """One section of the support policy; ``{name}`` placeholders are filled from ``policies``."""

    id: str
    topic: str
    text: str


class Staff(TypedDict):
    """A member of the support team. Credits above ``creditLimit`` need someone more senior."""

    id: str
    name: str
    role: StaffRole
    creditLimit: float
    active: bool


class Address(TypedDict):
    """A postal address."""

    line1: str
    town: str
    county: str
    eircode: str


class Customer(TypedDict):
    """An account holder. ``securityPin`` is never shown by any tool: the customer tells it."""

    id: str
    firstName: str
    lastName: str
    email: str
    address: Address
    securityPin: str
    customerSince: str


class Plan(TypedDict):
    """A monthly plan; ``dataGb`` None is unlimited. Every plan roams like at home in zone 1."""

    id: str
    name: str
    monthlyFee: float
    dataGb: float | None
    active: bool


class Addon(TypedDict):
    """A catalogue add-on: a roaming pass for a zone, or a one-off data boost."""

    id: str
    name: str
    kind: AddonKind
    zone: int | None
    days: int | None
    dataGb: float | None
    price: float


class Country(TypedDict):
    """A country and its roaming zone (``id`` is the ISO code)."""

    id: str
    name: str
    zone: int


class PlanPeriod(TypedDict):
    """The line is on ``planId`` from ``start`` on; a future ``start`` is a scheduled change."""

    planId: str
    start: str


class Suspension(TypedDict):
    """Why and since when a line is suspended."""

    reason: SuspensionReason
    since: str


class Line(TypedDict):
    """A mobile line (a phone number).

    ``provisioningVersion`` bumps on every network-side re-provisioning (a SIM swap, a
    suspension lifted); a phone must restart to pick it up.
    """

    id: str
    customerId: str
    msisdn: str
    simId: str
    status: LineStatus
    suspension: Suspension | None
    roamingEnabled: bool
    provisioningVersion: int
    planHistory: list[PlanPeriod]
    dataUsedGb: float
    openedDate: str
    minimumTermEnd: str | None
    cancelledDate: str | None
    cancelReason: str | None


class Sim(TypedDict):
    """A SIM card. Inactive cards are in stock, in the post or in a shop until activated."""

    id: str
    iccid: str
    status: SimStatus
    lineId: str | None


class Device(TypedDict):
    """The customer's phone: their own state, changed only by their own tools."""

    id: str
    ownerId: str
    model: str
    simId: str | None
    airplaneMode: bool
    mobileData: bool
    dataRoaming: bool
    apn: str
    country: str
    area: str
    attachedVersion: int


class TextMessage(TypedDict):
    """A text message received on a phone."""

    id: str
    deviceId: str
    sender: str
    text: str
    receivedAt: str


class Hold(TypedDict):
    """A hold placed on a line by a team (only that team releases it)."""

    id: str
    lineId: str
    team: Team
    reason: str
    placedAt: str
    releasedAt: str | None


class Charge(TypedDict):
    """One line of a bill."""

    id: str
    lineId: str
    kind: ChargeKind
    description: str
    amount: float
    date: str


class Bill(TypedDict):
    """A monthly bill: the charges are facts, the balance and status are derived."""

    id: str
    customerId: str
    period: str
    issueDate: str
    dueDate: str
    charges: list[Charge]


class UnbilledCharge(TypedDict):
    """A charge waiting for the next bill (a roaming pass, an early termination fee)."""

    id: str
    customerId: str
    lineId: str
    description: str
    amount: float
    date: str


class Credit(TypedDict):
    """A credit (adjustment) on a bill, optionally against one of its charges."""

    id: str
    billId: str
    chargeId: str | None
    amount: float
    reason: CreditReason
    note: str
    createdAt: str
    createdBy: str
    caseId: str | None


class Card(TypedDict):
    """A payment card on file; expired once its ``expiry`` month is past."""

    id: str
    customerId: str
    brand: str
    last4: str
    expiry: str


class Payment(TypedDict):
    """A card payment; it settles only when the customer approves it in their banking app."""

    id: str
    billId: str
    cardId: str
    amount: float
    status: PaymentStatus
    requestedAt: str
    settledAt: str | None
    caseId: str | None


class LineAddon(TypedDict):
    """An add-on bought for a line, in force from ``startDate`` for the add-on's days."""

    id: str
    lineId: str
    addonId: str
    startDate: str
    price: float
    addedAt: str


class SimOrder(TypedDict):
    """A replacement SIM sent by post."""

    id: str
    lineId: str
    simId: str | None
    address: Address
    status: Literal["pending", "shipped", "delivered"]
    createdAt: str


class CaseNote(TypedDict):
    """A note on a case."""

    at: str
    by: str
    text: str


class Case(TypedDict):
    """One customer contact. Account changes need a case whose caller has been verified."""

    id: str
    customerId: str
    subject: str
    status: CaseStatus
    openedAt: str
    openedBy: str
    verifiedBy: Literal["pin", "sms_code"] | None
    failedAttempts: int
    team: Team | None
    notes: list[CaseNote]
    resolution: str | None
    closedAt: str | None


class VerificationCode(TypedDict):
    """A one-time code texted to a line (never shown to the agent: the customer reads it)."""

    id: str
    caseId: str
    lineId: str
    code: str
    sentAt: str
    usedAt: str | None


class Incident(TypedDict):
    """A network outage in an area; subscribed lines get a text when it is fixed."""

    id: str
    title: str
    area: str
    startedAt: str
    etaAt: str
    status: Literal["open", "resolved"]
    subscriberLineIds: list[str]


class State(WorldState):
    """The whole support world: the toolkit's clock, audit log and counters, and these."""

    company: Company
    policies: Policies
    policy: Records[PolicySection]
    staff: Records[Staff]
    plans: Records[Plan]
    addons: Records[Addon]
    countries: Records[Country]
    customers: Records[Customer]
    lines: Records[Line]
    sims: Records[Sim]
    devices: Records[Device]
    messages: Records[TextMessage]
    holds: Records[Hold]
    bills: Records[Bill]
    unbilledCharges: Records[UnbilledCharge]
    credits: Records[Credit]
    cards: Records[Card]
    payments: Records[Payment]
    lineAddons: Records[LineAddon]
    simOrders: Records[SimOrder]
    cases: Records[Case]
    verificationCodes: Records[VerificationCode]
    incidents: Records[Incident]


# --- people and numbers -------------------------------------------------------------------------


def full_name(customer: Customer) -> str:
    """First and last name."""
    return f"{customer['firstName']} {customer['lastName']}"


_NOT_DIGITS = re.compile(r"\D")


def normalise_number(text: str) -> str:
    """A phone number in E.164 (``087 210 4411``, ``+353 87 2104411`` -> ``+353872104411``)."""
    digits = _NOT_DIGITS.sub("", text)
    if digits.startswith("00"):
        digits = digits[2:]
    elif digits.startswith("0"):
        digits = "353" + digits[1:]
    return "+" + digits


def normalise_iccid(text: str) -> str:
    """An ICCID as stored: its digits only (customers read it out in groups)."""
    return _NOT_DIGITS.sub("", text)


def lines_of(state: State, customer_id: str) -> list[Line]:
    """A customer's lines, sorted by id."""
    return [line for line in sorted_by_id(state["lines"]) if line["customerId"] == customer_id]


# --- plans, roaming, add-ons --------------------------------------------------------------------


def current_plan(state: State, line: Line) -> Plan:
    """The plan in force today: the last history entry that has started."""
    started = [p for p in line["planHistory"] if p["start"] <= today(state)]
    return state["plans"][(started or line["planHistory"])[-1]["planId"]]


def scheduled_plan(state: State, line: Line) -> PlanPeriod | None:
    """A plan change waiting for a future bill date, if any."""
    future = [p for p in line["planHistory"] if p["start"] > today(state)]
    return future[-1] if future else None


def next_bill_date(state: State) -> str:
    """The first day of next month: when bills are issued and plan changes take effect."""
    year, month = int(today(state)[:4]), int(today(state)[5:7])
    year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return f"{year:04d}-{month:02d}-01"


def addon_end(state: State, item: LineAddon) -> str:
    """The last day a bought add-on is in force (a pass of N days covers N calendar days)."""
    days = state["addons"][item["addonId"]]["days"] or 1
    return add_days(item["startDate"], days - 1)


def cheapest_cover(state: State, zone: int, days: int) -> float:
    """The least a run of roaming passes for ``zone`` can cost to cover ``days`` days."""
    passes = [
        (a["days"] or 1, a["price"])
        for a in state["addons"].values()
        if a["kind"] == "roaming_pass" and a["zone"] == zone
    ]
    best = [0.0] + [float("inf")] * days
    for covered in range(1, days + 1):
        for length, price in passes:
            best[covered] = min(best[covered], best[max(0, covered - length)] + price)
    return to_money(best[days])


def days_covered(state: State, items: Iterable[LineAddon]) -> set[str]:
    """Every date some of ``items`` is in force."""
    covered: set[str] = set()
    for item in items:
        day, last = item["startDate"], addon_end(state, item)
        while day <= last:
            covered.add(day)
            day = add_days(day, 1)
    return covered


def zone_of(state: State, country: str) -> int:
    """The roaming zone of a country code (0 at home)."""
    return state["countries"][country]["zone"]


def suspension_reason(line: Line) -> str | None:
    """Why a line is suspended (None when it is not)."""
    suspension = line["suspension"]
    return None if suspension is None else suspension["reason"]


def active_hold(state: State, line_id: str) -> Hold | None:
    """The hold in force on a line, if any."""
    for hold in sorted_by_id(state["holds"]):
        if hold["lineId"] == line_id and hold["releasedAt"] is None:
            return hold
    return None


# --- the phone on the network -------------------------------------------------------------------


class Service(NamedTuple):
    """What the network and the phone make of each other right now.

    Attributes:
        registration: ``registered``, ``registered_roaming``, ``emergency_only``,
            ``not_registered`` or ``rejected``.
        registration_detail: why, in the network's words (what diagnostics show).
        data: ``active``, ``none`` (the phone asks for no data) or ``rejected``.
        data_detail: why, in the network's words.
        cause: the underlying cause, named for the phone's own screen and for verifiers:
            ``ok``, ``airplane_mode``, ``no_sim``, ``sim_not_provisioned``, ``outage``,
            ``suspended``, ``roaming_barred``, ``needs_restart``, ``mobile_data_off``,
            ``data_roaming_off``, ``wrong_apn``.
    """

    registration: str
    registration_detail: str
    data: str
    data_detail: str
    cause: str

    @property
    def in_service(self) -> bool:
        """Calls and texts work."""
        return self.registration in ("registered", "registered_roaming")

    @property
    def data_works(self) -> bool:
        """Mobile internet works."""
        return self.data == "active"


def line_of_sim(state: State, sim_id: str | None) -> Line | None:
    """The line an active SIM serves."""
    sim = state["sims"].get(sim_id or "")
    if sim is None or sim["status"] != "active" or sim["lineId"] is None:
        return None
    return state["lines"].get(sim["lineId"])


def device_with_sim(state: State, sim_id: str) -> Device | None:
    """The phone holding a SIM card, if the card is in one."""
    for device in sorted_by_id(state["devices"]):
        if device["simId"] == sim_id:
            return device
    return None


def outage_at(state: State, area: str) -> Incident | None:
    """The open incident covering an area."""
    for incident in sorted_by_id(state["incidents"]):
        if incident["status"] == "open" and incident["area"] == area:
            return incident
    return None


def _off(detail: str, cause: str, registration: str = "not_registered") -> Service:
    return Service(registration, detail, "none", "The phone has no network connection.", cause)


_NOT_ATTACHED = (
    "The phone is not attached to the network: it may be switched off, in airplane mode or "
    "out of coverage."
)


def service_of(state: State, device: Device) -> Service:
    """Whether a phone is in service and its data works, derived from every fact involved."""
    if device["airplaneMode"]:
        return _off(_NOT_ATTACHED, "airplane_mode")
    if device["simId"] is None:
        return _off("No SIM card in the phone.", "no_sim")
    line = line_of_sim(state, device["simId"])
    if line is None:
        return _off("The SIM card in the phone is not active on any line.", "sim_not_provisioned")
    if outage_at(state, device["area"]) is not None:
        return _off(_NOT_ATTACHED, "outage")
    if line["status"] == "cancelled":
        return _off("The line is cancelled.", "sim_not_provisioned", "rejected")
    if line["status"] == "suspended":
        reason = suspension_reason(line)
        return _off(f"Barred: the line is suspended ({reason}).", "suspended", "emergency_only")
    roaming = device["country"] != HOME_COUNTRY
    country = state["countries"][device["country"]]["name"]
    if roaming and not line["roamingEnabled"]:
        detail = f"Attach from a partner network in {country} rejected: roaming is barred."
        return _off(detail, "roaming_barred", "rejected")
    if device["attachedVersion"] < line["provisioningVersion"]:
        detail = "The phone holds an outdated network profile; it must be restarted."
        return _off(detail, "needs_restart", "emergency_only")
    registration = "registered_roaming" if roaming else "registered"
    where = f"Registered on a partner network in {country}." if roaming else "Registered."
    if not device["mobileData"]:
        detail = "The phone requests no data session (mobile data may be off on the phone)."
        return Service(registration, where, "none", detail, "mobile_data_off")
    if roaming and not device["dataRoaming"]:
        detail = "The phone requests no data session abroad (data roaming may be off on it)."
        return Service(registration, where, "none", detail, "data_roaming_off")
    if device["apn"] != state["policies"]["apn"]:
        detail = f"Data session rejected: unknown APN {device['apn']!r}."
        return Service(registration, where, "rejected", detail, "wrong_apn")
    return Service(registration, where, "active", "Data session active.", "ok")


def restarted_version(state: State, device: Device) -> int:
    """The profile version a phone holds after a restart (its line's, when it has one)."""
    line = line_of_sim(state, device["simId"])
    return device["attachedVersion"] if line is None else line["provisioningVersion"]


# --- bills, payments, credits -------------------------------------------------------------------


def bill_total(bill: Bill) -> float:
    """The sum of a bill's charges."""
    return sum_money(c["amount"] for c in bill["charges"])


def credits_on(state: State, bill_id: str) -> list[Credit]:
    """The credits on a bill, sorted by id."""
    return [c for c in sorted_by_id(state["credits"]) if c["billId"] == bill_id]


def payments_on(state: State, bill_id: str, status: str = "settled") -> list[Payment]:
    """A bill's payments in one status, sorted by id."""
    return [
        p
        for p in sorted_by_id(state["payments"])
        if p["billId"] == bill_id and p["status"] == status
    ]


def bill_balance(state: State, bill: Bill) -> float:
    """What is still owed: charges less credits less settled payments."""
    paid = sum_money(p["amount"] for p in payments_on(state, bill["id"]))
    credited = sum_money(c["amount"] for c in credits_on(state, bill["id"]))
    return to_money(bill_total(bill) - credited - paid)


def is_overdue(state: State, bill: Bill) -> bool:
    """Unpaid after its due date."""
    return bill_balance(state, bill) > 0 and bill["dueDate"] < today(state)


def overdue_bills(state: State, customer_id: str) -> list[Bill]:
    """A customer's overdue bills, oldest first."""
    bills = [b for b in bills_of(state, customer_id) if is_overdue(state, b)]
    return sorted(bills, key=lambda b: (b["period"], b["id"]))


def bills_of(state: State, customer_id: str) -> list[Bill]:
    """A customer's bills, sorted by id."""
    return [b for b in sorted_by_id(state["bills"]) if b["customerId"] == customer_id]


def charge_credited(state: State, bill_id: str, charge_id: str) -> float:
    """What has already been credited against one charge."""
    return sum_money(c["amount"] for c in credits_on(state, bill_id) if c["chargeId"] == charge_id)


def card_expired(state: State, card: Card) -> bool:
    """A card is valid through its expiry month."""
    return card["expiry"] < today(state)[:7]


# --- verification -------------------------------------------------------------------------------


def one_time_code(line_id: str, nth: int) -> str:
    """The ``nth`` code texted to a line: six digits, the same in every rollout."""
    digest = hashlib.sha256(f"{line_id}:{nth}".encode()).hexdigest()
    return f"{int(digest[:12], 16) % 1_000_000:06d}"


def is_verified(case: Case) -> bool:
    """Whether the caller on a case has proved who they are."""
    return case["verifiedBy"] is not None


def total(amounts: Iterable[float]) -> float:
    """A sum of money, rounded once."""
    return sum_money(amounts)
