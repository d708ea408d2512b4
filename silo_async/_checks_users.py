"""The checks of conversational tasks, beside ``env validate``'s others.

A simulated user grades nobody until it is proven, so ``env validate`` and
``check_environment`` check each task that has a ``user``:

* every rule (and ``otherwise``) answers with a message: an empty ``say`` is an error
  (``user_empty_reply``), since an agent fed an empty turn learns nothing and some crash;
* every tool of ``user.tools`` exists in the environment (``user_tool_unknown``);
* with a solver: the solver passes with the scripted user (``solver_failed``, as for every
  task), and no rule ends the conversation while one of the solver's required writes is still
  to come (``user_ends_early``, naming the task and the rule). A write is a call of the solver
  that changed the world; it is *required* when the task fails without it. The solver's
  rollout is replayed call by call on a fresh world to find its writes, and again without a
  write to learn whether it was required;
* the do-nothing agent never speaks, so the credibility check (a do-nothing agent passes no
  task) also proves that an agent that never speaks fails.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import attrs

from ._environment import Environment
from ._grading import finish_grading, start_grading
from ._jsonutil import compact_json, output_text, thaw
from ._jsonutil import pack as pack_world
from ._result import RunResult
from ._task import Task
from ._taskuser import Rule
from ._user import ScriptedUser
from ._verify import VerifierContext

__all__ = ["check_ends", "check_scripts"]


class Findings(Protocol):
    """Where the checks report (``silo_async._checks.Checker``)."""

    def error(self, code: str, message: str) -> None:
        """Record an error finding."""


def check_scripts(c: Findings, tasks: Iterable[Task], tool_names: set[str] | None) -> None:
    """Static checks of every task's user: no empty reply, every user tool exists.

    Args:
        c: the checker collecting findings.
        tasks: the environment's tasks.
        tool_names: the environment's tool names (``None``: unknown, not checked).
    """
    for task in tasks:
        script = task.user_script
        if script is None:
            continue
        for rule in (*script.rules, script.otherwise):
            if not rule.say.strip():
                c.error(
                    "user_empty_reply",
                    f'Task "{task.id}": user rule {rule.label} answers with an empty message; '
                    'give it a "say" (an agent fed an empty turn learns nothing).',
                )
        for name in script.tools:
            if tool_names is not None and name not in tool_names:
                c.error(
                    "user_tool_unknown",
                    f'Task "{task.id}": user.tools names "{name}", which is not a tool of the '
                    "environment.",
                )


@attrs.frozen
class _Call:
    """One recorded tool call, in trace order."""

    position: int
    actor: str
    call_id: Any
    tool: str
    input: Any


@attrs.frozen
class _Turn:
    """One recorded turn, in trace order."""

    position: int
    text: str


def _recorded(trace: Sequence[dict[str, Any]]) -> tuple[list[_Call], list[_Turn]]:
    calls: list[_Call] = []
    turns: list[_Turn] = []
    for position, event in enumerate(trace):
        kind = event.get("type")
        if kind == "tool_call":
            actor = str(event.get("actor", "agent"))
            calls.append(
                _Call(position, actor, event.get("callId"), str(event["tool"]), event.get("input"))
            )
        elif kind == "user_turn":
            turns.append(_Turn(position, str(event.get("agentText", ""))))
    return calls, turns


def _fingerprint(state: Any) -> bytes | str:
    try:
        return marshal.dumps(state)
    except ValueError:  # not plain data: its JSON text
        return compact_json(state)


async def _replay(env: Environment, calls: Sequence[_Call], skip: _Call | None = None) -> tuple[
    Any, Any, list[_Call]
]:  # fmt: skip
    """Play ``calls`` (all actors, in order) on a fresh world: ``(final, initial, writes)``.

    ``writes`` are the agent's calls that changed the world. ``skip`` is left out.
    """
    state = env.create_state()
    initial = thaw(pack_world(state))
    by_name = env.runtime_tools(state)
    writes: list[_Call] = []
    for call in calls:
        if call is skip:
            continue
        tool = by_name.get(call.tool)
        if tool is None:
            continue
        before = _fingerprint(state)
        await tool.invoke(call.input)
        if call.actor == "agent" and _fingerprint(state) != before:
            writes.append(call)
    return state, initial, writes


async def _passes_without(
    env: Environment, result: RunResult, calls: Sequence[_Call], skipped: _Call
) -> bool:
    """Whether the task still passes when the solver's rollout is replayed without one call."""
    final, initial, _ = await _replay(env, calls, skipped)
    task = result.task
    conversation = tuple(
        {"agentText": e["agentText"], "reply": e["reply"], "ended": e["ended"]}
        for e in result.trace
        if e.get("type") == "user_turn"
    )
    text = output_text(result.agent_output)
    ctx = VerifierContext(text, task, result.agent_output, conversation)
    verifier = env.verifier_for(task)
    graded = start_grading(verifier, final, initial, ctx)
    if not isinstance(graded, tuple):
        graded = await finish_grading(verifier, graded)
    outcome, _ = graded
    return outcome is not None and outcome.passed


def _ending(task: Task, turns: Sequence[_Turn]) -> tuple[_Turn, Rule, int] | None:
    """The turn the scripted user ended the conversation at, the rule, and the turn number."""
    user = ScriptedUser.from_task(task)
    for number, turn in enumerate(turns, start=1):
        rule = user.match(turn.text)
        if rule.end:
            return turn, rule, number
    return None


async def check_ends(c: Findings, env: Environment, results: Sequence[RunResult]) -> None:
    """No rule ends a conversation before a write the solver needs (``user_ends_early``).

    Args:
        c: the checker collecting findings.
        env: the environment.
        results: the solver's rollouts with the scripted user (those of tasks with a user
            that passed are checked).
    """
    for result in results:
        task = result.task
        if task.user_script is None or not result.passed:
            continue
        trace = result.trace
        calls, turns = _recorded(trace)
        ending = _ending(task, turns)
        if ending is None:
            continue
        turn, rule, number = ending
        _, _, writes = await _replay(env, calls)
        for write in writes:
            if write.position < turn.position:
                continue
            if await _passes_without(env, result, calls, write):
                continue  # a write the task does not need
            said = turn.text if len(turn.text) <= 60 else turn.text[:57] + "..."
            c.error(
                "user_ends_early",
                f'Task "{task.id}": user rule {rule.label} ends the conversation at turn '
                f'{number} (the solver said "{said}") before the solver\'s required write '
                f'"{write.tool}" (call {write.call_id}). A rule may end the conversation only '
                "once the work it waits for is done; narrow its keywords or move it later.",
            )
            break
