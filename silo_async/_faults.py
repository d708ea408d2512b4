"""Faults on purpose: a seeded plan of tool failures, drawn the same way on every run.

A :class:`Faults` plan is a list of rules (``[GLOB:]KIND[=Nms]@P``) and a seed. Each rollout
turns it into a :class:`FaultSchedule`; the rollout core asks it, for every call of a world tool,
which faults strike that call (:meth:`FaultSchedule.draw`). A draw is a pure function of (seed,
task id, run index, call index, tool name, rule): a keyed BLAKE2b hash, never the global
``random``, so the same plan strikes the same calls whatever the concurrency, the backend, the
executor or the driver. One hash of the call gives 8 bytes per rule of
the plan (8 rules per 64-byte digest): rule ``i`` strikes when the number in its 8 bytes is
below ``P`` × 2**64.

Kinds:

* ``latency`` — the call waits ``ms``, then runs (the wait counts against the deadline);
* ``unavailable`` — the call fails at once;
* ``rate_limited`` — the call fails at once, ``details.retryAfterMs`` saying when to retry;
* ``timeout`` — the call waits ``ms``, then fails.

An error fault answers instead of the tool: the tool does not run, the world is unchanged, so a
retry is the right move. The rules matching a call are drawn independently in the plan's order;
latencies add up and the first error drawn wins.
"""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import json
import math
import os
import re
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

import attrs

from ._errors import SiloError
from ._jsonutil import compact_json

__all__ = [
    "FAULT_KINDS",
    "FaultKind",
    "FaultRule",
    "FaultSchedule",
    "Faults",
    "Injection",
    "resolve_faults",
]

FaultKind = Literal["latency", "unavailable", "rate_limited", "timeout"]

#: The fault kinds, in the order docs/faults.md lists them.
FAULT_KINDS: tuple[str, ...] = get_args(FaultKind)

#: Kinds that must say how long (``=Nms``).
_TIMED = frozenset({"latency", "timeout"})
#: ``rate_limited``'s ``retryAfterMs`` when the rule gives none.
DEFAULT_RETRY_AFTER_MS = 1000
#: The longest wait a rule may ask for: a day (a typo of many zeros is a mistake, not a plan).
MAX_MS = 86_400_000

_ENTRY = re.compile(r"^(?:(?P<glob>[^:@=]+):)?(?P<kind>[a-z_]+)(?:=(?P<ms>[^@]*))?@(?P<p>[^@]+)$")
_GLOB = re.compile(r"^[A-Za-z0-9_.\-*?\[\]!]+$")
_MS = re.compile(r"^(?P<n>[0-9]+)ms$")
#: A probability as written in a plan: ASCII decimal digits only (``float`` would also take a
#: fullwidth "１", underscores, "inf").
_P = re.compile(r"^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")
_FILE_KEYS = frozenset({"kind", "p", "tools", "ms"})
_EXAMPLE = "latency=200ms@0.2,unavailable@0.05,search_*:timeout=3000ms@0.3"
#: A draw is 8 bytes: a number below 2**64.
_SPAN = 1 << 64
#: Rules drawn from one 64-byte digest.
_PER_DIGEST = 8
#: A 64-byte digest as its 8 draws.
_DRAWS = struct.Struct(">8Q")


def _invalid(message: str, where: str, details: dict[str, Any] | None = None) -> SiloError:
    return SiloError("faults_invalid", f"{where}: {message}", details or {})


def _check_p(p: object, where: str) -> float:
    if isinstance(p, bool) or not isinstance(p, int | float) or not math.isfinite(p):
        raise _invalid(f"the probability must be a number from 0 to 1, got {p!r}.", where)
    if not 0 <= p <= 1:
        raise _invalid(f"the probability must be from 0 to 1, got {p!r}.", where)
    return float(p)


def _check_ms(kind: str, ms: object, where: str) -> int | None:
    if ms is None:
        if kind in _TIMED:
            raise _invalid(f"{kind} needs a duration, e.g. {kind}=200ms@0.1.", where)
        return DEFAULT_RETRY_AFTER_MS if kind == "rate_limited" else None
    if kind == "unavailable":
        raise _invalid("unavailable takes no duration (unavailable@P).", where)
    if isinstance(ms, bool) or not isinstance(ms, int) or not 0 <= ms <= MAX_MS:
        raise _invalid(f"the duration must be whole milliseconds from 0 to {MAX_MS}.", where)
    return ms


