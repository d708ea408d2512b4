"""What the plan ran, as digests: a resume refuses to grade by anything else.

``eval.json`` records, when the eval starts, a SHA-256 of:

* every task of the plan: its JSON form (``Task.to_dict()``: instruction, verifier id, user...);
* every verifier those tasks name: the source file of its function (the verifier with the
  constants and helpers beside it: a project has one module per verifier; a verifier whose
  source cannot be read is named by its module and qualified name); for a task family's
  instances, the family's own code (its module: gold calls, answer, checks) and ``vary``'s;
* the environment's data: the world ``create_state()`` builds, as JSON (its ``snapshot`` for
  a world that is not JSON) — the data files as the world reads them, for a project's
  environment as for one defined in code. ``null`` when the world has no JSON form.

A resume computes them again with the environment it was given or rebuilt; one that differs is
``resume_conflict`` naming the task, the verifier or the data: rollouts graded before and after
an edit would otherwise share one summary row. Digests are canonical JSON (sorted keys, no
spaces, UTF-8), so they are the same on any machine.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Sequence
from typing import Any

from .._environment import Environment
from .._errors import SiloError

__all__ = ["changed", "digests"]


def _sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _source(fn: Any) -> str:
    """The source file of ``fn``: the verifier and the constants and helpers beside it."""
    try:
        path = inspect.getsourcefile(inspect.unwrap(fn))
        if path is not None:
            with open(path, "rb") as file:
                return file.read().decode("utf-8", "backslashreplace")
    except (OSError, TypeError):  # built in a REPL, or not a function: its name is all we have
        pass
    return _name_of(fn)


#: What a family holds that decides its instances' grading, and the worlds they start from.
_FAMILY_PARTS = ("sample", "instruction", "gold", "answer", "user", "checks", "solve")


def _family_source(env: Environment, family_id: str) -> str:
    """What grades a family's instances: the source files of its functions and of ``vary``.

    A family's verifier is silo_async's own gold grading; what it grades by is the family's
    code (its gold calls, answer and checks, in the family's module) and the worlds ``vary``
    makes. Files each once, in the order first met; contents only, so the same on any machine.
    """
    family = env.family(family_id)
    parts = [getattr(family, name) for name in _FAMILY_PARTS] + [env.vary]
    texts: dict[str, str] = {}
    for fn in parts:
        if fn is not None:
            texts.setdefault(_file_of(fn), _source(fn))
    return "\n".join([*texts.values(), _canonical(list(family.ignore))])


def _file_of(fn: Any) -> str:
    try:
        return inspect.getsourcefile(inspect.unwrap(fn)) or _name_of(fn)
    except TypeError:
        return _name_of(fn)


def _name_of(fn: Any) -> str:
    """``module.qualname``; never a ``repr`` (it may hold an address, other in each process)."""
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{getattr(fn, '__module__', None) or type(fn).__module__}.{name}"


def _is_family(env: Environment, name: str) -> bool:
    try:
        env.family(name)
    except SiloError:
        return False
    return True


def _data(env: Environment) -> str | None:
    try:
        return _sha(_canonical(env.as_json(env.create_state())))
    except (TypeError, ValueError):  # a world without a JSON form: nothing to compare
        return None


def _of_tasks(env: Environment, task_ids: Sequence[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """Each task's digest (None: ``env`` has no such task) and each of their verifiers'."""
    tasks: dict[str, Any] = {}
    verifiers: dict[str, str] = {}
    for task_id in task_ids:
        try:
            task = env.task(task_id)
        except SiloError:  # gone
            tasks[task_id] = None
            continue
        tasks[task_id] = _sha(_canonical(task.to_dict()))
        try:
            verifier = env.verifier_for(task)
        except SiloError:  # the verifier it names is gone (renamed): named as the verifier's
            continue
        if verifier.id in verifiers:
            continue
        if task.family is not None and verifier.id == task.family:  # its family's gold grading
            source = _family_source(env, task.family)
        else:
            source = _source(verifier.fn)
        verifiers[verifier.id] = _sha(source)
    return tasks, verifiers


def digests(env: Environment, task_ids: Sequence[str]) -> dict[str, Any]:
    """``eval.json``'s ``digests`` for the plan's tasks of ``env`` (blocking: builds one world)."""
    tasks, verifiers = _of_tasks(env, task_ids)
    return {"tasks": tasks, "verifiers": verifiers, "data": _data(env)}


def changed(recorded: dict[str, Any], env: Environment, task_ids: Sequence[str]) -> str | None:
    """What differs between the ``recorded`` digests and ``env`` now, in words (None: nothing).

    A task or verifier that is gone counts as changed.
    """
    tasks, verifiers = _of_tasks(env, task_ids)
    for kind, now, noun in (("tasks", tasks, "task"), ("verifiers", verifiers, "verifier")):
        for name, digest in (recorded.get(kind) or {}).items():
            if now.get(name) != digest:
                if kind == "verifiers" and _is_family(env, name):
                    return f'task family "{name}" (its code, or vary\'s)'
                return f'{noun} "{name}"'
    if recorded.get("data") is not None and _data(env) != recorded["data"]:
        return f'the data of environment "{env.name}"'
    return None
