"""The conversation of one rollout: ``message_user`` turns and the user's own tool calls.

A conversational task's rollout holds one :class:`Conversation`. :meth:`Rollout.call` hands it
every ``message_user`` call: a *turn*, not a world tool call — never counted in
``toolCalls`` nor refused by ``max_tool_calls``, counted in ``userTurns`` and limited by the
user's ``maxTurns`` (the turn beyond it is ``limit_exceeded`` and nothing is said; the
conversation is then over and later turns are ``invalid_state``; the rollout goes on).

During a turn the user may call its own tools (``user.tools``): a sibling of the agent's call
path that runs the same validation on the same world, traced as ``tool_call``/``tool_result``
with ``"actor": "user"`` and counted in ``userToolCalls``, never in the agent's counters or
limits. Each answered turn is a ``user_turn`` trace event ``{agentText, reply, ended,
actions}``; a user that raises is an environment fault (``internal_error`` to the agent, a
``user_fault`` event, counted in ``toolFaults``).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from ._end import Refusal, leaf_exception
from ._ledger import Ledger
from ._task import Task
from ._taskuser import UserScript
from ._tools import BoundTool, ToolFault, ToolResult
from ._trace import TraceRecorder
from ._user import User, UserReply, UserTurn, check_message

__all__ = ["Conversation", "RolloutPort", "split_tools"]

#: Why the conversation is over, as later turns are told.
_ENDED = "the user ended the conversation"
_TURN_LIMIT = "the user's turn limit was reached"


def _error(code: str, message: str) -> ToolResult:
    return ToolResult({"code": code, "message": message}, is_error=True)


def split_tools(
    by_name: dict[str, BoundTool], owned: Sequence[str]
) -> tuple[dict[str, BoundTool], dict[str, BoundTool]]:
    """The agent's tools and the user's, each by name (in registry order).

    The user's tools (``user.tools``) are taken out of the agent's: an agent naming one gets
    ``tool_not_found``. A name of ``user.tools`` the environment lacks is left out (``env
    validate`` reports it; the user calling it gets ``tool_not_found``).
    """
    mine = set(owned)
    agent = {name: t for name, t in by_name.items() if name not in mine}
    return agent, {name: by_name[name] for name in owned if name in by_name}


@attrs.frozen
class RolloutPort:
    """All a conversation may use of its rollout (the rollout hands it over; nothing else).

    Attributes:
        task: the rollout's task.
        ledger: the rollout's counters (the user's turns, calls, tokens and faults).
        trace: the rollout's trace.
        checkpoint: the event loop's checkpoint (every call of the user's tools is one).
        ended: the end's reason once the rollout has ended, else ``None``.
        awaited: for an episode, awaits a call as the rollout's end may cut it short
            (``Refusal.CUT``); ``None`` for a run, whose agent scope does that itself.
    """

    task: Task
    ledger: Ledger
    trace: TraceRecorder
    checkpoint: Callable[[], Awaitable[None]]
    ended: Callable[[], str | None]
    awaited: Callable[[Awaitable[Any]], Awaitable[Any]] | None


class Conversation:
    """The turns of one rollout's user, and the user's own tool calls.

    Args:
        user: the rollout's fresh simulator.
        script: the task's user (for ``maxTurns`` and the user's tools).
        user_tools: the user's tools by name, bound to the rollout's world.
        rollout: what the conversation may use of its rollout.
    """

    __slots__ = (
        "_actions",
        "_busy",
        "_rollout",
        "_specs",
        "over",
        "script",
        "turns",
        "user",
        "user_tools",
    )

    def __init__(
        self, user: User, script: UserScript, user_tools: dict[str, BoundTool], rollout: RolloutPort
    ) -> None:
        self._rollout = rollout
        self.user = user
        self.script = script
        self.user_tools = user_tools
        self._specs = tuple(t.spec for t in user_tools.values())
        self.turns: list[dict[str, Any]] = []
        #: Why the conversation is over (``None``: it is not).
        self.over: str | None = None
        self._actions: list[dict[str, Any]] = []
        self._busy = False

    def record(self) -> tuple[dict[str, Any], ...]:
        """The turns so far, ``{"agentText", "reply", "ended"}`` each, as fresh copies."""
        return tuple(dict(turn) for turn in self.turns)

    async def turn(self, input: Any) -> ToolResult | None:
        """One ``message_user`` call; ``None`` when the rollout's end cut it short.

        The checkpoint, and the refusal of a turn after the rollout's end or a limit, are the
        caller's (:meth:`Rollout.call`). The user is awaited right here, not through helper
        coroutines: a scripted turn must cost no more than a tool call.
        """
        text = check_message(input)
        if not isinstance(text, str):
            return text
        if self.over is not None or self._busy or len(self.turns) >= self.script.max_turns:
            return self._refused()
        self._busy = True
        self._actions = []
        rollout = self._rollout
        turn = UserTurn(text, self.turns, rollout.task, len(self.turns) + 1, self.call, self._specs)
        try:
            if rollout.awaited is None:
                replied = await self.user.reply(turn)
            else:  # an episode: its end cuts a turn in flight short
                replied = await rollout.awaited(self.user.reply(turn))
                if replied is Refusal.CUT:
                    return None
            return self._said(text, _as_reply(replied))
        except Exception as exc:  # the user simulator broke (or returned no reply)
            return self._fault(text, exc)
        finally:
            self._busy = False

    async def open(self) -> str | None:
        """The first message of a user whose task gives no ``opening``: the user writes it.

        The user is asked with turn number 0 and an empty ``text`` (nothing was said to it
        yet); it may use its own tools first, as in any turn. The message is recorded as a
        ``user_opening`` event ``{text, ended, actions[, usage]}``, never as a turn (the agent
        said nothing). ``None`` when the user could not write one (the event's ``text`` is then
        null and its ``error`` says why; an environment fault, counted in ``toolFaults``) or
        the rollout's end cut it short.
        """
        self._busy = True
        self._actions = []
        rollout = self._rollout
        turn = UserTurn("", self.turns, rollout.task, 0, self.call, self._specs)
        try:
            if rollout.awaited is None:
                replied = await self.user.reply(turn)
            else:
                replied = await rollout.awaited(self.user.reply(turn))
                if replied is Refusal.CUT:
                    return None
            reply = _as_reply(replied)
        except Exception as exc:  # no first message: the environment's fault, recorded
            rollout.ledger.faults += 1
            fault = _fault_of(exc).to_dict()
            event = {"text": None, "ended": False, "actions": self._actions, "error": fault}
            rollout.trace.emit("user_opening", event)
            return None
        finally:
            self._busy = False
        fields: dict[str, Any] = {"text": reply.text, "ended": reply.ended}
        fields["actions"] = self._actions
        if reply.input_tokens is not None or reply.output_tokens is not None:
            rollout.ledger.count_user_usage(reply.input_tokens, reply.output_tokens)
            fields["usage"] = {
                "inputTokens": reply.input_tokens or 0,
                "outputTokens": reply.output_tokens or 0,
            }
        rollout.trace.emit("user_opening", fields)
        if reply.ended:
            self.over = _ENDED
        return reply.text

    def _refused(self) -> ToolResult:
        """Why no turn may be taken now: the conversation is over, busy, or at its limit."""
        if self.over is not None:
            return _error("invalid_state", f"The conversation is over ({self.over}).")
        # One turn at a time (a flag, not a lock: a lock's checkpoints would double a turn's
        # cost): a message sent while the user is still answering the last one is refused.
        if self._busy:
            return _error(
                "conflict", "The user is still answering your previous message; wait for it."
            )
        limit = self.script.max_turns
        self.over = _TURN_LIMIT
        return _error(
            "limit_exceeded",
            f"The user's turn limit is reached ({limit} turns): nothing was said, and the "
            "conversation is over.",
        )

    def _said(self, text: str, reply: UserReply) -> ToolResult:
        """Count, remember and trace an answered turn; what the agent reads back."""
        ledger = self._rollout.ledger
        ledger.user_turns += 1
        said, ended = reply.text, reply.ended
        self.turns.append({"agentText": text, "reply": said, "ended": ended})
        usage = None
        if reply.input_tokens is not None or reply.output_tokens is not None:
            ledger.count_user_usage(reply.input_tokens, reply.output_tokens)
            usage = {
                "inputTokens": reply.input_tokens or 0,
                "outputTokens": reply.output_tokens or 0,
            }
        self._rollout.trace.user_turn(text, said, ended, self._actions, usage)
        if ended:
            self.over = _ENDED
            return ToolResult({"reply": said, "ended": True})
        return ToolResult({"reply": said})

    def _fault(self, text: str, exc: Exception) -> ToolResult:
        """A user that raised: the environment's fault, recorded; the agent gets a value."""
        fault = _fault_of(exc)
        self._rollout.ledger.faults += 1
        self._rollout.trace.emit(
            "user_fault", {"agentText": text, "actions": self._actions, "error": fault.to_dict()}
        )
        return _error(
            "internal_error", f"The user could not answer ({fault.type}: {fault.message})."
        )

    async def call(self, name: str, input: Any) -> ToolResult:
        """One call of the user's own tools (``UserTurn.call_tool``): the sibling call path.

        Same check and world as the agent's calls, traced with ``"actor": "user"``, counted in
        ``userToolCalls``; never the agent's ``toolCalls`` or limits.
        """
        rollout = self._rollout
        await rollout.checkpoint()
        reason = rollout.ended()
        if reason is not None:
            return _error("invalid_state", f"The rollout has ended ({reason}).")
        ledger = rollout.ledger
        ledger.user_calls += 1
        call_id = f"u{ledger.user_calls}"
        trace = rollout.trace
        trace.actor_call("user", call_id, name, input)
        started = time.perf_counter()
        found = self.user_tools.get(name)
        if found is None:
            result, fault = self._unknown(name), None
        else:
            result, fault = await found.invoke(input)
        if fault is not None:
            ledger.faults += 1
        trace.actor_result("user", call_id, name, result, time.perf_counter() - started, fault)
        self._actions.append({"callId": call_id, "tool": name, "isError": result.is_error})
        return result

    def _unknown(self, name: str) -> ToolResult:
        owned = list(self.user_tools)
        listed = ", ".join(owned) if owned else "none"
        return ToolResult(
            {
                "code": "tool_not_found",
                "message": f'Unknown tool "{name}": the user\'s tools are {listed}.',
                "details": {"tool": name, "suggestions": owned},
            },
            is_error=True,
        )


def _fault_of(exc: Exception) -> ToolFault:
    """A user's exception as the fault the trace records."""
    leaf = leaf_exception(exc)
    return ToolFault(
        type=type(leaf).__name__,
        message=str(leaf),
        traceback="".join(traceback.format_exception(exc)),
    )


def _as_reply(value: Any) -> UserReply:
    """A user's answer as a :class:`UserReply` (a plain ``str`` is accepted too)."""
    if isinstance(value, UserReply):
        if not isinstance(value.text, str):
            raise TypeError(f"UserReply.text must be a str, got {type(value.text).__name__}.")
        return value
    if isinstance(value, str):
        return UserReply(value)
    raise TypeError(
        "A user's reply() must return silo.UserReply(text, ended=False), got "
        f"{type(value).__name__}."
    )
