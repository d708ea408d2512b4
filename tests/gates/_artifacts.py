"""Turn a gate's rollouts into comparable artifacts and check the gate's invariants.

Artifacts are the bytes the runtime wrote (``result.json``, ``state-diff.json``), read back
from each run directory, plus the tool-path rollout's tool events with their timings removed,
plus one digest per collection of the seed world: a changed figure no task reads still drifts,
naming the collection.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import silo_async as silo

from ._rollouts import GateRollouts

__all__ = ["SEED", "Artifact", "collect_artifacts", "invariant_failures", "task_summary"]

#: The artifact group of the seed world's digest (it belongs to no task).
SEED = "seed"

#: Volatile keys dropped from tool events before comparing them.
_VOLATILE = ("at", "durationMs")
#: The tool-path agent's last three calls, and how the runtime must reject them.
_REJECTIONS = ("invalid_input", "invalid_input", "tool_not_found")


@dataclass(frozen=True)
class Artifact:
    """One baseline-comparable file.

    Attributes:
        task_id: the task it belongs to.
        kind: ``<agent>.<artifact>.json``, e.g. ``solver.result.json``.
        data: the exact bytes.
    """

    task_id: str
    kind: str
    data: bytes

    @property
    def file_name(self) -> str:
        """The baseline file name: ``<TASK>.<agent>.<artifact>.json``."""
        return f"{self.task_id}.{self.kind}"


def _run_dir(result: silo.RunResult) -> Path:
    if result.run_dir is None:
        raise RuntimeError(f"Run of {result.task.id} wrote no artifacts.")
    return result.run_dir


def _run_files(agent: str, result: silo.RunResult) -> list[Artifact]:
    run_dir = _run_dir(result)
    return [
        Artifact(result.task.id, f"{agent}.{name}", (run_dir / name).read_bytes())
        for name in ("result.json", "state-diff.json")
    ]


def tool_events(result: silo.RunResult) -> list[dict[str, Any]]:
    """``tool_call``/``tool_result`` events from ``trace.jsonl``, without timings."""
    lines = (_run_dir(result) / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    return [
        {k: v for k, v in event.items() if k not in _VOLATILE}
        for event in events
        if event.get("type") in ("tool_call", "tool_result")
    ]


def _events_artifact(result: silo.RunResult) -> Artifact:
    text = json.dumps(tool_events(result), indent=2, ensure_ascii=False) + "\n"
    return Artifact(result.task.id, "toolpath.tool-events.json", text.encode("utf-8"))


def seed_digest(world: Any) -> Artifact:
    """``{collection: sha256 of its canonical JSON}`` of a fresh world, as an artifact."""
    digests = {
        key: hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest()
        for key, value in sorted(world.items())
    }
    return Artifact(SEED, "world-digest.json", (json.dumps(digests, indent=2) + "\n").encode())


def collect_artifacts(rollouts: GateRollouts) -> list[Artifact]:
    """Every artifact of the gate, grouped by task in task order, then the seed's digest."""
    out: list[Artifact] = []
    for solver, noop in zip(rollouts.solver, rollouts.noop, strict=True):
        out += _run_files("solver", solver) + _run_files("noop", noop)
        if solver.task.id == rollouts.toolpath.task.id:
            out += _run_files("toolpath", rollouts.toolpath)
            out.append(_events_artifact(rollouts.toolpath))
    out.append(seed_digest(rollouts.seed))
    return out


def _failed(result: silo.RunResult) -> str:
    detail = ", ".join(result.failed_required) or result.error or "optional checks failed"
    return f"reward {result.reward:.2f}; {detail}"


def _toolpath_failure(result: silo.RunResult) -> str | None:
    outputs = [e for e in tool_events(result) if e["type"] == "tool_result"]
    codes = [e["output"].get("code") if e.get("isError") else None for e in outputs]
    expected = [None] * (len(codes) - len(_REJECTIONS)) + list(_REJECTIONS)
    if len(codes) < len(_REJECTIONS) + 3 or codes != expected or result.tool_faults:
        return f"toolpath: expected >= 3 accepted calls then {list(_REJECTIONS)}, got {codes}"
    return None


def invariant_failures(rollouts: GateRollouts) -> dict[str, list[str]]:
    """What must hold whatever the baseline says, as ``{task_id: [problem, ...]}``.

    The solver passes every task with reward 1.0 and no rejected call; the no-op agent passes
    none; the tool-path agent gets its read/write/read-back accepted and exactly its three
    deliberate mistakes rejected, with the right codes.
    """
    problems: dict[str, list[str]] = {}
    for solver, noop in zip(rollouts.solver, rollouts.noop, strict=True):
        mine = problems.setdefault(solver.task.id, [])
        if not solver.passed or solver.reward != 1.0:
            mine.append(f"solver must pass with reward 1.00: {_failed(solver)}")
        if solver.tool_errors or solver.tool_faults:
            mine.append(
                f"solver had {solver.tool_errors} rejected and {solver.tool_faults} faulted calls"
            )
        if noop.passed:
            mine.append("noop passed: the verifier accepts the untouched world")
    toolpath = _toolpath_failure(rollouts.toolpath)
    if toolpath is not None:
        problems.setdefault(rollouts.toolpath.task.id, []).append(toolpath)
    return {task: found for task, found in problems.items() if found}


def _verdict(result: silo.RunResult) -> str:
    return f"{'PASS' if result.passed else 'FAIL'} {result.reward:.2f}"


def _calls(n: int) -> str:
    return f"{n} call" if n == 1 else f"{n} calls"


def task_summary(rollouts: GateRollouts, index: int) -> str:
    """The description printed after ``ok <TASK>``."""
    solver, noop = rollouts.solver[index], rollouts.noop[index]
    text = f"solver {_verdict(solver)} ({_calls(solver.tool_calls)}) | noop {_verdict(noop)}"
    toolpath = rollouts.toolpath
    if toolpath.task.id == solver.task.id:
        text += (
            f" | toolpath {_calls(toolpath.tool_calls)}, {toolpath.tool_errors} rejected: "
            f"{toolpath.output_text}"
        )
    return text
