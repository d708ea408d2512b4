"""What ``run`` prints: the single-run report, the ``--runs N`` summary, and their JSON forms.

Pure functions of :class:`~silo_async.RunResult` values, so they are tested without a terminal.
Run directories are shown relative to the working directory, the way a user would ``cd`` there.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from .._result import RunResult

__all__ = [
    "Summary",
    "agent_crash",
    "aligned",
    "conversation_lines",
    "many_json",
    "many_text",
    "plural",
    "relative",
    "run_json",
    "run_text",
    "summarize",
]

_CROSS = "✗"


@attrs.frozen
class Summary:
    """Aggregates over the rollouts of one task; rewards over the valid ones only.

    ``mean_reward``, ``best_reward`` and ``worst_reward`` are None when no rollout's reward is
    valid (every one failed for a reason that is not the agent's).
    """

    runs: int
    passed: int
    mean_reward: float | None
    best_reward: float | None
    worst_reward: float | None
    avg_tool_calls: float
    invalid: int = 0
    injected_faults: int = 0
    recovered_faults: int = 0


def summarize(results: Sequence[RunResult]) -> Summary:
    """Pass count, mean/best/worst reward and average tool calls of ``results`` (non-empty).

    Passes and rewards count the rollouts whose reward is valid; ``invalid`` the others.
    """
    valid = [r for r in results if r.reward_valid]
    rewards = [r.reward for r in valid]
    return Summary(
        runs=len(results),
        passed=sum(1 for r in valid if r.passed),
        mean_reward=sum(rewards) / len(rewards) if rewards else None,
        best_reward=max(rewards, default=None),
        worst_reward=min(rewards, default=None),
        avg_tool_calls=sum(r.tool_calls for r in results) / len(results),
        invalid=len(results) - len(valid),
        injected_faults=sum(r.injected_faults for r in results),
        recovered_faults=sum(r.recovered_faults for r in results),
    )


def _reward(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _injected(injected: int, recovered: int) -> str:
    return f"{injected} ({recovered} recovered: the same tool later succeeded)"


def relative(path: Path, cwd: Path | None = None) -> str:
    """``path`` as typed from ``cwd`` (default: the current directory)."""
    try:
        return os.path.relpath(path, cwd)
    except ValueError:  # another drive on Windows: no relative form exists
        return str(path)


def _rel(path: Path | None, cwd: Path) -> str | None:
    return None if path is None else relative(path, cwd)


def plural(n: int, noun: str) -> str:
    """``1 call``, ``2 calls``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def aligned(rows: list[list[str]]) -> list[str]:
    """Rows padded to aligned columns, two spaces apart."""
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _duration(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def agent_crash(result: RunResult) -> dict[str, Any] | None:
    """The ``error`` of the trace's ``agent_error`` event (``type``, ``message``, ``traceback``)."""
    for line in reversed(result.trace_lines):
        if '"agent_error"' in line:  # decode only the event that can match
            event = json.loads(line)
            if event.get("type") == "agent_error" and isinstance(event.get("error"), dict):
                return dict(event["error"])
    return None


def run_json(result: RunResult, cwd: Path) -> dict[str, Any]:
    """One rollout as JSON: identity, then ``result.json``'s fields, then timing and location.

    A crashed agent adds ``agentError``: the exception's type, message and traceback.
    """
    data = {
        "runId": result.run_id,
        "environment": result.environment,
        "task": result.task.to_dict(),
        "agent": result.agent_name,
        **result.result_dict(),
        "durationMs": result.duration_ms,
        "config": dict(result.config),
        "runDir": _rel(result.run_dir, cwd),
    }
    crash = agent_crash(result) if result.termination_reason == "agent_error" else None
    if crash is not None:
        data["agentError"] = crash
    return data


def _rows(rows: list[tuple[str, str]]) -> list[str]:
    width = max(len(label) for label, _ in rows)
    return [f"{label.ljust(width)}  {value}".rstrip() for label, value in rows]


def _tokens(input_tokens: int, output_tokens: int) -> str:
    return f"{input_tokens:,} in · {output_tokens:,} out"


def _effort_rows(result: RunResult) -> list[tuple[str, str]]:
    faults = str(result.tool_faults)
    if result.tool_faults:
        faults += "  (the environment raised; see trace.jsonl)"
    rows = [
        ("Tool calls", str(result.tool_calls)),
        ("Errors", str(result.tool_errors)),
        ("Faults", faults),
    ]
    if result.faults is not None or result.injected_faults:
        rows.append(("Injected", _injected(result.injected_faults, result.recovered_faults)))
    if result.model_steps:  # only agents that record model steps have these
        rows.append(("Model steps", str(result.model_steps)))
        rows.append(("Tokens", _tokens(result.input_tokens, result.output_tokens)))
    if result.task.user is not None or result.user_turns:
        rows.append(("User turns", _user_effort(result)))
    return rows


def _user_effort(result: RunResult) -> str:
    """``2  (1 user tool call · 90 in · 13 out)``: the turns, the user's calls and tokens."""
    parts = [plural(result.user_tool_calls, "user tool call")]
    if result.user_input_tokens is not None or result.user_output_tokens is not None:
        parts.append(_tokens(result.user_input_tokens or 0, result.user_output_tokens or 0))
    return f"{result.user_turns}  ({' · '.join(parts)})"


#: Characters of each message the conversation shows.
_SAID = 160


def _said(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= _SAID else flat[: _SAID - 1] + "…"


def conversation_lines(result: RunResult) -> list[str]:
    """The conversation of a task with a user: its opening, then each turn (empty without one).

    What the user did with their own tools follows their reply, and the turn that ended the
    conversation says so.
    """
    if result.task.user is None:
        return []
    lines = ["Conversation:", f"  User   {_said(result.task.user.get('opening', ''))}"]
    for line in result.trace_lines:
        if '"user_turn"' not in line:  # decode only the events that can match
            continue
        event = json.loads(line)
        if event.get("type") != "user_turn":
            continue
        reply = _said(event.get("reply", ""))
        actions = [str(a.get("tool")) for a in event.get("actions") or [] if isinstance(a, dict)]
        if actions:
            reply += f"  [did: {', '.join(actions)}]"
        if event.get("ended"):
            reply += "  (ended the conversation)"
        lines += [f"  Agent  {_said(event.get('agentText', ''))}", f"  User   {reply}"]
    return lines


def _reward_row(result: RunResult) -> str:
    reward = f"{result.reward:.2f}"
    if result.reward_valid:
        return reward
    return f"{reward}  (not valid: {result.invalid_reason}; not the agent's doing)"


def run_text(result: RunResult, cwd: Path, *, saved: bool = True, traceback: bool = False) -> str:
    """The single-run report: verdict, score, effort, what failed and where the run was saved.

    ``saved=False`` (``runs show``: a run recorded earlier) labels the directory ``Run dir``
    instead of ``Run saved``. Model steps and tokens appear when the agent recorded any; a
    task with a user adds its turns and the conversation after the rows. For a
    crashed agent, ``traceback`` appends the exception's traceback; without it a line says how
    to see it.
    """
    rows = [
        ("Task", f"{result.task.id} — {result.task.title}"),
        ("Result", "PASS" if result.passed else "FAIL"),
        ("Reward", _reward_row(result)),
        ("Duration", _duration(result.duration_ms)),
        *_effort_rows(result),
        ("Checks", f"{result.checks_passed} / {len(result.checks)}"),
        ("Required", f"{result.required_passed} / {result.required_total}"),
    ]
    if result.termination_reason != "completed":
        rows.append(("Ended early", result.termination_reason))
    if result.error:
        rows.append(("Error", result.error))
    crash = agent_crash(result) if result.termination_reason == "agent_error" else None
    if crash is not None and not traceback:
        rows.append(("Traceback", f"silo-async runs show {result.run_id} (or run --traceback)"))
    for i, label in enumerate(result.failed_required):
        rows.append(("Failed" if i == 0 else "", f"{_CROSS} {label}"))
    run_dir = _rel(result.run_dir, cwd)
    if run_dir is not None:
        rows.append(("Run saved" if saved else "Run dir", run_dir))
    lines = _rows(rows)
    talk = conversation_lines(result)
    if talk:
        lines += ["", *talk]
    if crash is not None and traceback:
        lines += ["", "The agent raised:", str(crash.get("traceback", "")).rstrip()]
    return "\n".join(lines)


def _rollout_line(index: int, result: RunResult, cwd: Path) -> str:
    parts = [f"reward {result.reward:.2f}", plural(result.tool_calls, "call")]
    if result.task.user is not None:
        parts.append(plural(result.user_turns, "user turn"))
    if result.model_steps:
        parts.append(plural(result.input_tokens + result.output_tokens, "token"))
    if result.tool_faults:
        parts.append(plural(result.tool_faults, "fault"))
    if result.injected_faults:
        parts.append(f"{result.injected_faults} injected ({result.recovered_faults} recovered)")
    parts.append(result.termination_reason)
    if not result.reward_valid:
        parts.append(f"INVALID ({result.invalid_reason})")
    line = f"run {index}  {'PASS' if result.passed else 'FAIL'}  {' · '.join(parts)}"
    run_dir = _rel(result.run_dir, cwd)
    return f"{line}  {run_dir}" if run_dir is not None else line


def many_text(results: Sequence[RunResult], cwd: Path) -> str:
    """The ``--runs N`` summary followed by one line per rollout, in run order."""
    s = summarize(results)
    task = results[0].task
    rows = [
        ("Task", f"{task.id} — {task.title}"),
        ("Rollouts", str(s.runs)),
        ("Passed", f"{s.passed} / {s.runs - s.invalid}"),
        ("Mean reward", _reward(s.mean_reward)),
        ("Best", _reward(s.best_reward)),
        ("Worst", _reward(s.worst_reward)),
        ("Avg calls", f"{s.avg_tool_calls:.1f}"),
    ]
    if s.invalid:
        rows.insert(3, ("Invalid", f"{s.invalid} (not evidence: left out of the numbers)"))
    if s.injected_faults or any(r.faults is not None for r in results):
        rows.append(("Injected", _injected(s.injected_faults, s.recovered_faults)))
    if any(r.model_steps for r in results):
        total_in = sum(r.input_tokens for r in results)
        total_out = sum(r.output_tokens for r in results)
        mean = (total_in + total_out) / len(results)
        rows.append(("Tokens", f"{_tokens(total_in, total_out)} (mean {mean:,.0f} per run)"))
    lines = _rows(rows)
    lines.append("")
    lines.extend(_rollout_line(i, r, cwd) for i, r in enumerate(results, start=1))
    return "\n".join(lines)


def many_json(results: Sequence[RunResult], cwd: Path) -> dict[str, Any]:
    """The ``--runs N`` summary as JSON, with every rollout in run order."""
    s = summarize(results)
    return {
        "task": results[0].task.to_dict(),
        "runs": s.runs,
        "passed": s.passed,
        "invalid": s.invalid,
        "meanReward": None if s.mean_reward is None else round(s.mean_reward, 4),
        "bestReward": s.best_reward,
        "worstReward": s.worst_reward,
        "avgToolCalls": round(s.avg_tool_calls, 2),
        "rollouts": [run_json(r, cwd) for r in results],
    }
