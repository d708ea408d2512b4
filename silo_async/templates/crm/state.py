"""The CRM world's types and the pure domain helpers that tools and verifiers share.

Everything derived (win probability, weighted amount, days in stage, staleness, past-due,
attainment) is computed here on read from the stored facts, so a value can never go stale when
a tool changes the facts or the simulated clock moves. Nothing here reads the wall clock: "today"
is always the date part of ``state["clock"]["now"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal, TypedDict, TypeVar

from silo_async.world import Records, WorldState
from silo_async.world.amounts import round_half_up, sum_money, to_money
from silo_async.world.clock import days_between, parse_date, today
from silo_async.world.grade import fold
from silo_async.world.tools import sorted_by_id

T = TypeVar("T")

# --- records ------------------------------------------------------------------------------------

Role = Literal["director", "account_executive", "sdr", "sales_ops"]
OpportunityStatus = Literal["open", "won", "lost"]
Tier = Literal["enterprise", "mid_market", "smb"]
ActivityType = Literal["call", "email", "meeting", "task", "note"]
RelatedType = Literal["account", "contact", "lead", "opportunity"]

#: Roles that may own opportunities and accounts.
DEAL_OWNER_ROLES: tuple[str, ...] = ("director", "account_executive")
#: Lead statuses that still need work.
OPEN_LEAD_STATUSES: tuple[str, ...] = ("new", "working", "qualified")


class Policies(TypedDict):
    """Company rules stored as facts."""

    staleStageDays: int


class Company(TypedDict):
    """The selling company."""

    name: str
    product: str
    currency: str


class User(TypedDict):
    """A member of the sales organisation."""

    id: str
    firstName: str
    lastName: str
    email: str
    role: Role
    managerId: str | None
    annualQuota: float
    active: bool
    startDate: str
    endDate: str | None


class Stage(TypedDict):
    """A pipeline stage; win probability lives here, not on the deal."""

    id: str
    name: str
    order: int
    probability: int
    isClosed: bool
    outcome: Literal["won", "lost"] | None


class Account(TypedDict):
    """A customer or prospect organisation."""

    id: str
    name: str
    industry: str
    tier: Tier
    ownerId: str
    website: str | None
    city: str | None
    country: str | None
    createdDate: str


class Contact(TypedDict):
    """A person at an account. Merged duplicates are kept with ``status`` merged."""

    id: str
    accountId: str | None
    firstName: str
    lastName: str
    title: str | None
    email: str
    phone: str | None
    isPrimary: bool
    status: Literal["active", "merged"]
    mergedIntoId: str | None
    createdDate: str


class Lead(TypedDict):
    """A prospective buyer not yet in the customer records."""

    id: str
    firstName: str
    lastName: str
    company: str
    title: str | None
    email: str
    phone: str | None
    source: str
    status: Literal["new", "working", "qualified", "disqualified", "converted"]
    ownerId: str
    createdDate: str
    lastContactedDate: str | None
    disqualifyReason: str | None
    convertedDate: str | None
    convertedAccountId: str | None
    convertedContactId: str | None
    convertedOpportunityId: str | None


class StageEntry(TypedDict):
    """One move of a deal into a stage (the history is the fact; days in stage derive from it)."""

    stageId: str
    enteredDate: str


class Opportunity(TypedDict):
    """A deal in the pipeline."""

    id: str
    name: str
    accountId: str
    primaryContactId: str | None
    ownerId: str
    stageId: str
    amount: float
    expectedCloseDate: str
    createdDate: str
    stageHistory: list[StageEntry]
    status: OpportunityStatus
    closedDate: str | None
    lostReason: str | None
    sourceLeadId: str | None


class RelatedTo(TypedDict):
    """What an activity is about."""

    type: RelatedType
    id: str


#: The collection that holds each kind of record an activity can be about.
RELATED_COLLECTIONS: dict[RelatedType, str] = {
    "account": "accounts",
    "contact": "contacts",
    "lead": "leads",
    "opportunity": "opportunities",
}


class Activity(TypedDict):
    """A call, email, meeting, task or note. Open while ``completedDate`` is null."""

    id: str
    type: ActivityType
    subject: str
    ownerId: str
    relatedTo: RelatedTo
    createdDate: str
    dueDate: str | None
    completedDate: str | None
    notes: str


class State(WorldState):
    """The whole CRM world: the toolkit's clock, audit log and counters, and these collections."""

    company: Company
    policies: Policies
    users: Records[User]
    stages: Records[Stage]
    accounts: Records[Account]
    contacts: Records[Contact]
    leads: Records[Lead]
    opportunities: Records[Opportunity]
    activities: Records[Activity]