def _check_glob(glob: object, where: str) -> str:
    if not isinstance(glob, str) or not _GLOB.match(glob):
        raise _invalid(
            f"{glob!r} is not a tool name or glob (letters, digits, _ . - and * ? [ ]).", where
        )
    return glob


@attrs.frozen
class FaultRule:
    """One rule of a plan: which calls it may strike, how, and how often.

    Attributes:
        kind: ``latency``, ``unavailable``, ``rate_limited`` or ``timeout``.
        p: the chance it strikes a matching call, from 0 to 1.
        tools: tool-name globs it applies to (empty: every tool).
        ms: the wait (``latency``, ``timeout``) or the ``retryAfterMs`` (``rate_limited``);
            ``None`` for ``unavailable``.
    """

    kind: FaultKind
    p: float
    tools: tuple[str, ...] = ()
    ms: int | None = None
    # The 8-byte draws below this strike: P of them.
    cutoff: int = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "cutoff", min(_SPAN, int(self.p * _SPAN)))

    def matches(self, tool: str) -> bool:
        """True when the rule applies to calls of ``tool``."""
        return not self.tools or any(fnmatch.fnmatchcase(tool, g) for g in self.tools)

    def to_dict(self) -> dict[str, Any]:
        """The rule as the JSON-file form writes it: ``{"kind", "p", "tools", "ms"}``."""
        return {"kind": self.kind, "p": self.p, "tools": list(self.tools), "ms": self.ms}

    def spec(self) -> str:
        """The rule in the inline grammar (one entry per glob joins with commas)."""
        timed = f"={self.ms}ms" if self.ms is not None else ""
        entry = f"{self.kind}{timed}@{self.p:g}"
        return ",".join(f"{g}:{entry}" for g in self.tools) if self.tools else entry


def _rule(kind: object, p: object, tools: Sequence[object], ms: object, where: str) -> FaultRule:
    if kind not in FAULT_KINDS:
        close = difflib.get_close_matches(str(kind), FAULT_KINDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        kinds = ", ".join(FAULT_KINDS)
        raise _invalid(f"unknown kind {kind!r}{hint}; the kinds are {kinds}.", where)
    globs = tuple(_check_glob(g, where) for g in tools)
    return FaultRule(kind, _check_p(p, where), globs, _check_ms(str(kind), ms, where))  # type: ignore[arg-type]


def _inline_entry(entry: str, where: str) -> FaultRule:
    found = _ENTRY.match(entry)
    if found is None:
        raise _invalid(f"write [GLOB:]KIND[=Nms]@P, e.g. {_EXAMPLE}.", where)
    p_text, ms_text = found["p"], found["ms"]
    p: object = float(p_text) if _P.match(p_text) else p_text
    ms: int | str | None = None
    if ms_text is not None:
        parsed = _MS.match(ms_text)
        if parsed is None:
            raise _invalid(
                f"the duration {ms_text!r} must be whole milliseconds, e.g. 200ms.", where
            )
        ms = int(parsed["n"])
    glob = found["glob"]
    return _rule(found["kind"], p, [glob] if glob is not None else [], ms, where)


def _check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"the fault seed must be an integer >= 0, got {seed!r}.")
    return seed


