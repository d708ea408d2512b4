"""Task families: tasks generated from the world, each graded against its gold solution.

A :class:`TaskFamily` samples what to ask from a world (``sample(world, rng) -> params``), words
the instruction from the params and states the gold solution as tool calls (:class:`Call`). Its
instances are task ids ``FAMILY#SEED`` (docs/task-families.md); this module holds the definitions
and the pure rules about them — the id grammar, the params' JSON check and canonical form, and
the split an instance belongs to. Building an instance and grading it live in ``_instance.py``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ._errors import DefinitionError, SiloError
from ._jsonutil import clone_json

if TYPE_CHECKING:
    from ._task import Task

__all__ = [
    "SPLITS",
    "Call",
    "NoInstance",
    "TaskFamily",
    "canonical_params",
    "check_params",
    "parse_instance_id",
    "split_of",
    "split_of_params",
]

#: The two splits an instance can be in.
SPLITS = ("train", "test")

_FAMILY_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_SEED = re.compile(r"^(?:0|[1-9][0-9]*)$")


class NoInstance(Exception):
    """Raised by a family's ``sample`` when the world offers no instance for this seed.

    The id is then ``task_not_found``, naming ``reason``; scans (eval, sample, validation)
    skip the seed.

    Args:
        reason: why there is none, e.g. ``"no open deal is past its close date"``.
    """

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


def _input_copy(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(
            f"silo.Call's input must be a JSON object (a dict); got {type(value).__name__}."
        )
    copied: dict[str, Any] = clone_json(dict(value))
    return copied


@attrs.frozen
class Call:
    """One tool call of a gold solution: a frozen ``(tool, input)`` pair.

    ``silo.Call("update_account", {"accountId": "ACC-001", "ownerId": "USR-004"})``; the input
    is copied, so the caller's dict may change later and the call may not. Unpacks as a pair:
    ``tool, input = call``.
    """

    tool: str = attrs.field(validator=attrs.validators.instance_of(str))
    input: dict[str, Any] = attrs.field(converter=_input_copy, hash=False)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.tool, self.input))

    def to_dict(self) -> dict[str, Any]:
        """``{"tool", "input"}``: how ``task show --json`` prints it."""
        return {"tool": self.tool, "input": clone_json(self.input)}


def _ignore_paths(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise DefinitionError(
            f"TaskFamily ignore must be a list of dotted paths such as "
            f'["auditLog", "opportunities.*.updatedAt"]; got {value!r:.80}.',
            {"ignore": repr(value)[:80]},
        )
    paths = tuple(value)
    for path in paths:
        if not isinstance(path, str) or not all(path.split(".")):
            raise DefinitionError(
                f"TaskFamily ignore path {path!r:.80} is not a dotted path: use names or '*' "
                'between dots, e.g. "auditLog.*.at".',
                {"path": repr(path)[:80]},
            )
    return paths


_CALLABLES = ("sample", "instruction", "gold")
_OPTIONAL_CALLABLES = ("answer", "user", "checks", "solve")


@attrs.frozen(kw_only=True, eq=False)
class TaskFamily:
    """A family of tasks: each seed gives an instance ``FAMILY#SEED`` graded against its gold.

    Attributes:
        id: lowercase letters, digits and ``-`` (``reassign-account``); unique in its
            environment, and the verifier id of its instances.
        title: the instances' title.
        sample: ``(world, rng: random.Random) -> params``, a dict of JSON values: what this
            instance asks, read from the (varied) world. Raises :class:`NoInstance` when the
            world offers none for this seed.
        instruction: ``(params) -> str``: the text the agent receives.
        gold: ``(params) -> list[Call]``: a solution through the environment's tools; the
            world it reaches is what the final world is graded against.
        difficulty: ``easy``, ``medium``, ``hard`` (default ``unspecified``).
        answer: optional ``(params) -> str``: a fact the agent's answer must state.
        user: optional ``(params) -> dict``: the instance's user (a task file's ``user``
            object, docs/users.md).
        checks: optional ``(final, initial, ctx, params) -> list[Check]``, added after the
            gold comparison.
        ignore: state paths the comparison leaves out on both sides: dotted, ``*`` matching
            any key or index (``"auditLog"``, ``"activities.*.subject"``).
        solve: optional ``async (ctx, params) -> output``: plays an instance as an agent
            would (:func:`silo_async.testing.gold_agent` uses it; conversational families
            need it, since their user acts only when asked).

    Raises:
        DefinitionError: a malformed id, an empty title, a required function missing or a
            value that is not callable, or an ignore path that is not dotted.
    """

    id: str
    title: str
    sample: Callable[..., Any]
    instruction: Callable[[Mapping[str, Any]], str]
    gold: Callable[[Mapping[str, Any]], Sequence[Call]]
    difficulty: str = "unspecified"
    answer: Callable[[Mapping[str, Any]], str] | None = None
    user: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    checks: Callable[..., Any] | None = None
    ignore: tuple[str, ...] = attrs.field(default=(), converter=_ignore_paths)
    solve: Callable[..., Any] | None = None

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.id, str) or not _FAMILY_ID.match(self.id):
            raise DefinitionError(
                f"TaskFamily id {self.id!r:.80} must be lowercase letters, digits and '-' "
                '(e.g. "reassign-account").',
                {"family": repr(self.id)[:80]},
            )
        if not isinstance(self.title, str) or not self.title.strip():
            raise DefinitionError(
                f'TaskFamily "{self.id}" needs a non-empty title.', {"family": self.id}
            )
        if not isinstance(self.difficulty, str) or not self.difficulty.strip():
            raise DefinitionError(
                f'TaskFamily "{self.id}" difficulty must be a non-empty string such as "easy".',
                {"family": self.id},
            )
        for name in (*_CALLABLES, *_OPTIONAL_CALLABLES):
            value = getattr(self, name)
            if (value is not None or name in _CALLABLES) and not callable(value):
                raise DefinitionError(
                    f'TaskFamily "{self.id}" {name}= must be a function; got '
                    f"{type(value).__name__}.",
                    {"family": self.id, "field": name},
                )


def family_invalid(family: str, seed: int | None, message: str) -> SiloError:
    """``family_invalid`` naming the family (and the seed, when one is at fault)."""
    where = f'Task family "{family}"' + ("" if seed is None else f" (seed {seed})")
    return SiloError("family_invalid", f"{where} {message}", {"family": family, "seed": seed})


def parse_instance_id(task_id: str) -> tuple[str, int] | None:
    """``(family, seed)`` of ``FAMILY#SEED``, or ``None``.

    ``None`` when there is no ``#`` or the seed is not ``0`` or digits without a leading zero.
    """
    family, sep, seed = task_id.partition("#")
    if not sep or not _SEED.match(seed):
        return None
    return family, int(seed)


def _json_problem(value: Any, path: str, depth: int = 0) -> str | None:
    """Where ``value`` stops being plain JSON, or ``None``."""
    kind = type(value)
    if value is None or kind is str or kind is bool or kind is int:
        return None
    if kind is float:
        return None if math.isfinite(value) else f"{path} is {value!r}, not a JSON number"
    if depth > 64:
        return f"{path} nests too deeply"
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return f"{path} has the key {key!r}, not a string"
            found = _json_problem(item, f"{path}.{key}", depth + 1)
            if found is not None:
                return found
        return None
    if kind is list or kind is tuple:
        for index, item in enumerate(value):
            found = _json_problem(item, f"{path}[{index}]", depth + 1)
            if found is not None:
                return found
        return None
    return f"{path} is a {kind.__name__}, not a JSON value"


def check_params(family: str, seed: int, params: Any) -> dict[str, Any]:
    """``params`` as an instance keeps it (a private copy), once checked to be JSON values.

    Raises:
        SiloError: ``family_invalid`` naming the family, the seed and the value at fault.
    """
    if type(params) is not dict:
        raise family_invalid(
            family, seed, f"sample() returned a {type(params).__name__}; it must return a dict "
            "of JSON values (the instance's params).",
        )  # fmt: skip
    problem = _json_problem(params, "params")
    if problem is not None:
        raise family_invalid(
            family, seed, f"sample() returned params that are not JSON values: {problem}."
        )
    copied: dict[str, Any] = clone_json(params)
    return copied


def canonical_params(params: Mapping[str, Any]) -> bytes:
    """The params' canonical JSON: sorted keys, no spaces, UTF-8 (what a split hashes)."""
    text = json.dumps(dict(params), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def split_of_params(params: Mapping[str, Any]) -> str:
    """``test`` when the SHA-256 of the canonical params, as an integer, divides by 10."""
    digest = hashlib.sha256(canonical_params(params)).digest()
    return "test" if int.from_bytes(digest, "big") % 10 == 0 else "train"


def split_of(task: Task) -> str | None:
    """The split of an instance, ``"train"`` or ``"test"``, decided by its params' content.

    Two instances with the same params are in the same split, so the splits never share an
    instance. A hand-written task is in no split: ``None``.
    """
    params = task.params
    return None if params is None else split_of_params(params)
