"""Replay: re-execute a recorded run's tool calls on a fresh world and re-grade it.

The recorded calls (and a conversational task's ``message_user`` turns, said again to the task's
scripted user) are played back, in the order made, by a ``ScriptedAgent`` (no model) that
finally returns the recorded agent output — and ends the way the recording ended (the refused
call beyond the limit, the time limit, the agent's error) so the runner records the same outcome.
The current verifier grades the new world. The report says which tool outputs differ from the
recording and whether ``result.json`` and ``state-diff.json`` are byte-for-byte identical: a
regression oracle for environment and verifier changes.

A run recorded under a fault plan is replayed under the same plan (``run.json``'s ``faults``)
and as the same run number (``run``): the same calls meet the same faults.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import attrs

from ..._context import AgentContext
from ..._environment import Environment
from ..._errors import SiloError
from ..._faults import Faults
from ..._jsonutil import compact_json, json_equal, pretty_json
from ..._limits import Limits
from ..._options import RunOptions
from ..._result import RunResult
from ..._runner import run_agent
from ..._setup import RolloutSetup
from ..._tools import ToolResult
from ...project import load_environment
from ...runs import RunDir
from ...testing import ScriptedAgent, ScriptedCall
from ._runs import CallRecord, RecordedRun, find_run, load_run

__all__ = ["CallComparison", "ReplayReport", "replay"]


class ReplayedAgentError(RuntimeError):
    """Raised by the replaying agent to reproduce a recorded agent crash (same message)."""


def _recorded_crash(recorded: RecordedRun) -> Exception:
    """An exception whose ``"<Type>: <message>"`` is the recorded crash's, to raise again."""
    crash = (recorded.event("agent_error") or {}).get("error")
    if isinstance(crash, dict) and crash.get("type"):
        # A subclass named like the recorded type: the run's error text comes out the same.
        kind: type[Exception] = type(str(crash["type"]), (ReplayedAgentError,), {})
        return kind(str(crash.get("message", "")))
    run_end = recorded.event("run_end") or {}
    return ReplayedAgentError(str(run_end.get("error") or "agent error"))


@attrs.frozen
class CallComparison:
    """One replayed tool call next to its recording.

    Attributes:
        call_id: the call's id in the recording.
        tool: the tool called.
        matches: output and ``is_error`` are what was recorded.
        recorded_output: the recorded output.
        replayed_output: the output now.
        recorded_is_error: the recorded error flag.
        replayed_is_error: the error flag now.
    """

    call_id: int
    tool: str
    matches: bool
    recorded_output: Any
    replayed_output: Any
    recorded_is_error: bool
    replayed_is_error: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON form; outputs only for calls that differ."""
        data: dict[str, Any] = {"callId": self.call_id, "tool": self.tool, "matches": self.matches}
        if not self.matches:
            data.update(
                recorded={"output": self.recorded_output, "isError": self.recorded_is_error},
                replayed={"output": self.replayed_output, "isError": self.replayed_is_error},
            )
        return data


@attrs.frozen
class ReplayReport:
    """The outcome of a replay.

    Attributes:
        run_id: the recorded run.
        environment: its environment.
        task_id: its task.
        calls: every replayed call, compared.
        result_identical: the new ``result.json`` equals the recorded one byte for byte.
        diff_identical: the new ``state-diff.json`` equals the recorded one byte for byte.
        differences: human-readable differences (empty when identical).
        replayed: the new run's result.
    """

    run_id: str
    environment: str
    task_id: str
    calls: list[CallComparison]
    result_identical: bool
    diff_identical: bool
    differences: list[str]
    replayed: RunResult

    @property
    def identical(self) -> bool:
        """Every call output, ``result.json`` and ``state-diff.json`` match the recording."""
        return self.result_identical and self.diff_identical and all(c.matches for c in self.calls)

    def to_dict(self) -> dict[str, Any]:
        """JSON form for ``replay --json``."""
        return {
            "runId": self.run_id,
            "environment": self.environment,
            "taskId": self.task_id,
            "identical": self.identical,
            "resultIdentical": self.result_identical,
            "stateDiffIdentical": self.diff_identical,
            "callsReplayed": len(self.calls),
            "callsMatching": sum(1 for c in self.calls if c.matches),
            "differences": list(self.differences),
            "calls": [c.to_dict() for c in self.calls],
            "replayed": self.replayed.result_dict(),
        }


def _steps(recorded: RecordedRun, calls: list[CallRecord]) -> list[CallRecord | str]:
    """The agent's calls and ``message_user`` turns (their text) in the order it made them."""
    steps: list[CallRecord | str] = []
    pending = iter(calls)
    for event in recorded.trace:
        kind = event.get("type")
        if kind == "tool_call" and "actor" not in event:
            steps.append(next(pending))
        elif kind in ("user_turn", "user_fault"):  # a conversational task's turn, said again
            steps.append(str(event.get("agentText", "")))
    steps.extend(pending)
    return steps