@attrs.frozen
class Faults:
    """A seeded fault plan: ``silo.run(..., faults=silo.Faults.parse(SPEC, seed=0))``.

    Build one with :meth:`parse` (the inline grammar, or a JSON file) or :meth:`from_dict`.
    The same plan and seed strike the same calls of the same rollouts, everywhere.

    Attributes:
        rules: the rules, in the plan's order.
        seed: the fault seed.
    """

    rules: tuple[FaultRule, ...]
    seed: int = 0
    # The rules matching each tool, in plan order, found once per tool name.
    _matching: dict[str, tuple[tuple[int, FaultRule], ...]] = attrs.field(
        init=False, factory=dict, eq=False, repr=False
    )
    # What every rollout's run.json records, built once for the plan's rollouts.
    _config: dict[str, Any] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        _check_seed(self.seed)
        config = {"seed": self.seed, "faults": [rule.to_dict() for rule in self.rules]}
        object.__setattr__(self, "_config", config)

    @classmethod
    def parse(cls, spec: str | os.PathLike[str], seed: int = 0) -> Faults:
        """Read a plan: inline ``[GLOB:]KIND[=Nms]@P`` entries, comma-separated, or a file.

        When ``spec`` names an existing file (relative to the current directory), it is read
        as JSON: ``{"faults": [{"kind", "p", "tools": [GLOB...], "ms"}]}``.

        Example:
            ``Faults.parse("latency=200ms@0.2,unavailable@0.05,search_*:timeout=3000ms@0.3")``

        Raises:
            SiloError: ``faults_invalid``, naming the entry that cannot be read; also for a
                plan with no rule (inline or in a file), a file that names a key twice in one
                object or nests too deeply, a probability not written in ASCII decimals.
            ValueError: a seed that is not an integer >= 0.
        """
        _check_seed(seed)
        text = os.fspath(spec)
        if not isinstance(text, str):
            raise _invalid("a fault plan is a string or a path.", "--faults")
        path = Path(text)
        if text.strip() and path.is_file():
            source = f'fault file "{text}"'
            plan = cls.from_dict(_read_file(path), seed=seed, source=source)
            if not plan.rules:  # refused, as an empty inline plan is
                example = '{"faults": [{"kind": "unavailable", "p": 0.05}]}'
                raise _invalid(f"the plan has no rule; write e.g. {example}.", source)
            return plan
        entries = text.split(",")
        if not text.strip():
            raise _invalid(f"the plan is empty; write e.g. {_EXAMPLE}.", "--faults")
        rules = []
        for number, entry in enumerate(entries, start=1):
            where = f'fault entry {number} "{entry.strip()}"'
            if not entry.strip():
                raise _invalid("the entry is empty (a comma too many?).", where)
            rules.append(_inline_entry(entry.strip(), where))
        return cls(tuple(rules), seed)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], seed: int = 0, *, source: str = "fault plan"
    ) -> Faults:
        """A plan from its JSON form ``{"faults": [{"kind", "p", "tools", "ms"}]}``.

        Raises:
            SiloError: ``faults_invalid``, naming the rule that cannot be read.
        """
        if not isinstance(data, Mapping) or set(data) != {"faults"}:
            raise _invalid('write {"faults": [{"kind", "p", "tools", "ms"}, ...]}.', source)
        items = data["faults"]
        if not isinstance(items, list):
            raise _invalid('"faults" must be a list of rules.', source)
        rules = []
        for number, item in enumerate(items, start=1):
            where = f"{source}, rule {number}"
            if not isinstance(item, Mapping):
                raise _invalid("a rule is an object {kind, p, tools, ms}.", where)
            unknown = sorted(set(item) - _FILE_KEYS)
            if unknown:
                raise _invalid(f"unknown keys {unknown}; a rule has kind, p, tools, ms.", where)
            if "kind" not in item or "p" not in item:
                raise _invalid("a rule needs at least kind and p.", where)
            tools = item.get("tools") or []
            if not isinstance(tools, list):
                raise _invalid('"tools" must be a list of tool-name globs.', where)
            rules.append(_rule(item["kind"], item["p"], tools, item.get("ms"), where))
        return cls(tuple(rules), _check_seed(seed))

    def to_dict(self) -> dict[str, Any]:
        """The plan in its JSON-file form (the seed is not part of it)."""
        return {"faults": [rule.to_dict() for rule in self.rules]}

    def config(self) -> dict[str, Any]:
        """What ``run.json`` records: the plan and its seed, enough to draw the same faults.

        One dict per plan, shared by its rollouts' results: read it, do not change it.
        """
        return self._config

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Faults:
        """The plan :meth:`config` recorded.

        Raises:
            SiloError: ``faults_invalid`` when it cannot be read.
        """
        data = dict(config)
        seed = data.pop("seed", 0)
        try:
            return cls.from_dict(data, _check_seed(seed), source="recorded fault plan")
        except ValueError as exc:
            raise _invalid(str(exc), "recorded fault plan") from None

    @property
    def spec(self) -> str:
        """The plan in the inline grammar (what ``--faults`` would take)."""
        return ",".join(rule.spec() for rule in self.rules)

    def matching(self, tool: str) -> tuple[tuple[int, FaultRule], ...]:
        """``(position, rule)`` of every rule that applies to ``tool``, in plan order."""
        found = self._matching.get(tool)
        if found is None:
            found = tuple((i, r) for i, r in enumerate(self.rules) if r.matches(tool))
            self._matching[tool] = found
        return found

    def schedule(self, task_id: str, run_index: int) -> FaultSchedule | None:
        """The schedule of one rollout (``None`` when the plan has no rule)."""
        return FaultSchedule(self, task_id, run_index) if self.rules else None


