"""An audit's verdicts and what it writes: ``audit.json``, ``audit.md`` and the terminal table.

Verdicts per task, in precedence order: ``unsolved`` (the solver fails), ``gameable`` (a probe
passes), ``loose`` (a ``drop`` or ``alter`` mutant passes with a world other than the
solver's: a change the verifier never checks), else ``sound``. A passing ``repeat`` mutant is
reported, never a verdict. ``gap`` is the solver's reward minus the best probe's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .._jsonutil import compact_json

__all__ = ["VERDICTS", "AuditReport", "counts_of", "markdown", "table", "verdict_of", "why"]

#: The verdicts, in precedence order.
VERDICTS: tuple[str, ...] = ("unsolved", "gameable", "loose", "sound")


@attrs.frozen
class AuditReport:
    """What :func:`silo_async.audit` found: one entry per task, as ``audit.json`` holds them.

    Attributes:
        audit_id: the audit's id (its directory's name unless ``out`` was given).
        environment: the environment's name.
        tasks: the ``audit.json`` entries, one per task in the order audited: ``{"task",
            "verdict", "solver", "probes", "mutants", "gap"}``.
        counts: ``{"sound", "gameable", "loose", "unsolved"}``.
        path: the audit directory (``audit.json``, ``audit.md``, ``runs/``).
    """

    audit_id: str
    environment: str
    tasks: list[dict[str, Any]]
    counts: dict[str, int]
    path: Path

    def verdict(self, task_id: str) -> str:
        """The verdict of one task.

        Raises:
            KeyError: the task was not audited.
        """
        for entry in self.tasks:
            if entry["task"] == task_id:
                return str(entry["verdict"])
        raise KeyError(task_id)

    def failed(self, fail_on: str) -> bool:
        """Whether ``--fail-on`` (``gameable``, ``loose`` or ``never``) calls this a failure."""
        if fail_on == "never":
            return False
        bad = {"unsolved", "gameable"} | ({"loose"} if fail_on == "loose" else set())
        return any(entry["verdict"] in bad for entry in self.tasks)

    def to_dict(self) -> dict[str, Any]:
        """``audit.json``: ``{"auditId", "environment", "tasks", "counts"}``."""
        return {
            "auditId": self.audit_id,
            "environment": self.environment,
            "tasks": self.tasks,
            "counts": dict(self.counts),
        }


def _loose(mutant: Mapping[str, Any]) -> bool:
    return bool(mutant["kind"] != "repeat" and mutant["passed"] and not mutant.get("sameWorld"))


def verdict_of(entry: Mapping[str, Any]) -> str:
    """The verdict of one task's entry (its solver, probes and mutants)."""
    solver = entry.get("solver")
    if solver is not None and not solver["passed"]:
        return "unsolved"
    if any(p["passed"] for p in entry["probes"].values()):
        return "gameable"
    if any(_loose(m) for m in entry["mutants"]):
        return "loose"
    return "sound"


