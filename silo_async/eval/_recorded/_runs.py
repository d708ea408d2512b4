"""Recorded runs on disk: find them, list them, load them, show their trace as text.

A run directory (its format: :class:`silo_async.runs.RunDir`) is read through ``RunDir`` only.
Runs of ``silo-async run`` live in ``.silo/runs/``; runs of an eval live in
``.silo/evals/<eval_id>/runs/`` (see ``evaluate``), and both are found by id.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from ..._errors import SiloError
from ..._jsonutil import compact_json, output_text
from ..._result import RunResult
from ..._task import Task
from ..._trace import encode_event
from ..._verify import Check
from ...runs import KnownEvals, RunDir

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

    The evals searched are those the project knows (:class:`~silo_async.runs.KnownEvals`:
    ``.silo/evals/*`` and those written with ``eval --out`` from the project). A path to a run
    directory (one holding ``run.json``) is accepted as well.

    Raises:
        RunNotFoundError: no such run.
    """
    as_path = Path(run_id)
    if RunDir(as_path).is_finished():
        return as_path
    root = _project(cwd) / ".silo"
    if _RUN_ID.match(run_id) and run_id not in (".", ".."):
        direct = root / "runs" / run_id
        if RunDir(direct).is_finished():
            return direct
        for eval_dir in KnownEvals(root.parent).dirs():
            candidate = eval_dir / "runs" / run_id
            if RunDir(candidate).is_finished():
                return candidate
    raise RunNotFoundError(
        f'Run "{run_id}" was not found in {root / "runs"} nor in any eval this project knows '
        f"(under {root / 'evals'}, or written with eval --out from here). Give the run "
        "directory's path instead: EVAL_DIR/runs/RUN_ID."
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


def _once(paths: Iterable[Path]) -> Iterable[Path]:
    """The directories among ``paths``, each once: a symbolic link to one listed is the same run.

    (As ``runs export`` counts them: a run reached twice is one rollout.)
    """
    seen: set[str] = set()
    for path in paths:
        real = os.path.realpath(path)
        if real not in seen and path.is_dir():
            seen.add(real)
            yield path


def _info(run_dir: Path) -> RunInfo | None:
    """The run's line, or None for a directory that holds no readable finished run.

    Raises:
        SiloError: ``run_format_unsupported``: the run was written by a newer silo_async.
    """
    try:
        data = RunDir(run_dir).read_run()
    except SiloError as exc:
        if exc.code == "run_format_unsupported":
            raise  # a run we cannot read is not silently left out
        return None
    except OSError:
        return None  # a run still in progress, or not a run directory
    try:
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
    except (ValueError, KeyError, TypeError):
        return None  # not a run directory of silo_async's


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
        eval_id: list the runs of this eval (``.silo/evals/<eval_id>/runs/``, or of an eval
            written elsewhere with ``eval --out`` from the project) instead of ``.silo/runs/``.

    Raises:
        SiloError: ``run_format_unsupported``: a run was written by a newer silo_async.
    """
    root = _project(cwd) / ".silo"
    base = root / "runs"
    if eval_id:
        found = KnownEvals(root.parent).find(eval_id)
        base = (root / "evals" / eval_id if found is None else found) / "runs"
    if not base.is_dir():
        return []
    infos = [i for d in _once(sorted(base.iterdir())) if (i := _info(d)) is not None]
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
        trace: the events of ``trace.jsonl``.
        state_diff: ``state-diff.json``.
        result_text: ``result.json`` exactly as on disk.
        diff_text: ``state-diff.json`` exactly as on disk.
        skipped_lines: 1-based numbers of trace lines skipped because they do not parse (a
            line cut short by a kill, or damaged); empty when loaded with ``strict=True``.
    """

    run_dir: Path
    run: dict[str, Any]
    result: dict[str, Any]
    trace: list[dict[str, Any]]
    state_diff: dict[str, Any]
    result_text: str
    diff_text: str
    skipped_lines: tuple[int, ...] = ()

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
            task=Task.from_dict(r["task"], instance=True),
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
            user_turns=int(res.get("userTurns", 0)),
            user_tool_calls=int(res.get("userToolCalls", 0)),
            user_input_tokens=res.get("userInputTokens"),
            user_output_tokens=res.get("userOutputTokens"),
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
            run_index=int(r.get("run", 1)),
            resumed_model_steps=int(r.get("resumedModelSteps", 0)),
            injected_faults=int(res.get("injectedFaults", 0)),
            recovered_faults=int(res.get("recoveredFaults", 0)),
            reward_valid=bool(res.get("rewardValid", True)),
            invalid_reason=res.get("invalidReason"),
            faults=r.get("faults"),
        )


def pair_calls(trace: Iterable[dict[str, Any]]) -> list[CallRecord]:
    """A trace's tool calls in ``callId`` order, each paired with its ``tool_result``, if any.

    The agent's calls only: a task's user's own calls (``"actor": "user"``) are not its.
    """
    calls: dict[int, dict[str, Any]] = {}
    results: dict[int, dict[str, Any]] = {}
    for event in trace:
        if "actor" in event:
            continue
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


def load_run(run_dir: str | os.PathLike[str], *, strict: bool = False) -> RecordedRun:
    """Load a run directory.

    Args:
        run_dir: the run directory.
        strict: a trace line that does not parse (cut short by a kill, or damaged) raises
            ``SiloError("run_invalid")`` naming the file and the line; by default it is
            skipped and listed in :attr:`RecordedRun.skipped_lines`.

    Raises:
        RunNotFoundError: a file of the run is missing (the run did not finish writing).
        SiloError: ``run_format_unsupported`` (written by a newer silo_async: upgrade) or
            ``run_invalid`` (a file does not parse, or a torn trace line with ``strict``).
    """
    base = Path(run_dir)
    files = RunDir(base)
    try:
        run = files.read_run()  # first: its version says how to read the rest
        result_text = files.read_text(RunDir.RESULT)
        diff_text = files.read_text(RunDir.STATE_DIFF)
        trace = files.events(strict=strict)
    except FileNotFoundError as exc:
        raise RunNotFoundError(
            f"Run directory {base} is incomplete: {exc.filename} is missing."
        ) from None
    return RecordedRun(
        run_dir=base,
        run=run,
        result=files.parse(RunDir.RESULT, result_text),
        trace=trace.events,
        state_diff=files.parse(RunDir.STATE_DIFF, diff_text),
        result_text=result_text,
        diff_text=diff_text,
        skipped_lines=trace.skipped,
    )


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
