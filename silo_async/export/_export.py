"""Recorded rollouts as training data: one JSON line per rollout.

Lines are built one rollout at a time and handed on at once, so an export holds one rollout in
memory however many it reads. The tool list of a line comes from the rollout's environment (the
trace names the tools the agent saw; their descriptions and schemas are the environment's),
loaded once per environment and encoded once per tool list.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import attrs

from .._environment import Environment
from .._jsonutil import compact_json
from .._taskuser import task_prompt
from .._user import MESSAGE_USER_TOOL
from ..project import load_environment
from ..runs import RunDir
from ._atif import atif_trajectory
from ._chat import chat_messages, openai_tool
from ._source import (
    SKIP_DAMAGED,
    SKIP_INCOMPLETE,
    UnrebuildableError,
    eval_run_dirs,
    project_run_dirs,
    read_document,
    read_events,
    resolve_runs,
)

__all__ = ["FORMATS", "ExportStats", "Trajectories", "export_runs", "trajectories"]

#: The line formats ``runs export --format`` knows: OpenAI chat messages, ATIF v1.7
#: trajectories.
FORMATS = ("chat", "atif")


@attrs.frozen
class ExportStats:
    """What an export wrote and what it left out.

    Attributes:
        written: lines written (one per rollout).
        filtered: rollouts left out by ``env`` / ``passed_only`` / ``min_reward``.
        skipped: rollouts that could not be rebuilt, by reason (``incomplete``: killed before
            ``result.json``/``run.json`` were written; ``trace_cut``: the trace is missing, torn
            or has no end; ``damaged``: a file that does not parse).
    """

    written: int
    filtered: int
    skipped: dict[str, int]

    @property
    def skipped_total(self) -> int:
        """Rollouts skipped, all reasons together."""
        return sum(self.skipped.values())


class _Catalog:
    """Each environment's tools in OpenAI format, loaded once; each tool list encoded once."""

    def __init__(self, environment: Environment | None, root: Path) -> None:
        self._given = environment
        self._root = root
        self._tools: dict[str, dict[str, dict[str, Any]]] = {}
        self._lists: dict[tuple[str, tuple[str, ...]], str] = {}

    def _load(self, name: str) -> dict[str, dict[str, Any]]:
        env = self._given
        if env is None or env.name.lower() != name.lower():
            env = load_environment(name, self._root)
        # message_user is no tool of the environment, but a conversational task's agent has it.
        specs = [*(t.spec for t in env.bind_tools(env.create_state())), MESSAGE_USER_TOOL.spec]
        return {s.name: openai_tool(s.name, s.description, s.input_schema) for s in specs}

    def encoded(self, env_name: str, names: tuple[str, ...]) -> str:
        """The JSON text of the tools ``names`` of ``env_name``, in that order."""
        key = (env_name, names)
        text = self._lists.get(key)
        if text is None:
            tools = self._tools.get(env_name)
            if tools is None:
                tools = self._tools[env_name] = self._load(env_name)
            # A tool the environment no longer has keeps its name, so calls still point at it.
            empty = {"type": "object", "properties": {}}
            text = compact_json([tools.get(n) or openai_tool(n, "", empty) for n in names])
            self._lists[key] = text
        return text


@attrs.frozen
class _Filters:
    env: str | None
    passed_only: bool
    min_reward: float | None

    def keep(self, run: dict[str, Any], result: dict[str, Any]) -> bool:
        if self.env is not None and str(run.get("environment", "")).lower() != self.env.lower():
            return False
        if self.passed_only and result.get("passed") is not True:
            return False
        return self.min_reward is None or float(result.get("reward", 0.0)) >= self.min_reward


def _line(
    run: dict[str, Any], result: dict[str, Any], events: list[dict[str, Any]], tools: str
) -> str:
    """One rollout's line: the export's keys, in that order, with ``rewardValid``.

    ``rewardValid`` is false when the reward is not evidence (the model API failed, the
    environment faulted): a trainer should not learn from it. A run recorded before rewards had
    a validity is valid.
    """
    output = result.get("agentOutput")
    messages = chat_messages(_instruction(run["task"], events), events, output)
    usage = {
        "inputTokens": int(result.get("inputTokens", 0)),
        "outputTokens": int(result.get("outputTokens", 0)),
        "modelSteps": int(result.get("modelSteps", 0)),
    }
    j = compact_json
    return (
        f'{{"runId":{j(str(run["runId"]))},"environment":{j(str(run["environment"]))},'
        f'"task":{j(str(run["taskId"]))},"tools":{tools},"messages":{j(messages)},'
        f'"output":{j(output)},"reward":{j(float(result["reward"]))},'
        f'"rewardValid":{j(bool(result.get("rewardValid", True)))},'
        f'"passed":{j(bool(result["passed"]))},'
        f'"terminationReason":{j(str(result["terminationReason"]))},"usage":{j(usage)}}}'
    )


