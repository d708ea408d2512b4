"""Recorded runs on disk: find them, list them, load them, show their trace as text.

A run directory holds ``run.json`` (identity, config, timings), ``result.json``,
``state-diff.json`` and ``trace.jsonl``. Runs of ``silo-async run`` live in ``.silo/runs/``; runs
of an eval live in ``.silo/evals/<eval_id>/runs/`` (see ``evaluate``), and both are found by id.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from .._jsonutil import compact_json, output_text
from .._result import RunResult
from .._task import Task
from .._trace import encode_event
from .._verify import Check

__all__ = [
    "CallRecord",
    "RecordedRun",
    "RunInfo",
    "RunNotFoundError",
    "find_run",
    "list_runs",
    "load_run",
    "pair_calls",
    "trace_lines",
]

_RUN_ID = re.compile(r"^[A-Za-z0-9_.-]+$")


class RunNotFoundError(LookupError):
    """No run directory with that id (``str()`` says where we looked)."""


def _project(cwd: str | os.PathLike[str] | None) -> Path:
    return Path(os.getcwd() if cwd is None else cwd).absolute()


def find_run(run_id: str, cwd: str | os.PathLike[str] | None = None) -> Path:
    """The directory of run ``run_id``: ``.silo/runs/<id>/``, else an eval's ``runs/<id>/``.

    A path to a run directory (one holding ``run.json``) is accepted as well.

    Raises:
        RunNotFoundError: no such run.
    """
    as_path = Path(run_id)
    if (as_path / "run.json").is_file():
        return as_path
    root = _project(cwd) / ".silo"
    if _RUN_ID.match(run_id) and run_id not in (".", ".."):
        direct = root / "runs" / run_id
        if (direct / "run.json").is_file():
            return direct
        for candidate in sorted(root.glob(f"evals/*/runs/{run_id}")):
            if (candidate / "run.json").is_file():
                return candidate
    raise RunNotFoundError(
        f'Run "{run_id}" was not found in {root / "runs"} or in any eval under {root / "evals"}.'
    )


@attrs.frozen
class RunInfo:
    """One line of ``runs list``, read from ``run.json``."""

    run_id: str
    environment: str
    task_id: str
    agent: str
    passed: bool
    reward: float
    termination_reason: str
    tool_calls: int
    started_at: str
    duration_ms: float
    run_dir: Path

    def to_dict(self) -> dict[str, Any]:
        """JSON form (camelCase keys)."""
        return {
            "runId": self.run_id,
            "environment": self.environment,
            "taskId": self.task_id,
            "agent": self.agent,
            "passed": self.passed,
            "reward": self.reward,
            "terminationReason": self.termination_reason,
            "toolCalls": self.tool_calls,
            "startedAt": self.started_at,
            "durationMs": self.duration_ms,
            "runDir": str(self.run_dir),
        }


def _info(run_dir: Path) -> RunInfo | None:
    try:
        data = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        return RunInfo(
            run_id=str(data["runId"]),
            environment=str(data["environment"]),
            task_id=str(data["taskId"]),
            agent=str(data.get("agent", "")),
            passed=bool(data.get("passed")),
            reward=float(data.get("reward", 0.0)),
            termination_reason=str(data.get("terminationReason", "")),
            tool_calls=int(data.get("toolCallCount", 0)),
            started_at=str(data.get("startedAt", "")),
            duration_ms=float(data.get("durationMs", 0.0)),
            run_dir=run_dir,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a run still in progress, or not a run directory


def list_runs(
    cwd: str | os.PathLike[str] | None = None,
    *,
    env: str | None = None,
    eval_id: str | None = None,
) -> list[RunInfo]:
    """The recorded runs of a project, oldest first.

    Args:
        cwd: the project directory (default: the current directory).
        env: only runs of this environment (case-insensitive).
        eval_id: list the runs of this eval (``.silo/evals/<eval_id>/runs/``) instead of
            ``.silo/runs/``.
    """
    root = _project(cwd) / ".silo"
    base = root / "evals" / eval_id / "runs" if eval_id else root / "runs"
    if not base.is_dir():
        return []
    infos = [i for d in sorted(base.iterdir()) if d.is_dir() and (i := _info(d)) is not None]
    if env is not None:
        infos = [i for i in infos if i.environment.lower() == env.lower()]
    return sorted(infos, key=lambda i: i.run_id)


@attrs.frozen
class CallRecord:
    """One recorded tool call, paired with its result."""

    call_id: int
    tool: str
    input: Any
    output: Any
    is_error: bool
    duration_ms: float | None
    fault: dict[str, Any] | None
    has_result: bool


@attrs.frozen
class RecordedRun:
    """A run directory, loaded.

    Attributes:
        run_dir: where it lives.
        run: ``run.json``.
        result: ``result.json``.
        trace: the events of ``trace.jsonl`` (a torn last line is dropped).
        state_diff: ``state-diff.json``.
        result_text: ``result.json`` exactly as on disk.
        diff_text: ``state-diff.json`` exactly as on disk.
    """

    run_dir: Path
    run: dict[str, Any]
    result: dict[str, Any]
    trace: list[dict[str, Any]]
    state_diff: dict[str, Any]
    result_text: str
    diff_text: str

    @property
    def run_id(self) -> str:
        """The run's id."""
        return str(self.run["runId"])

    def calls(self) -> list[CallRecord]:
        """The tool calls in ``callId`` order, each with its recorded result."""
        return pair_calls(self.trace)

    def event(self, kind: str) -> dict[str, Any] | None:
        """The last event of type ``kind``, if any."""
        for event in reversed(self.trace):
            if event.get("type") == kind:
                return dict(event)
        return None

    def to_run_result(self) -> RunResult:
        """A :class:`RunResult` rebuilt from the files (for the same reports ``run`` prints)."""
        r, res = self.run, self.result
        output = res.get("agentOutput")
        return RunResult(
            run_id=self.run_id,
            environment=str(r["environment"]),
            task=Task.from_dict(r["task"]),
            agent_name=str(r.get("agent", "")),
            agent_output=output,
            output_text=output_text(output),
            passed=bool(res["passed"]),
            reward=float(res["reward"]),
            termination_reason=str(res["terminationReason"]),
            tool_calls=int(res["toolCalls"]),
            tool_errors=int(res["toolErrors"]),
            tool_faults=int(res.get("toolFaults", 0)),
            model_steps=int(res.get("modelSteps", 0)),
            input_tokens=int(res.get("inputTokens", 0)),
            output_tokens=int(res.get("outputTokens", 0)),
            error=res.get("error"),
            verifier_id=str(r.get("verifierId", "")),
            checks=[
                Check(c["label"], bool(c["passed"]), c.get("detail", ""), bool(c["required"]))
                for c in res.get("checks", [])
            ],
            required_passed=int(res["requiredPassed"]),
            required_total=int(res["requiredTotal"]),
            failed_required=list(res.get("failedRequired", [])),
            trace_lines=tuple(encode_event(event) for event in self.trace),
            state_diff_json=compact_json(self.state_diff),
            run_dir=self.run_dir,
            started_at=str(r.get("startedAt", "")),
            finished_at=str(r.get("finishedAt", "")),
            duration_ms=float(r.get("durationMs", 0.0)),
            config=dict(r.get("config", {})),
        )