class _DuplicateKeyError(ValueError):
    """A JSON object that names one key twice (``json`` would keep the last silently)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _one_of_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKeyError(key)
        found[key] = value
    return found


def _read_file(path: Path) -> Any:
    where = f'fault file "{path}"'
    try:
        return json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_one_of_each)
    except (OSError, UnicodeDecodeError) as exc:
        raise _invalid(f"it cannot be read ({exc}).", where) from None
    except _DuplicateKeyError as exc:
        raise _invalid(
            f"the key {exc.key!r} appears twice in one object (JSON would keep only the last); "
            "write it once.",
            where,
        ) from None
    except RecursionError:
        raise _invalid("it nests too deeply to be a fault plan.", where) from None
    except json.JSONDecodeError as exc:
        raise _invalid(f"it is not JSON ({exc}).", where) from None


def resolve_faults(faults: Faults | str | None, seed: int = 0) -> Faults | None:
    """``faults=`` as a public function takes it: a :class:`Faults`, a SPEC string, or None.

    Raises:
        SiloError: ``faults_invalid`` for a SPEC that cannot be read.
        TypeError: anything else.
    """
    if faults is None or isinstance(faults, Faults):
        return faults
    if isinstance(faults, str):
        return Faults.parse(faults, seed=seed)
    raise TypeError(f"faults must be a silo.Faults or a SPEC string, got {type(faults).__name__}.")


@attrs.frozen
class Injection:
    """What the faults drawn for one call do to it.

    Attributes:
        events: ``(kind, ms)`` of every fault injected, in plan order (one ``fault_injected``
            event each).
        wait_ms: milliseconds the call waits before it runs or fails (latencies, a timeout).
        error: the error output that answers instead of the tool (``None``: the tool runs).
    """

    events: tuple[tuple[str, int | None], ...]
    wait_ms: int
    error: dict[str, Any] | None


def _error_output(kind: str, ms: int | None, tool: str) -> dict[str, Any]:
    if kind == "rate_limited":
        return {
            "code": "rate_limited",
            "message": f'Too many requests to "{tool}": retry after {ms} ms.',
            "details": {"retryAfterMs": ms},
        }
    if kind == "timeout":
        return {
            "code": "timeout",
            "message": f'The call to "{tool}" timed out after {ms} ms; nothing was done.',
            "details": {"timeoutMs": ms},
        }
    return {
        "code": "unavailable",
        "message": f'"{tool}" is temporarily unavailable; nothing was done. Try again.',
    }


class FaultSchedule:
    """One rollout's faults: which calls they strike, drawn from the plan on demand."""

    __slots__ = ("_faults", "_hasher")

    def __init__(self, faults: Faults, task_id: str, run_index: int) -> None:
        self._faults = faults
        # The rollout's key: every draw of this rollout is a hash keyed by it (the keyed
        # hasher is made once and copied per draw, cheaper than keying each time).
        identity = compact_json([faults.seed, task_id, run_index]).encode()
        key = hashlib.blake2b(identity, digest_size=32).digest()
        self._hasher = hashlib.blake2b(key=key, digest_size=64)

    def _draws(self, call_id: int, tool: str, block: int) -> tuple[int, ...]:
        """The 8 draws of rules ``8 * block`` to ``8 * block + 7`` for this call."""
        hasher = self._hasher.copy()
        hasher.update(f"{call_id}:{block}:{tool}".encode())
        return _DRAWS.unpack(hasher.digest())

    def value(self, call_id: int, tool: str, position: int) -> int:
        """The draw (below 2**64) of rule ``position`` for call ``call_id`` of ``tool``."""
        block, offset = divmod(position, _PER_DIGEST)
        return self._draws(call_id, tool, block)[offset]

    def draw(self, call_id: int, tool: str) -> Injection | None:
        """The faults striking call ``call_id`` (1-based) of ``tool``; ``None`` when none does."""
        rules = self._faults.matching(tool)
        if not rules:
            return None
        events: list[tuple[str, int | None]] = []
        wait = 0
        error: dict[str, Any] | None = None
        draws: tuple[int, ...] = ()
        drawn_block = -1
        for position, rule in rules:
            if error is not None and rule.kind != "latency":
                continue  # the first error drawn wins: later ones are not even drawn
            block, offset = divmod(position, _PER_DIGEST)
            if block != drawn_block:  # one hash per 8 rules of the plan (usually one)
                draws, drawn_block = self._draws(call_id, tool, block), block
            if draws[offset] >= rule.cutoff:
                continue
            events.append((rule.kind, rule.ms))
            if rule.kind == "latency":
                wait += rule.ms or 0
                continue
            if rule.kind == "timeout":
                wait += rule.ms or 0
            error = _error_output(rule.kind, rule.ms, tool)
        if not events:
            return None
        return Injection(tuple(events), wait, error)