def _atif_line(
    run: dict[str, Any],
    result: dict[str, Any],
    events: list[dict[str, Any]],
    tools: str,
    state_diff: dict[str, Any],
) -> str:
    """One rollout's ATIF v1.7 trajectory, as one line."""
    instruction = _instruction(run["task"], events)
    trajectory = atif_trajectory(run, result, events, instruction, json.loads(tools), state_diff)
    return compact_json(trajectory)


def _instruction(task: dict[str, Any], events: list[dict[str, Any]]) -> str:
    """What the agent was given: the instruction, and a task's user's opening after it.

    A user whose task gives no opening wrote its own first message (a ``user_opening`` event).
    """
    instruction = str(task["instruction"])
    user = task.get("user")
    if isinstance(user, dict) and isinstance(user.get("opening"), str):
        return task_prompt(instruction, user["opening"])
    for event in events:
        if event.get("type") == "user_opening" and isinstance(event.get("text"), str):
            return task_prompt(instruction, event["text"])
    return instruction


def _tool_names(events: list[dict[str, Any]]) -> tuple[str, ...]:
    start = events[0] if events else {}
    if start.get("type") != "run_start" or not isinstance(start.get("tools"), list):
        raise UnrebuildableError(SKIP_DAMAGED, "the trace does not start with run_start")
    return tuple(str(name) for name in start["tools"])


class Trajectories:
    """The lines of an export, built lazily; counts what it left out as it goes.

    Iterate it for the lines as dicts, or use :meth:`lines` for their JSON text. It can be
    iterated once. :attr:`stats` is complete once the iteration has ended.
    """

    def __init__(
        self,
        dirs: Iterable[RunDir | None],
        filters: _Filters,
        catalog: _Catalog,
        format: str = "chat",
    ) -> None:
        self._dirs = iter(dirs)
        self._format = format
        self._filters = filters
        self._catalog = catalog
        self._written = 0
        self._filtered = 0
        self._skipped: dict[str, int] = {}

    @property
    def stats(self) -> ExportStats:
        """Lines so far, rollouts filtered out and rollouts skipped (by reason)."""
        return ExportStats(self._written, self._filtered, dict(self._skipped))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        # Parsing our own line back keeps one code path for both forms.
        return (json.loads(line) for line in self.lines())

    def lines(self) -> Iterator[str]:
        """Each rollout's line as compact JSON (no trailing newline)."""
        for run_dir in self._dirs:
            try:
                line = self._rebuild(run_dir)
            except UnrebuildableError as exc:
                self._skipped[exc.reason] = self._skipped.get(exc.reason, 0) + 1
                continue
            if line is None:
                self._filtered += 1
                continue
            self._written += 1
            yield line

    def _rebuild(self, run_dir: RunDir | None) -> str | None:
        if run_dir is None:
            raise UnrebuildableError(SKIP_INCOMPLETE, "the rollout kept no run directory")
        run = read_document(run_dir.read_run)  # first: its version says how to read the rest
        result = read_document(run_dir.read_result)
        try:
            if not self._filters.keep(run, result):
                return None
            events = read_events(run_dir)
            tools = self._catalog.encoded(str(run["environment"]), _tool_names(events))
            if self._format == "atif":
                state_diff = read_document(run_dir.read_state_diff)
                return _atif_line(run, result, events, tools, state_diff)
            return _line(run, result, events, tools)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UnrebuildableError(SKIP_DAMAGED, f"{run_dir}: {exc}") from None


