"""A gate's outcome as the lines ``python -m tests.gates`` prints and pytest shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ._artifacts import SEED, Artifact
from ._baseline import Comparison
from ._spec import rerecord_command

__all__ = ["GateReport", "build_report"]


@dataclass
class GateReport:
    """One template's gate result.

    Attributes:
        template: the template gated.
        update: whether baselines were re-recorded.
        lines: per-task lines (``ok``, ``DRIFT``, ``MISSING``, ``FAIL``, ``STALE``, ``updated``),
            diff excerpts indented under their ``DRIFT`` line.
        tasks: how many tasks the template has.
        artifacts: how many artifacts were compared.
        drifted, missing, stale, updated: baseline file names in each state.
        failed: ``TASK: problem`` for every broken invariant (solver, no-op, tool path).
    """

    template: str
    update: bool
    tasks: int
    artifacts: int
    lines: list[str] = field(default_factory=list)
    drifted: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No drift, nothing missing or stale, every invariant held."""
        return not (self.drifted or self.missing or self.stale or self.failed)

    @property
    def final_line(self) -> str:
        """The closing line: a match, what was re-recorded, or what went wrong."""
        if self.ok and self.update:
            return (
                f"re-recorded {len(self.updated)} of {self.artifacts} {self.template} artifact(s) "
                f"for {self.tasks} tasks"
            )
        if self.ok:
            return f"all {self.tasks} {self.template} tasks match baseline"
        parts = [
            f"{len(self.drifted)} artifact(s) drifted from baseline",
            f"{len(self.missing)} missing",
            f"{len(self.stale)} stale",
            f"{len(self.failed)} invariant(s) broken",
        ]
        return f"{self.template}: " + ", ".join(parts)

    def failure_message(self) -> str:
        """Everything a failing test should show, ending with how to re-record."""
        return "\n".join(
            [
                f"{self.template} gate failed:",
                *self.lines,
                self.final_line,
                f"If the change is intended, re-record with `{rerecord_command(self.template)}` "
                f"and review the diff of tests/baselines/{self.template}/ before committing. "
                "Broken invariants (FAIL) are never fixed by re-recording.",
            ]
        )


def _task_lines(
    report: GateReport, names: Sequence[str], comparison: Comparison, task_id: str
) -> list[str]:
    lines: list[str] = []
    rerecord = rerecord_command(report.template)
    for name in names:
        state = comparison.status[name]
        kind = name.removeprefix(f"{task_id}.")
        if state == "drift":
            report.drifted.append(name)
            lines.append(f"DRIFT {task_id} {kind}")
            lines += [f"    {line}" for line in comparison.excerpts[name]]
        elif state == "missing":
            report.missing.append(name)
            lines.append(f"MISSING {task_id} {kind}: no baseline; re-record with {rerecord}")
        elif state in ("updated", "created"):
            report.updated.append(name)
            lines.append(f"{state} {task_id} {kind}")
    return lines


def build_report(
    template: str,
    *,
    update: bool,
    task_ids: Sequence[str],
    artifacts: Sequence[Artifact],
    comparison: Comparison,
    summaries: Mapping[str, str],
    failures: Mapping[str, Sequence[str]],
) -> GateReport:
    """Assemble the per-task lines, in task order, then the seed's, then stale baseline files."""
    report = GateReport(template, update, len(task_ids), len(artifacts))
    for task_id in [*task_ids, SEED]:
        names = [a.file_name for a in artifacts if a.task_id == task_id]
        lines = _task_lines(report, names, comparison, task_id)
        for problem in failures.get(task_id, ()):
            report.failed.append(f"{task_id}: {problem}")
            lines.append(f"FAIL {task_id} {problem}")
        if task_id == SEED and not names:
            continue  # a report over hand-made artifacts (the tests of this module) has no seed
        if not any(line.startswith(("DRIFT", "MISSING", "FAIL")) for line in lines):
            lines.insert(
                0, f"ok {task_id}  {summaries.get(task_id, 'the world create_state builds')}"
            )
        report.lines += lines
    for name in comparison.stale:
        if update:
            report.updated.append(name)
            report.lines.append(f"removed {name}: baseline for no current task")
        else:
            report.stale.append(name)
            report.lines.append(
                f"STALE {name}: baseline for no current task; "
                f"re-record with {rerecord_command(template)}"
            )
    return report