def pair_calls(trace: Iterable[dict[str, Any]]) -> list[CallRecord]:
    """A trace's tool calls in ``callId`` order, each paired with its ``tool_result``, if any."""
    calls: dict[int, dict[str, Any]] = {}
    results: dict[int, dict[str, Any]] = {}
    for event in trace:
        if event.get("type") == "tool_call":
            calls[int(event["callId"])] = event
        elif event.get("type") == "tool_result":
            results[int(event["callId"])] = event
    out = []
    for call_id in sorted(calls):
        call, res = calls[call_id], results.get(call_id, {})
        out.append(
            CallRecord(
                call_id=call_id,
                tool=str(call["tool"]),
                input=call.get("input"),
                output=res.get("output"),
                is_error=bool(res.get("isError", False)),
                duration_ms=res.get("durationMs"),
                fault=res.get("fault"),
                has_result=bool(res),
            )
        )
    return out


def _read_trace(path: Path) -> list[dict[str, Any]]:
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            break  # a line torn by a crash ends the readable trace
    return events


def load_run(run_dir: str | os.PathLike[str]) -> RecordedRun:
    """Load a run directory.

    Raises:
        RunNotFoundError: a file of the run is missing (the run did not finish writing).
    """
    base = Path(run_dir)
    try:
        result_text = (base / "result.json").read_text(encoding="utf-8")
        diff_text = (base / "state-diff.json").read_text(encoding="utf-8")
        return RecordedRun(
            run_dir=base,
            run=json.loads((base / "run.json").read_text(encoding="utf-8")),
            result=json.loads(result_text),
            trace=_read_trace(base / "trace.jsonl"),
            state_diff=json.loads(diff_text),
            result_text=result_text,
            diff_text=diff_text,
        )
    except FileNotFoundError as exc:
        raise RunNotFoundError(
            f"Run directory {base} is incomplete: {exc.filename} is missing."
        ) from None


def _short(value: Any, limit: int) -> str:
    text = compact_json(value)
    return text if len(text) <= limit else f"{text[:limit]}… (+{len(text) - limit} chars)"


def trace_lines(recorded: RecordedRun, width: int = 160) -> list[str]:
    """One readable line per tool call: ``#id tool input -> output (ms)``, errors marked."""
    lines = []
    for call in recorded.calls():
        ms = "" if call.duration_ms is None else f"  ({call.duration_ms:g} ms)"
        if not call.has_result:
            outcome = "(no result recorded)"
        elif call.fault:
            outcome = f"FAULT {call.fault.get('type')}: {call.fault.get('message')}"
        elif call.is_error:
            outcome = f"ERROR {_short(call.output, width)}"
        else:
            outcome = _short(call.output, width)
        lines.append(f"#{call.call_id} {call.tool} {_short(call.input, width)} -> {outcome}{ms}")
    return lines