def _script(recorded: RecordedRun, compared: list[CallComparison]) -> Any:
    calls: list[CallRecord] = recorded.calls()
    steps = _steps(recorded, calls)
    reason = str(recorded.result.get("terminationReason", "completed"))
    output = recorded.result.get("agentOutput")
    crash = _recorded_crash(recorded)

    def compare(index: int, _call: ScriptedCall, got: ToolResult) -> None:
        call = steps[index]
        if isinstance(call, str):  # a turn: the user answers again; the world is compared
            return
        compared.append(
            CallComparison(
                call_id=call.call_id,
                tool=call.tool,
                matches=call.has_result
                and got.is_error == call.is_error
                and json_equal(got.output, call.output),
                recorded_output=call.output,
                replayed_output=got.output,
                recorded_is_error=call.is_error,
                replayed_is_error=got.is_error,
            )
        )

    script = ScriptedAgent(
        [("message_user", {"text": c}) if isinstance(c, str) else (c.tool, c.input) for c in steps],
        on_result=compare,
    )

    async def replaying_agent(ctx: AgentContext) -> Any:
        await script.play(ctx)
        if output is not None:
            ctx.set_output(output)
        if reason == "max_tool_calls":
            # The recorded agent asked for one call too many; so do we (it is refused, as then).
            await ctx.call_tool(calls[-1].tool if calls else "replay", {})
        elif reason == "timeout":
            await anyio.sleep_forever()
        elif reason == "agent_error":
            raise crash
        return output

    replaying_agent.__qualname__ = str(recorded.run.get("agent") or "replay")
    return replaying_agent


def _short(value: Any, limit: int = 200) -> str:
    text = compact_json(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _result_differences(recorded: dict[str, Any], replayed: dict[str, Any]) -> list[str]:
    out = []
    for key in list(recorded) + [k for k in replayed if k not in recorded]:
        before, after = recorded.get(key), replayed.get(key)
        if key == "checks" and isinstance(before, list) and isinstance(after, list):
            for i in range(max(len(before), len(after))):
                b = before[i] if i < len(before) else None
                a = after[i] if i < len(after) else None
                if not json_equal(a, b):
                    out.append(f"{RunDir.RESULT} checks[{i}]: {_short(b)} -> {_short(a)}")
        elif not json_equal(before, after):
            out.append(f"{RunDir.RESULT} {key}: {_short(before)} -> {_short(after)}")
    return out


def _load_env(recorded: RecordedRun, cwd: Path | None) -> Environment:
    return load_environment(str(recorded.run["environment"]), cwd)


async def replay(
    run_ref: str | os.PathLike[str] | RecordedRun,
    env: Environment | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
) -> ReplayReport:
    """Replay a recorded run against a fresh world and re-grade it with today's verifier.

    The run's limits come from its ``run.json``. A run that ended on its time limit is replayed
    until the same limit trips, so its replay takes that long.

    Args:
        run_ref: a run id (looked up as ``runs show`` does), a run directory, or a loaded run.
        env: the environment to replay against (default: load the one ``run.json`` names from
            the project at ``cwd`` with the project loader).
        cwd: the project directory (default: the current directory).

    Returns:
        A :class:`ReplayReport`; ``.identical`` says whether everything matched.

    Raises:
        RunNotFoundError: no such run, or it is incomplete.
        SiloError: the environment or the task cannot be loaded; ``run_invalid``: a file of the
            run does not parse, or a line of its trace (a torn trace cannot be replayed);
            ``run_format_unsupported``: the run was written by a newer silo_async.
    """
    if isinstance(run_ref, RecordedRun):
        recorded = run_ref
    else:
        # Strict: a replay that silently left out a torn call would report a false difference.
        recorded = load_run(find_run(os.fspath(run_ref), cwd), strict=True)
    if recorded.skipped_lines:
        raise SiloError(
            "run_invalid",
            f"The trace of run {recorded.run_id} has lines that cannot be read "
            f"({', '.join(map(str, recorded.skipped_lines))}); a replay needs every recorded call.",
            {"path": os.fspath(recorded.run_dir), "lines": list(recorded.skipped_lines)},
        )
    if env is None:
        env = _load_env(recorded, None if cwd is None else Path(cwd))
    config = recorded.run.get("config", {})
    timeout_ms = config.get("timeoutMs")
    compared: list[CallComparison] = []
    task = env.task(str(recorded.run["taskId"]))
    faults = recorded.run.get("faults")
    setup = RolloutSetup.new(
        env,
        task,
        env.verifier_for(task),
        RunOptions(
            limits=Limits(
                max_tool_calls=int(config.get("maxToolCalls", 100)),
                timeout=None if timeout_ms is None else timeout_ms / 1000,
            ),
            faults=None if faults is None else Faults.from_config(faults),
        ),
        agent_name=str(recorded.run.get("agent") or "replay"),
        run_index=int(recorded.run.get("run", 1)),
    )
    result = await run_agent(setup, _script(recorded, compared))
    result_text = pretty_json(result.result_dict())
    diff_text = pretty_json(result.state_diff)
    differences = [
        f"call #{c.call_id} {c.tool}: recorded {_short(c.recorded_output)}"
        f"{' (error)' if c.recorded_is_error else ''}, replayed {_short(c.replayed_output)}"
        f"{' (error)' if c.replayed_is_error else ''}"
        for c in compared
        if not c.matches
    ]
    if result_text != recorded.result_text:
        differences += _result_differences(recorded.result, result.result_dict())
        if not differences or not differences[-1].startswith(RunDir.RESULT):
            differences.append(f"{RunDir.RESULT} differs in formatting only")
    if diff_text != recorded.diff_text:
        before, after = _short(recorded.state_diff, 400), _short(result.state_diff, 400)
        differences.append(f"{RunDir.STATE_DIFF}: {before} -> {after}")
    return ReplayReport(
        run_id=recorded.run_id,
        environment=env.name,
        task_id=str(recorded.run["taskId"]),
        calls=compared,
        result_identical=result_text == recorded.result_text,
        diff_identical=diff_text == recorded.diff_text,
        differences=differences,
        replayed=result,
    )
