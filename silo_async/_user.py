"""Users in the loop (docs/users.md): the simulator protocol, its values and the scripted user.

A conversational task's agent speaks through the reserved tool ``message_user``; each call is a
*turn*: the rollout core hands the agent's text to a :class:`User` as a :class:`UserTurn`, and
the user's :class:`UserReply` is what the agent reads back. A user may act on the world during
its turn with the tools the task gives it (``turn.call_tool``).

:class:`ScriptedUser` plays the task's ``script``: the first rule whose keywords all occur in
the agent's text answers (a ``once`` rule only the first time), else ``otherwise``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from ._jsonutil import clone_json
from ._schema import Invalid
from ._task import Task
from ._taskuser import MESSAGE_USER, Rule, UserScript
from ._tools import Tool, ToolResult, ToolSpec, tool

__all__ = [
    "MESSAGE_USER",
    "MESSAGE_USER_TOOL",
    "ScriptedUser",
    "User",
    "UserFactory",
    "UserReply",
    "UserTurn",
    "check_message",
]

_MESSAGE_USER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {
            "type": "string",
            "minLength": 1,
            "description": "What you say to the user.",
        },
    },
    "required": ["text"],
    "additionalProperties": False,
}


@tool(
    name=MESSAGE_USER,
    description=(
        "Send a message to the user you are helping and get their reply. Ask them for what "
        "only they know, tell them what you did, or ask them to act on their side. The reply "
        'comes back as {"reply": ...}, with "ended": true once the user has ended the '
        "conversation."
    ),
    input_schema=_MESSAGE_USER_SCHEMA,
)
def _message_user(state: Any, input: dict[str, Any]) -> Any:
    return input["text"]


#: The reserved tool, as listed last in ``ctx.tools`` of a conversational task.
MESSAGE_USER_TOOL: Tool = _message_user


def check_message(input: Any) -> str | ToolResult:
    """The agent's text, or the ``invalid_input`` value a malformed ``message_user`` gets."""
    if type(input) is dict and len(input) == 1:  # the common case, without the validator
        text = input.get("text")
        if type(text) is str and text:
            return text
    # The tool's own check, with the same messages as any tool's.
    checked = _message_user.check({} if input is None else input)
    if isinstance(checked, Invalid):
        return _message_user.invalid(checked)
    return str(checked["text"])


@attrs.frozen
class UserReply:
    """What a user answers to one turn.

    Attributes:
        text: the reply the agent reads.
        ended: the user ends the conversation with this reply.
        input_tokens: for a model user, the input tokens this reply cost (``None``: not a
            model, or not reported); counted apart from the agent's, never against its limit.
        output_tokens: the same for output tokens.
    """

    text: str
    ended: bool = False
    input_tokens: int | None = attrs.field(default=None, kw_only=True)
    output_tokens: int | None = attrs.field(default=None, kw_only=True)


class UserTurn:
    """One turn as the user sees it: the agent's message and the conversation before it.

    Attributes:
        text: what the agent said (``message_user``'s ``text``); empty when the user is asked
            for its first message (``number`` 0).
        task: the task being played.
        number: the turn's number, 1-based; 0 asks the user for its first message, when the
            task gives no ``opening`` (a model user writes one; the user may act first).
        tools: the user's own tools (the task's ``user.tools``), as :class:`ToolSpec`.
    """

    __slots__ = ("_call", "_turns", "number", "task", "text", "tools")

    def __init__(
        self,
        text: str,
        turns: Sequence[Mapping[str, Any]],
        task: Task,
        number: int,
        call: Callable[[str, Any], Awaitable[ToolResult]],
        tools: Sequence[ToolSpec] = (),
    ) -> None:
        self.text = text
        self.task = task
        self.number = number
        self.tools = tools
        self._turns = turns
        self._call = call

    @property
    def conversation(self) -> tuple[dict[str, Any], ...]:
        """The turns before this one, ``{"agentText", "reply", "ended"}`` each, in order.

        Copied when read (a scripted user never reads it: its turns cost the same at the
        thirtieth turn as at the first).
        """
        return tuple(dict(turn) for turn in self._turns[: max(self.number - 1, 0)])

    async def call_tool(self, name: str, input: dict[str, Any] | None = None) -> ToolResult:
        """Call one of the user's own tools (the task's ``user.tools``) on the rollout's world.

        Validated, traced (``"actor": "user"``) and counted in ``userToolCalls`` like any
        call, never in the agent's ``toolCalls`` or limits; rejected calls come back as values.
        """
        return await self._call(name, input)


@runtime_checkable
class User(Protocol):
    """A simulated user: answers each turn of the agent (docs/users.md).

    ``run``, ``run_many``, ``evaluate`` and ``episode`` take ``user=``, a function of the task
    returning a fresh ``User`` for each rollout (default: :meth:`ScriptedUser.from_task`).
    """

    async def reply(self, turn: UserTurn) -> UserReply:
        """The user's reply to ``turn``."""
        ...


#: ``user=``: makes the fresh user of one rollout of a task.
UserFactory = Callable[[Task], User]


class ScriptedUser:
    """A user that plays a task's script: deterministic, offline, instant.

    Rules are tried in order; a rule matches when every keyword of its ``when`` occurs in the
    agent's text (substrings, case-insensitive; no keyword matches anything), and a ``once``
    rule matches only the first time. The first match runs its ``do`` actions with the user's
    tools, then answers ``say`` (ending the conversation when ``end``). When no rule matches,
    ``otherwise`` answers (by default ``"I don't know."``).

    Args:
        script: the compiled script (a task's :attr:`~silo_async.Task.user_script`).
    """

    __slots__ = ("_fired", "_plan", "_replies", "script")

    def __init__(self, script: UserScript) -> None:
        self.script = script
        self._fired: set[int] = set()
        self._plan = tuple((rule.when, rule.once) for rule in script.rules)
        # Replies are values: each rule's is made once, not once per turn.
        self._replies = [UserReply(r.say, r.end) for r in (*script.rules, script.otherwise)]

    @classmethod
    def from_task(cls, task: Task) -> ScriptedUser:
        """The scripted user of ``task`` (the default ``user=``).

        Raises:
            ValueError: the task has no user.
        """
        script = task.user_script
        if script is None:
            raise ValueError(f'Task "{task.id}" has no user to play.')
        return cls(script)

    def __repr__(self) -> str:
        return f"ScriptedUser({len(self.script.rules)} rules)"

    def match(self, text: str) -> Rule:
        """The rule that answers ``text`` (a ``once`` rule matched here is spent)."""
        index = self._pick(text)
        rules = self.script.rules
        return rules[index] if index < len(rules) else self.script.otherwise

    def _pick(self, text: str) -> int:
        """The index of the rule that answers ``text``; ``len(rules)`` for ``otherwise``."""
        folded = text.casefold()
        fired = self._fired
        index = 0
        for when, once in self._plan:  # Rule.matches, inlined: a turn costs a few tests
            for keyword in when:
                if keyword not in folded:
                    break
            else:
                if not once:
                    return index
                if index not in fired:
                    fired.add(index)
                    return index
            index += 1
        return index

    async def reply(self, turn: UserTurn) -> UserReply:
        """Run the matching rule's actions, then answer its ``say``."""
        index = self._pick(turn.text)
        rules = self.script.rules
        rule = rules[index] if index < len(rules) else self.script.otherwise
        for name, input in rule.do:
            await turn.call_tool(name, clone_json(input))
        return self._replies[index]