# --- names ------------------------------------------------------------------------------------


def full_name(person: User | Contact | Lead) -> str:
    """First and last name."""
    return f"{person['firstName']} {person['lastName']}"


# --- stages and opportunities ---------------------------------------------------------------------


def pipeline(state: State) -> list[Stage]:
    """All stages in pipeline order."""
    return sorted(state["stages"].values(), key=lambda s: (s["order"], s["id"]))


def open_stages(state: State) -> list[Stage]:
    """The stages a live deal can be in, in order."""
    return [s for s in pipeline(state) if not s["isClosed"]]


def outcome_stage(state: State, outcome: Literal["won", "lost"]) -> Stage:
    """The closed stage for ``outcome``, found by its properties rather than by id."""
    for stage in pipeline(state):
        if stage["isClosed"] and stage["outcome"] == outcome:
            return stage
    raise LookupError(f"The pipeline has no closed stage with outcome {outcome!r}.")


def is_open(opp: Opportunity) -> bool:
    """True while the deal is neither won nor lost."""
    return opp["status"] == "open"


def stage_entered_date(opp: Opportunity) -> str:
    """When the deal entered its current stage (the last history entry)."""
    return opp["stageHistory"][-1]["enteredDate"]


def probability_of(state: State, opp: Opportunity) -> int:
    """Win probability in percent: 100 when won, 0 when lost, else the stage's probability."""
    if opp["status"] == "won":
        return 100
    if opp["status"] == "lost":
        return 0
    return state["stages"][opp["stageId"]]["probability"]


def weighted_amount(state: State, opp: Opportunity) -> float:
    """Amount times win probability."""
    return to_money(opp["amount"] * probability_of(state, opp) / 100)


def days_in_stage(state: State, opp: Opportunity) -> int:
    """Days since the deal entered its current stage (until it closed, for closed deals)."""
    end = opp["closedDate"] or today(state)
    return days_between(stage_entered_date(opp), end)


def stale_threshold(state: State) -> int:
    """Company policy: an open deal is stale after this many days in one stage."""
    return state["policies"]["staleStageDays"]


def is_stale(state: State, opp: Opportunity, threshold: int | None = None) -> bool:
    """Open and *more than* ``threshold`` days in its current stage."""
    limit = stale_threshold(state) if threshold is None else threshold
    return is_open(opp) and days_in_stage(state, opp) > limit


def is_past_due(state: State, opp: Opportunity) -> bool:
    """Open and expected to close strictly before today."""
    return is_open(opp) and opp["expectedCloseDate"] < today(state)


def open_opportunities(state: State, owner_id: str | None = None) -> list[Opportunity]:
    """Open deals, optionally for one owner, sorted by id."""
    return [
        o
        for o in sorted_by_id(state["opportunities"])
        if is_open(o) and (owner_id is None or o["ownerId"] == owner_id)
    ]


def total_amount(opps: Iterable[Opportunity]) -> float:
    """Unweighted sum of amounts."""
    return sum_money(o["amount"] for o in opps)


def total_weighted(state: State, opps: Iterable[Opportunity]) -> float:
    """Sum of weighted amounts."""
    return sum_money(weighted_amount(state, o) for o in opps)


def stale_opportunities(state: State, threshold: int | None = None) -> list[Opportunity]:
    """Open deals past the stale threshold, longest in stage first (then by id)."""
    stale = [o for o in open_opportunities(state) if is_stale(state, o, threshold)]
    return sorted(stale, key=lambda o: (-days_in_stage(state, o), o["id"]))


def past_due_opportunities(state: State) -> list[Opportunity]:
    """Open deals whose expected close date has passed, sorted by id."""
    return [o for o in open_opportunities(state) if is_past_due(state, o)]


