"""Tasks: objectives only — an instruction, a title, the verifier that grades it, and a user.

A task may declare a ``user``: someone the agent must talk to, who knows what the
world does not expose and may act with tools of their own. Its checks live in ``_taskuser.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

import attrs

from ._errors import SiloError
from ._jsonutil import clone_json
from ._taskuser import UserScript, parse_user, task_prompt

__all__ = ["Task", "task_problems"]

T = TypeVar("T")

#: Required fields as (attribute, key on disk), in the order they are checked (Silo's order).
_REQUIRED = (
    ("id", "id"),
    ("title", "title"),
    ("instruction", "instruction"),
    ("verifier_id", "verifierId"),
)
_DIFFICULTY = "difficulty"
_USER = "user"
_KNOWN_KEYS = (*(key for _, key in _REQUIRED), _DIFFICULTY, _USER)


def _read_only(params: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """An instance's params as the task keeps them: a private copy, read-only."""
    if params is None:
        return None
    return MappingProxyType(clone_json(dict(params)))


@attrs.frozen(kw_only=False)
class Task:
    """One objective the agent must achieve. On disk: ``tasks/<id>.json`` in camelCase.

    Attributes:
        id: stable identifier such as ``"TASK-001"``.
        title: a short human label.
        instruction: the only text the agent receives (no solution path, no hidden answer).
        verifier_id: the id of the verifier that grades this task.
        difficulty: conventionally ``easy``, ``medium`` or ``hard``.
        user: the user the agent talks to, as the task file's ``user`` object (``None``: the
            agent works alone). Checked when the task is made (``task_invalid`` naming the
            field); kept as given.
        family: an instance's family id (``None`` on a hand-written task).
        seed: an instance's seed (``None`` on a hand-written task).
        params: an instance's params, read-only (``None`` on a hand-written task).

    Instances (``FAMILY#SEED``) are made by their environment (:meth:`Environment.task`);
    a hand-written task's id may not contain ``#`` (``task_invalid``).
    """

    id: str
    title: str
    instruction: str
    verifier_id: str
    difficulty: str = "unspecified"
    user: Mapping[str, Any] | None = attrs.field(default=None, hash=False)
    family: str | None = attrs.field(default=None, kw_only=True)
    seed: int | None = attrs.field(default=None, kw_only=True)
    params: Mapping[str, Any] | None = attrs.field(
        default=None, kw_only=True, hash=False, converter=_read_only
    )
    _script: UserScript | None = attrs.field(init=False, eq=False, hash=False, repr=False)
    _prompt: str = attrs.field(init=False, eq=False, hash=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.family is None and isinstance(self.id, str) and "#" in self.id:
            raise SiloError(
                "task_invalid",
                f'Task id "{self.id}" contains "#", which marks a task family\'s instance '
                "(FAMILY#SEED); rename the task without it.",
                {"source": f'Task "{self.id}"', "field": "id"},
            )
        script = None
        if self.user is not None:
            script = parse_user(self.user, f'Task "{self.id}"')
            # A private copy: the caller's dict may change later, the task may not.
            object.__setattr__(self, "user", clone_json(dict(self.user)))
        object.__setattr__(self, "_script", script)
        prompt = (
            task_prompt(self.instruction, script.opening)
            if script is not None and script.opening
            else self.instruction
        )
        object.__setattr__(self, "_prompt", prompt)

    @property
    def user_script(self) -> UserScript | None:
        """The task's user, checked and compiled (``None`` when the task has none)."""
        return self._script

    @property
    def prompt(self) -> str:
        """What the agent is given (``ctx.task``): the instruction, then the user's opening.

        Without a user it is the instruction itself; with one, the instruction, a blank line,
        then ``User: <opening>``. A user without an ``opening`` writes its first message when
        a rollout starts: until then (and here) the prompt is the instruction alone.
        """
        return self._prompt

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], *, source: str = "task", instance: bool = False
    ) -> Task:
        """Build a task from its JSON form (``verifierId``).

        Required values are kept as written; ``difficulty`` is trimmed, and absent, null or
        blank means ``"unspecified"``. Other keys are ignored, as Silo does: its task files
        carry extra keys (``entities``) and a file written by a newer version may carry more.
        A key that is only a misspelling of a known one (``verifier_id``, ``Difficulty``) is
        an error instead, since ignoring it would silently change the task.

        Args:
            data: the task's JSON object.
            source: how messages name the task, e.g. ``Task file "tasks/x.json"``.
            instance: also read an instance's ``family``, ``seed`` and ``params`` (what
                :meth:`to_dict` adds): for records of runs (``run.json``, ``summary.json``),
                never for task files.

        Raises:
            SiloError: ``task_invalid`` (details ``source`` and, for a field, ``field``) when
                ``data`` is not an object, a required field is absent, null or blank, a value
                has the wrong JSON type, a known key is misspelt, or the ``user`` object is
                malformed (the field names the part at fault: ``user.script[2].say``).
        """
        if not isinstance(data, Mapping):
            raise SiloError("task_invalid", f"{source} is not a JSON object.", {"source": source})
        problems: list[SiloError] = []
        fields: dict[str, Any] = {
            attr: _checked(problems, _required_string, data, key, source) for attr, key in _REQUIRED
        }
        difficulty = _checked(problems, _difficulty, data, source)
        if difficulty is not None:
            fields["difficulty"] = difficulty
        user = _checked(problems, _user, data, source)
        if user is not None:
            fields["user"] = user
        if problems:
            raise task_problems(problems, source)
        if instance and data.get("family") is not None:
            fields.update(_instance_fields(data, source))
        return cls(**fields)

    def to_dict(self) -> dict[str, Any]:
        """JSON form with Silo's keys, in Silo's order; ``user`` when the task has one.

        An instance adds ``family``, ``seed`` and ``params`` last.
        """
        data: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "instruction": self.instruction,
            "verifierId": self.verifier_id,
            "difficulty": self.difficulty,
        }
        if self.user is not None:
            data["user"] = clone_json(dict(self.user))
        if self.family is not None:
            data["family"] = self.family
            data["seed"] = self.seed
            data["params"] = None if self.params is None else clone_json(dict(self.params))
        return data


