"""A task's user: the ``user`` object of a task file, checked and compiled once.

A conversational task names a user the agent must talk to::

    "user": {
      "opening": "Hi, my phone has no signal since this morning.",
      "persona": "A patient customer who is not technical.",
      "knows": {"pin": "4921"},
      "script": [
        {"when": ["pin"], "say": "It is 4921."},
        {"when": ["restart"], "do": [{"tool": "restart_phone", "input": {}}],
         "say": "Done, it restarted.", "once": true},
        {"when": ["fixed"], "say": "It works now, thanks!", "end": true}
      ],
      "otherwise": {"say": "I don't know."},
      "tools": ["restart_phone"],
      "maxTurns": 30
    }

:func:`parse_user` checks that object field by field (a mistake is ``task_invalid`` naming
the field, ``user.script[1].do[0].tool``) and compiles it into a :class:`UserScript`: keywords
folded once, so matching a turn costs a few substring tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ._errors import SiloError
from ._jsonutil import clone_json
from ._schema import json_kind

__all__ = [
    "DEFAULT_MAX_TURNS",
    "DEFAULT_OTHERWISE",
    "MESSAGE_USER",
    "Rule",
    "UserScript",
    "parse_user",
    "task_prompt",
]

#: The reserved tool through which the agent speaks to the user.
MESSAGE_USER = "message_user"
#: Turns a user answers when the task does not say (``maxTurns``).
DEFAULT_MAX_TURNS = 30
#: What a scripted user says when no rule matches and the task has no ``otherwise``.
DEFAULT_OTHERWISE = "I don't know."

_USER_KEYS = ("opening", "persona", "knows", "script", "otherwise", "tools", "maxTurns")
_RULE_KEYS = ("when", "say", "do", "end", "once")
_OTHERWISE_KEYS = ("say", "do", "end")
_ACTION_KEYS = ("tool", "input")


@attrs.frozen
class Rule:
    """One compiled rule of a script (or the script's ``otherwise``).

    Attributes:
        label: how findings name it: ``script[2]`` or ``otherwise``.
        when: the keywords, case-folded; the rule matches a text containing every one.
        say: the reply.
        do: the user's tool calls, as ``(tool, input)`` pairs, in order.
        end: the reply ends the conversation.
        once: the rule matches only the first time.
    """

    label: str
    when: tuple[str, ...] = ()
    say: str = ""
    do: tuple[tuple[str, Any], ...] = ()
    end: bool = False
    once: bool = False

    def matches(self, folded: str) -> bool:
        """Whether every keyword occurs in ``folded`` (a case-folded text)."""
        for keyword in self.when:  # noqa: SIM110 - a loop: all() of a generator costs 3x
            if keyword not in folded:
                return False
        return True


@attrs.frozen
class UserScript:
    """A task's user, checked and compiled.

    Attributes:
        opening: the user's first message (``""``: none is given, the user writes it when the
            rollout starts, as a model user does).
        persona: who the user is (for a model user's prompt).
        knows: facts only the user holds (for a model user's prompt).
        rules: the script's rules, in order.
        otherwise: the rule played when none matches.
        tools: the tools of the environment's registry that belong to the user.
        max_turns: the turns the user answers; the one beyond is ``limit_exceeded``.
    """

    opening: str
    persona: str
    knows: Mapping[str, Any]
    rules: tuple[Rule, ...]
    otherwise: Rule
    tools: tuple[str, ...]
    max_turns: int


def task_prompt(instruction: str, opening: str) -> str:
    """What the agent is given: the instruction, a blank line, then ``User: <opening>``."""
    return f"{instruction}\n\nUser: {opening}"


class _Reader:
    """Reads one ``user`` object, raising ``task_invalid`` that names the field at fault."""

    def __init__(self, source: str) -> None:
        self.source = source

    def invalid(self, field: str, message: str) -> SiloError:
        return SiloError(
            "task_invalid",
            f'{self.source} has an invalid "{field}": {message}',
            {"source": self.source, "field": field},
        )

    def object(self, value: Any, field: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.invalid(field, f"it must be an object, not {_json_type(value)}.")
        for key in value:
            if key not in keys:
                known = ", ".join(keys)
                raise self.invalid(
                    f"{field}.{key}", f"it is not a key of {field} (expected one of: {known})."
                )
        return value

    def string(self, value: Any, field: str, *, required: bool = False) -> str:
        if value is None and not required:
            return ""
        if not isinstance(value, str):
            raise self.invalid(field, f"it must be a string, not {_json_type(value)}.")
        if required and not value.strip():
            raise self.invalid(field, "it must be a non-empty string.")
        return value

    def flag(self, value: Any, field: str) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self.invalid(field, f"it must be true or false, not {_json_type(value)}.")
        return value

    def names(self, value: Any, field: str) -> tuple[str, ...]:
        """A list of non-empty strings (``None``: empty)."""
        if value is None:
            return ()
        if not isinstance(value, list | tuple):
            raise self.invalid(field, f"it must be an array of strings, not {_json_type(value)}.")
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                raise self.invalid(f"{field}[{index}]", "it must be a non-empty string.")
        return tuple(value)

    def actions(
        self, value: Any, field: str, tools: tuple[str, ...]
    ) -> tuple[tuple[str, Any], ...]:
        if value is None:
            return ()
        if not isinstance(value, list | tuple):
            raise self.invalid(field, f"it must be an array of actions, not {_json_type(value)}.")
        actions = []
        for index, item in enumerate(value):
            where = f"{field}[{index}]"
            action = self.object(item, where, _ACTION_KEYS)
            tool = self.string(action.get("tool"), f"{where}.tool", required=True)
            if tool not in tools:
                owned = ", ".join(tools) or "none"
                raise self.invalid(
                    f"{where}.tool",
                    f'"{tool}" is not one of the user\'s tools (user.tools: {owned}); a user acts '
                    "only with the tools the task gives them.",
                )
            given = action.get("input")
            given = {} if given is None else given
            if not isinstance(given, Mapping):
                raise self.invalid(
                    f"{where}.input", f"it must be an object, not {_json_type(given)}."
                )
            actions.append((tool, clone_json(given)))
        return tuple(actions)

    def rule(self, value: Any, field: str, tools: tuple[str, ...], keys: tuple[str, ...]) -> Rule:
        data = self.object(value, field, keys)
        when = self.names(data.get("when"), f"{field}.when")
        return Rule(
            label=field.removeprefix("user."),
            when=tuple(k.casefold() for k in when),
            say=self.string(data.get("say"), f"{field}.say"),
            do=self.actions(data.get("do"), f"{field}.do", tools),
            end=self.flag(data.get("end"), f"{field}.end"),
            once=self.flag(data.get("once"), f"{field}.once"),
        )

    def max_turns(self, value: Any) -> int:
        if value is None:
            return DEFAULT_MAX_TURNS
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.invalid("user.maxTurns", f"it must be an integer >= 1, not {value!r}.")
        return value

    def tools(self, value: Any) -> tuple[str, ...]:
        tools = self.names(value, "user.tools")
        for index, name in enumerate(tools):
            if name == MESSAGE_USER:
                raise self.invalid(
                    f"user.tools[{index}]",
                    f'"{MESSAGE_USER}" is the agent\'s reserved tool, not a tool of the user.',
                )
            if name in tools[:index]:
                raise self.invalid(f"user.tools[{index}]", f'"{name}" is listed twice.')
        return tools


def parse_user(value: Any, source: str = "Task") -> UserScript:
    """Check a task's ``user`` object and compile it.

    Args:
        value: the ``user`` object (a mapping).
        source: how messages name the task, e.g. ``Task file "tasks/x.json"``.

    Returns:
        The compiled :class:`UserScript`.

    Raises:
        SiloError: ``task_invalid`` naming the field at fault (details ``source``, ``field``).
    """
    read = _Reader(source)
    data = read.object(value, "user", _USER_KEYS)
    opening = data.get("opening")  # absent or null: the user writes its first message itself
    opening = "" if opening is None else read.string(opening, "user.opening", required=True)
    persona = read.string(data.get("persona"), "user.persona")
    tools = read.tools(data.get("tools"))
    knows = data.get("knows")
    knows = {} if knows is None else knows
    if not isinstance(knows, Mapping):
        raise read.invalid("user.knows", f"it must be an object, not {_json_type(knows)}.")
    script = data.get("script")
    script = [] if script is None else script
    if not isinstance(script, list | tuple):
        raise read.invalid(
            "user.script", f"it must be an array of rules, not {_json_type(script)}."
        )
    rules = tuple(
        read.rule(item, f"user.script[{index}]", tools, _RULE_KEYS)
        for index, item in enumerate(script)
    )
    otherwise_value = data.get("otherwise")
    if otherwise_value is None:
        otherwise = Rule("otherwise", say=DEFAULT_OTHERWISE)
    else:
        otherwise = read.rule(otherwise_value, "user.otherwise", tools, _OTHERWISE_KEYS)
    return UserScript(
        opening=opening,
        persona=persona,
        knows=clone_json(dict(knows)),
        rules=rules,
        otherwise=otherwise,
        tools=tools,
        max_turns=read.max_turns(data.get("maxTurns")),
    )


def _json_type(value: object) -> str:
    """``null``, ``a string``, ``an object``...: the value's JSON kind, as a message says it."""
    kind = json_kind(value)
    if kind == "null":
        return kind
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