def next_open_stage(state: State, stage_id: str) -> Stage | None:
    """The open stage after ``stage_id``, or None at the last open stage."""
    stages = open_stages(state)
    ids = [s["id"] for s in stages]
    if stage_id not in ids:
        return None
    index = ids.index(stage_id)
    return stages[index + 1] if index + 1 < len(stages) else None


# --- people and performance -----------------------------------------------------------------------


def can_own_deals(user: User) -> bool:
    """Only directors and account executives carry accounts and deals."""
    return user["role"] in DEAL_OWNER_ROLES


def won_amount(state: State, user_id: str, year: int | None = None) -> float:
    """Closed-won amount for ``user_id``, optionally only deals closed in ``year``."""
    return sum_money(
        o["amount"]
        for o in state["opportunities"].values()
        if o["ownerId"] == user_id
        and o["status"] == "won"
        and (year is None or (o["closedDate"] or "")[:4] == str(year))
    )


def quota_attainment(state: State, user_id: str, year: int) -> float | None:
    """Closed-won in ``year`` as a percent of the annual quota (one decimal); None without quota."""
    quota = state["users"][user_id]["annualQuota"]
    if quota <= 0:
        return None
    return round_half_up(won_amount(state, user_id, year) / quota * 100, 1)


def current_year(state: State) -> int:
    """The simulated calendar year."""
    return parse_date(today(state)).year


# --- leads, contacts, activities ------------------------------------------------------------------


def lead_age_days(state: State, lead: Lead) -> int:
    """Days since the lead was created."""
    return days_between(lead["createdDate"], today(state))


def days_since_contact(state: State, lead: Lead) -> int | None:
    """Days since the lead was last contacted; None if never."""
    last = lead["lastContactedDate"]
    return None if last is None else days_between(last, today(state))


def is_activity_open(activity: Activity) -> bool:
    """Open until completed."""
    return activity["completedDate"] is None


def is_activity_overdue(state: State, activity: Activity) -> bool:
    """Open with a due date strictly before today."""
    due = activity["dueDate"]
    return is_activity_open(activity) and due is not None and due < today(state)


def normalise_email(email: str) -> str:
    """Emails compare case-insensitively and without surrounding spaces."""
    return email.strip().lower()


def duplicate_contact_groups(state: State) -> list[list[Contact]]:
    """Active contacts sharing an email address, each group oldest first."""
    groups: dict[str, list[Contact]] = {}
    for contact in sorted_by_id(state["contacts"]):
        if contact["status"] == "active":
            groups.setdefault(normalise_email(contact["email"]), []).append(contact)
    return [
        sorted(group, key=lambda c: (c["createdDate"], c["id"]))
        for group in groups.values()
        if len(group) > 1
    ]


def contact_references(state: State, contact_id: str) -> list[str]:
    """Ids of the records that point at ``contact_id`` (deals, activities, leads)."""
    refs = [o["id"] for o in state["opportunities"].values() if o["primaryContactId"] == contact_id]
    refs += [
        a["id"]
        for a in state["activities"].values()
        if a["relatedTo"]["type"] == "contact" and a["relatedTo"]["id"] == contact_id
    ]
    refs += [
        lead["id"] for lead in state["leads"].values() if lead["convertedContactId"] == contact_id
    ]
    return sorted(refs)


# --- lookups by property (verifiers find records by what they are, not by hard-coded id) --------


def user_named(state: State, name: str) -> User:
    """The user with this full name (case and accents aside)."""
    return _named(state["users"], name, full_name, "user")


def account_named(state: State, name: str) -> Account:
    """The account with this exact name (case and accents aside)."""
    return _named(state["accounts"], name, lambda a: a["name"], "account")


def lead_named(state: State, name: str) -> Lead:
    """The lead for this person (full name); the oldest one if several match."""
    return _named(state["leads"], name, full_name, "lead")


def opportunity_named(state: State, name: str) -> Opportunity:
    """The deal with this exact name (case and accents aside)."""
    return _named(state["opportunities"], name, lambda o: o["name"], "opportunity")


def _named(records: dict[str, T], name: str, name_of: Callable[[T], str], kind: str) -> T:
    for key in sorted(records):
        if fold(name_of(records[key])) == fold(name):
            return records[key]
    raise LookupError(f"No {kind} named {name!r} in the seed.")