def counts_of(entries: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """``{"sound", "gameable", "loose", "unsolved"}``."""
    counts = dict.fromkeys(("sound", "gameable", "loose", "unsolved"), 0)
    for entry in entries:
        counts[str(entry["verdict"])] += 1
    return counts


def _best(entry: Mapping[str, Any]) -> tuple[str, float] | None:
    probes = entry["probes"]
    if not probes:
        return None
    name = max(probes, key=lambda n: (probes[n]["reward"], -list(probes).index(n)))
    return name, float(probes[name]["reward"])


def _call_words(mutant: Mapping[str, Any]) -> str:
    call = mutant["call"]
    words = f"{mutant['kind']} of call {call['index']} ({call['tool']})"
    if mutant["kind"] == "alter":
        words += f" {call['argument']}={compact_json(call['value'])}"
    return words


def why(entry: Mapping[str, Any]) -> str:
    """One phrase saying what decided the verdict (empty for ``sound``)."""
    verdict = entry["verdict"]
    if verdict == "unsolved":
        return f"the solver fails (reward {entry['solver']['reward']:.2f})"
    if verdict == "gameable":
        passed = [n for n, p in entry["probes"].items() if p["passed"]]
        return f"{', '.join(passed)} {'passes' if len(passed) == 1 else 'pass'}"
    if verdict == "loose":
        loose = [m for m in entry["mutants"] if _loose(m)]
        more = f" (+{len(loose) - 1} more)" if len(loose) > 1 else ""
        return f"{_call_words(loose[0])} passes{more}"
    # A repeat that changed nothing more (a refused second call) says nothing; one that wrote
    # twice unnoticed is worth a look, though no verdict (a second note may be harmless).
    doubled = [m for m in entry["mutants"] if m["kind"] == "repeat" and _loose({**m, "kind": ""})]
    return f"{_call_words(doubled[0])} passes (not a verdict)" if doubled else ""


def _reward(value: Any) -> str:
    return "-" if value is None else f"{float(value):.2f}"


def table(report: AuditReport) -> str:
    """The terminal table: task, verdict, solver, best probe, gap and why; then the counts."""
    rows = [("TASK", "VERDICT", "SOLVER", "BEST PROBE", "GAP", "WHY")]
    for entry in report.tasks:
        best = _best(entry)
        solver = entry["solver"]
        rows.append(
            (
                str(entry["task"]),
                str(entry["verdict"]),
                _reward(solver["reward"] if solver else None),
                f"{best[0]} {best[1]:.2f}" if best else "-",
                _reward(entry["gap"]),
                why(entry),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[5]
        for row in rows
    ]
    lines = [line.rstrip() for line in lines]
    lines.append(summary_line(report))
    return "\n".join(lines)


def summary_line(report: AuditReport) -> str:
    """``11 tasks: 9 sound, 1 gameable, 1 loose, 0 unsolved``."""
    c = report.counts
    total = len(report.tasks)
    return (
        f"{total} task{'s' if total != 1 else ''}: {c['sound']} sound, {c['gameable']} gameable, "
        f"{c['loose']} loose, {c['unsolved']} unsolved"
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: AuditReport, probes: Sequence[str]) -> str:
    """``audit.md``: the verdicts as a table, then each task's probes and mutants."""
    out = [
        f"# Audit of {report.environment}",
        "",
        f"`{report.audit_id}`: {summary_line(report)}.",
        "",
    ]
    out.append("| Task | Verdict | Solver | " + " | ".join(probes) + " | Gap | Why |")
    out.append("|---" * (len(probes) + 5) + "|")
    for entry in report.tasks:
        solver = entry["solver"]
        cells = [
            str(entry["task"]),
            f"**{entry['verdict']}**",
            _reward(solver["reward"] if solver else None),
            *(
                _reward(entry["probes"][p]["reward"])
                + (" ✗" if entry["probes"][p]["passed"] else "")
                for p in probes
            ),
            _reward(entry["gap"]),
            _cell(why(entry)),
        ]
        out.append("| " + " | ".join(cells) + " |")
    for entry in report.tasks:
        out.extend(_task_section(entry, probes))
    return "\n".join(out) + "\n"


def _brief_line(name: str, played: Mapping[str, Any]) -> str:
    passed = str(played["passed"]).lower()
    return (
        f"- {name}: passed {passed}, reward {_reward(played['reward'])} (`runs/{played['runId']}/`)"
    )


def _mutant_row(mutant: Mapping[str, Any]) -> str:
    call = mutant["call"]
    what = f"{call['index']} `{call['tool']}`"
    if mutant["kind"] == "alter":
        what += f" {call['argument']} → `{_cell(compact_json(call['value']))}`"
    passed = str(mutant["passed"]).lower() + (" (same world)" if mutant.get("sameWorld") else "")
    reward = _reward(mutant["reward"])
    return f"| {mutant['kind']} | {what} | {passed} | {reward} | `{mutant['runId']}` |"


def _task_section(entry: Mapping[str, Any], probes: Sequence[str]) -> list[str]:
    out = ["", f"## {entry['task']}: {entry['verdict']}", ""]
    if entry["solver"] is not None:
        out.append(_brief_line("solver", entry["solver"]))
    out.extend(_brief_line(f"probe {name}", entry["probes"][name]) for name in probes)
    if entry["mutants"]:
        out.extend(["", "| Mutant | Call | Passed | Reward | Run |", "|---|---|---|---|---|"])
        out.extend(_mutant_row(m) for m in entry["mutants"])
    return out