def _checked(problems: list[SiloError], check: Callable[..., T], *args: Any) -> T | None:
    """``check(*args)``, or None with its ``task_invalid`` appended to ``problems``."""
    try:
        return check(*args)
    except SiloError as exc:
        if exc.code != "task_invalid":
            raise
        problems.append(exc)
        return None


def task_problems(problems: Sequence[SiloError], source: str) -> SiloError:
    """One ``task_invalid`` naming every problem of one task (the first's ``field``).

    A single problem is that problem as it is; several read ``<source> has 3 problems: (1) it
    has "title" as a number; ... (2) it is missing ...``, and ``details["problems"]`` lists
    each one's ``field`` and ``message``.
    """
    if len(problems) == 1:
        return problems[0]
    listed = [{"field": p.details.get("field"), "message": p.message} for p in problems]
    parts = [f"({i}) it {p.message.removeprefix(f'{source} ')}" for i, p in enumerate(problems, 1)]
    return SiloError(
        "task_invalid",
        f"{source} has {len(problems)} problems: {' '.join(parts)}",
        {"source": source, "field": listed[0]["field"], "problems": listed},
    )


def _instance_fields(data: Mapping[str, Any], source: str) -> dict[str, Any]:
    """``family``, ``seed`` and ``params`` of an instance's JSON form, checked."""
    family, seed, params = data.get("family"), data.get("seed"), data.get("params")
    if not isinstance(family, str) or not family:
        raise _invalid(source, "family", 'has a "family" that is not a family id.')
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise _invalid(source, "seed", 'has a "seed" that is not a whole number >= 0.')
    if not isinstance(params, Mapping):
        raise _invalid(source, "params", 'has "params" that are not an object.')
    return {"family": family, "seed": seed, "params": params}


def _invalid(source: str, key: str, message: str) -> SiloError:
    return SiloError("task_invalid", f"{source} {message}", {"source": source, "field": key})


def _required_string(data: Mapping[str, Any], key: str, source: str) -> str:
    if key not in data:
        near = _misspelling(data, key)
        if near is not None:
            raise _invalid(
                source, key, f'is missing "{key}" (found "{near}"; spell the key "{key}").'
            )
    value = data.get(key)
    if isinstance(value, str) and value.strip():
        return value
    if value is None or isinstance(value, str):
        # Absent, null and blank all mean "not given": Silo's wording.
        raise _invalid(source, key, f'is missing a non-empty "{key}".')
    raise _invalid(
        source, key, f'has "{key}" as {_json_type(value)}; it must be a non-empty string.'
    )


def _difficulty(data: Mapping[str, Any], source: str) -> str | None:
    """The trimmed difficulty, or None for the default."""
    if _DIFFICULTY not in data:
        near = _misspelling(data, _DIFFICULTY)
        if near is not None:
            raise _invalid(source, _DIFFICULTY, f'has "{near}"; spell the key "{_DIFFICULTY}".')
        return None
    value = data[_DIFFICULTY]
    if value is None:
        return None
    if not isinstance(value, str):
        raise _invalid(
            source,
            _DIFFICULTY,
            f'has "{_DIFFICULTY}" as {_json_type(value)}; it must be a string such as "easy", '
            '"medium" or "hard" (leave it out for "unspecified").',
        )
    return value.strip() or None


def _user(data: Mapping[str, Any], source: str) -> Mapping[str, Any] | None:
    """The ``user`` object, checked (``task_invalid`` names the field); None when absent."""
    if _USER not in data:
        near = _misspelling(data, _USER)
        if near is not None:
            raise _invalid(source, _USER, f'has "{near}"; spell the key "{_USER}".')
        return None
    value = data[_USER]
    if value is None:
        return None
    parse_user(value, source)  # the messages name the task as the caller does
    return dict(value)


def _folded(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


def _misspelling(data: Mapping[str, Any], key: str) -> str | None:
    """A key of ``data`` that differs from ``key`` only in case, ``_`` or ``-``, if any."""
    for candidate in data:
        if (
            isinstance(candidate, str)
            and candidate not in _KNOWN_KEYS
            and _folded(candidate) == _folded(key)
        ):
            return candidate
    return None


def _json_type(value: object) -> str:
    """How a message names the type of a wrong value, in JSON's terms where it has one."""
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"