def trajectories(
    run_ids: Sequence[str] | None = None,
    *,
    eval_id: str | None = None,
    env: str | None = None,
    format: str = "chat",
    passed_only: bool = False,
    min_reward: float | None = None,
    environment: Environment | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Trajectories:
    """The training lines of recorded rollouts, one per rollout, built as they are read.

    Args:
        run_ids: these runs, in this order (ids as ``runs show`` takes them, or run directories).
        eval_id: the runs of this eval in plan order (an id under ``.silo/evals/`` or the
            path of an eval directory). Without ``run_ids`` and ``eval_id``: every run of
            ``.silo/runs/``, oldest first.
        env: only rollouts of this environment (case-insensitive).
        format: ``"chat"`` (OpenAI chat messages and tools) or ``"atif"`` (one ATIF v1.7
            trajectory per rollout, silo's grade in its ``extra``).
        passed_only: only rollouts that passed.
        min_reward: only rollouts with at least this reward.
        environment: the environment to take tool descriptions and schemas from (for a
            code-first environment); others are loaded from the project by name.
        cwd: the project directory (default: the current directory).

    Returns:
        A :class:`Trajectories`: iterate it (dicts) or its ``lines()`` (JSON text).

    Raises:
        RunNotFoundError: a run id names no run directory.
        EvalNotFoundError: no such eval.
        ValueError: an unknown format, or both ``run_ids`` and ``eval_id``.

    Iterating raises ``SiloError("run_format_unsupported")`` at a run written by a newer
    silo_async (upgrade to export it).
    """
    if format not in FORMATS:
        raise ValueError(f"Unknown export format {format!r}; known: {', '.join(FORMATS)}.")
    if run_ids and eval_id is not None:
        raise ValueError("Pass run ids or an eval id, not both.")
    root = Path(os.getcwd() if cwd is None else cwd).absolute()
    dirs: Iterable[RunDir | None]
    if run_ids:
        dirs = [RunDir(run_dir) for run_dir in resolve_runs(run_ids, root)]
    elif eval_id is not None:
        dirs = eval_run_dirs(eval_id, root)
    else:
        dirs = project_run_dirs(root)
    filters = _Filters(env, passed_only, min_reward)
    return Trajectories(dirs, filters, _Catalog(environment, root), format)


def _write(stream: Trajectories, out: IO[str]) -> None:
    for line in stream.lines():
        out.write(line)
        out.write("\n")


def export_runs(
    run_ids: Sequence[str] | None = None,
    *,
    out: str | os.PathLike[str] | IO[str] | None = None,
    eval_id: str | None = None,
    env: str | None = None,
    format: str = "chat",
    passed_only: bool = False,
    min_reward: float | None = None,
    environment: Environment | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> ExportStats:
    """Write the training lines of recorded rollouts (what ``silo-async runs export`` does).

    Blocking file I/O: from async code, run it in a worker thread. Memory stays that of one
    rollout whatever the number of rollouts. Rollouts that cannot be rebuilt are skipped and
    counted in the returned stats, never raised.

    Args:
        run_ids: as for :func:`trajectories` (so are ``eval_id``, ``env``, ``format``,
            ``passed_only``, ``min_reward``, ``environment`` and ``cwd``).
        out: a file path (written beside, then renamed into place: a reader never sees half a
            file, and a failed export leaves none), an open text file, or ``None`` for stdout.
        eval_id: see :func:`trajectories`.
        env: see :func:`trajectories`.
        format: see :func:`trajectories`.
        passed_only: see :func:`trajectories`.
        min_reward: see :func:`trajectories`.
        environment: see :func:`trajectories`.
        cwd: see :func:`trajectories`.

    Returns:
        The :class:`ExportStats`.

    Raises:
        RunNotFoundError: a run id names no run directory (nothing is written).
        EvalNotFoundError: no such eval (nothing is written).
        SiloError: an environment named by a rollout cannot be loaded for its tools, or
            ``run_format_unsupported``: a run was written by a newer silo_async (with a file
            ``out``, nothing is written).
    """
    stream = trajectories(
        run_ids,
        eval_id=eval_id,
        env=env,
        format=format,
        passed_only=passed_only,
        min_reward=min_reward,
        environment=environment,
        cwd=cwd,
    )
    if out is None or not isinstance(out, str | os.PathLike):
        _write(stream, sys.stdout if out is None else out)
        return stream.stats
    target = Path(out)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        # backslashreplace: a lone surrogate is written as its \uXXXX escape (same JSON string).
        with tmp.open("w", encoding="utf-8", errors="backslashreplace") as file:
            _write(stream, file)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return stream.stats
