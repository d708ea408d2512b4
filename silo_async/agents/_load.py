"""Agent resolution: turn an ``--agent`` spec into an ``async def agent(ctx)`` callable.

Specs:

* none: ``./silo_agent.py`` in the working directory (only that name);
* ``path.py``: the module's ``agent`` attribute;
* ``path.py:name``: another attribute of that file;
* ``package.module:name``: an importable module (``package.module`` alone means its ``agent``).

Files are imported by path under a private module name, so a file called ``my-agent.py`` works
and never shadows a real module. Every failure is an :class:`AgentLoadError` whose message names
the file or module and what was wrong with it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs

from .._errors import SiloError
from .._origin import remember

__all__ = [
    "DEFAULT_AGENT_FILE",
    "AgentLoadError",
    "LoadedAgent",
    "agent_from_spec",
    "is_async_callable",
    "load_agent",
]

#: The file used when no ``--agent`` is given.
DEFAULT_AGENT_FILE = "silo_agent.py"
_DEFAULT_ATTRIBUTE = "agent"


class AgentLoadError(SiloError):
    """The agent spec could not be turned into an async callable; ``str()`` says why.

    Args:
        message: what is wrong with the spec, and the fix.
        code: ``agent_not_found`` (no such file, module or attribute) or ``agent_invalid``
            (found, but not a usable ``async def agent(ctx)``), as the CLI prints it.
    """

    def __init__(self, message: str, code: str = "agent_invalid") -> None:
        super().__init__(code, message)


@attrs.frozen
class LoadedAgent:
    """A resolved agent.

    Attributes:
        fn: the ``async def agent(ctx)`` callable.
        label: how to name it in run records, e.g. ``silo_agent.py:agent`` or ``pkg.mod:solve``.
    """

    fn: Callable[..., Any]
    label: str


def is_async_callable(obj: object) -> bool:
    """True for an ``async def`` function (or partial), or an object with ``async def __call__``."""
    if inspect.iscoroutinefunction(obj):
        return True
    if inspect.isclass(obj) or not callable(obj):
        return False
    return inspect.iscoroutinefunction(type(obj).__call__)


def load_agent(spec: str | None, cwd: Path) -> LoadedAgent:
    """Resolve ``spec`` (the ``--agent`` value, or None) relative to ``cwd``.

    The agent is recorded as made from ``(spec, cwd)``, so an executor running rollouts in other
    processes sends that reference instead of the function (whose private module only this
    process can import).

    Raises:
        AgentLoadError: the file or module is missing or fails to import, the attribute is
            missing, it is not an async callable, or its signature cannot take the run context
            as its one positional argument.
    """
    loaded = _resolve(spec, cwd)
    remember(loaded.fn, agent_from_spec, spec, str(Path(cwd).absolute()))
    return loaded


def agent_from_spec(spec: str | None, cwd: str) -> Callable[..., Any]:
    """The agent callable ``spec`` names, resolved relative to ``cwd`` (a shipped reference)."""
    return load_agent(spec, Path(cwd)).fn


def _resolve(spec: str | None, cwd: Path) -> LoadedAgent:
    if spec is None:
        path = cwd / DEFAULT_AGENT_FILE
        if not path.is_file():
            raise AgentLoadError(
                f"No --agent given and ./{DEFAULT_AGENT_FILE} was not found in {cwd}. "
                f"Create {DEFAULT_AGENT_FILE} with `async def agent(ctx): ...`, pass "
                "--agent PATH.py, PATH.py:name or package.module:name, or use a model with "
                "--model PROVIDER/MODEL.",
                "agent_not_found",
            )
        return _from_file(path, _DEFAULT_ATTRIBUTE, DEFAULT_AGENT_FILE)
    spec = spec.strip()
    if not spec:
        raise AgentLoadError("--agent is empty; pass PATH.py, PATH.py:name or package.module:name.")
    target, attribute = _split(spec)
    if _looks_like_path(target, cwd):
        path = Path(target) if os.path.isabs(target) else cwd / target
        if not path.is_file():
            what = "is a directory, not a file" if path.is_dir() else "was not found"
            raise AgentLoadError(
                f'Agent file "{target}" {what} (looked at {path}).', "agent_not_found"
            )
        return _from_file(path, attribute, target)
    return _from_module(target, attribute, cwd)


def _split(spec: str) -> tuple[str, str]:
    # Split on the last colon only when what follows is an identifier, so a Windows drive
    # letter ("C:\agents\a.py") is never mistaken for an attribute.
    head, sep, tail = spec.rpartition(":")
    if sep and head and tail.isidentifier():
        return head, tail
    if sep and head and not tail:
        raise AgentLoadError(f'--agent "{spec}" ends with ":"; name the callable after it.')
    return spec, _DEFAULT_ATTRIBUTE


def _looks_like_path(target: str, cwd: Path) -> bool:
    if target.endswith(".py") or "/" in target or os.sep in target:
        return True
    if all(part.isidentifier() for part in target.split(".")):
        # A dotted name is a module unless a file of exactly that name sits in cwd.
        return (cwd / target).is_file()
    return True


def _from_file(path: Path, attribute: str, shown: str) -> LoadedAgent:
    path = path.resolve()
    digest = hashlib.sha1(str(path).encode(), usedforsecurity=False).hexdigest()[:12]
    module_name = f"_silo_agent_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise AgentLoadError(f'Agent file "{shown}" cannot be imported as Python ({path}).')
    module = importlib.util.module_from_spec(spec)
    # Registered before executing so dataclasses, pickling and typing.get_type_hints work; the
    # file's directory goes on sys.path so it can import its sibling helpers, as `python path.py`
    # would.
    sys.modules[module_name] = module
    _ensure_on_path(path.parent)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        raise AgentLoadError(f'Agent file "{shown}" has a syntax error: {_where(exc)}') from exc
    except Exception as exc:
        sys.modules.pop(module_name, None)
        raise AgentLoadError(
            f'Agent file "{shown}" failed to import: {type(exc).__name__}: {exc}'
        ) from exc
    fn = _pick(module, attribute, f'Agent file "{shown}"', shown)
    return LoadedAgent(fn, f"{shown}:{attribute}")


def _from_module(name: str, attribute: str, cwd: Path) -> LoadedAgent:
    # Like `python -m` and uvicorn: modules in the working directory are importable.
    _ensure_on_path(cwd)
    try:
        module = importlib.import_module(name)
    except SyntaxError as exc:
        raise AgentLoadError(f'Agent module "{name}" has a syntax error: {_where(exc)}') from exc
    except ModuleNotFoundError as exc:
        raise AgentLoadError(
            f'Agent module "{name}" could not be imported ({exc}); for a file, pass a path '
            'ending in ".py".',
            "agent_not_found",
        ) from exc
    except Exception as exc:
        raise AgentLoadError(
            f'Agent module "{name}" failed to import: {type(exc).__name__}: {exc}'
        ) from exc
    fn = _pick(module, attribute, f'Agent module "{name}"', name)
    return LoadedAgent(fn, f"{name}:{attribute}")


def _ensure_on_path(directory: Path) -> None:
    entry = str(directory.resolve())
    if entry not in sys.path:
        sys.path.insert(0, entry)


def _where(exc: SyntaxError) -> str:
    location = exc.filename or "<unknown>"
    if exc.lineno is not None:
        location = f"{location}:{exc.lineno}"
    return f"{location}: {exc.msg}"


def _pick(module: ModuleType, attribute: str, owner: str, shown: str) -> Callable[..., Any]:
    if not hasattr(module, attribute):
        raise AgentLoadError(
            f'{owner} has no "{attribute}". {_found(module, shown)}', "agent_not_found"
        )
    obj = getattr(module, attribute)
    where = f"{owner[0].lower()}{owner[1:]}"
    if is_async_callable(obj):
        _check_signature(obj, attribute, where)
        return obj  # type: ignore[no-any-return]
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        raise AgentLoadError(
            f'"{attribute}" in {where} is a plain function; an agent must be a coroutine '
            f"function: `async def {attribute}(ctx): ...`."
        )
    raise AgentLoadError(
        f'"{attribute}" in {where} is {_kind(obj)}, not an async function. {_found(module, shown)}'
    )


def _check_signature(fn: Any, attribute: str, where: str) -> None:
    """Refuse an agent that cannot be called as ``fn(ctx)``, before any rollout starts.

    Otherwise the mistake only shows up per rollout, as ``agent_error``, once the world is built.
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # some C-implemented callables have no signature: let the run decide
    if _binds_one_argument(signature):
        return
    params = list(signature.parameters.values())
    shown = signature.replace(
        parameters=[p.replace(annotation=p.empty) for p in params],
        return_annotation=signature.empty,
    )
    problem, hint = _signature_problem(params)
    fix = (
        f"async def {attribute}(ctx): ..."
        if inspect.iscoroutinefunction(fn)
        else "async def __call__(self, ctx): ..."
    )
    raise AgentLoadError(
        f'"{attribute}" in {where} is `{attribute}{shown}`, which {problem}; an agent is called '
        f"with one argument, its silo.AgentContext: write `{fix}`{hint}."
    )


def _binds_one_argument(signature: inspect.Signature) -> bool:
    try:
        signature.bind(None)
    except TypeError:
        return False
    return True


def _signature_problem(params: list[inspect.Parameter]) -> tuple[str, str]:
    """What keeps ``params`` from binding one positional argument, and a hint for the fix."""
    positional = (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.VAR_POSITIONAL,
    )
    first = next((p for p in params if p.kind in positional), None)
    if first is None:
        return ("takes no arguments" if not params else "takes no positional argument"), ""
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    required = [
        f'"{p.name}"'
        for p in params
        if p is not first and p.default is p.empty and p.kind not in variadic
    ]
    if not required:
        return "cannot be called with one argument", ""
    listed = required[0] if len(required) == 1 else f"{', '.join(required[:-1])} and {required[-1]}"
    return f"also requires {listed}", " (give any other parameter a default)"


def _found(module: ModuleType, shown: str) -> str:
    own = {
        name: value
        for name, value in vars(module).items()
        if not name.startswith("_") and _defined_in(value, module)
    }
    coroutines = [name for name, value in own.items() if is_async_callable(value)]
    if coroutines:
        return (
            f"Async functions found: {', '.join(coroutines)} "
            f"(pick one with --agent {shown}:{coroutines[0]})."
        )
    others = [f"{name} ({_kind(value)})" for name, value in own.items() if callable(value)]
    found = f" (found: {', '.join(others)})" if others else ""
    return f"It defines no async function{found}; write `async def agent(ctx): ...`."


def _kind(obj: object) -> str:
    if inspect.isclass(obj):
        return "a class"
    if inspect.isfunction(obj):
        return "a plain function"
    name = type(obj).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _defined_in(value: object, module: ModuleType) -> bool:
    # Only the module's own callables are worth suggesting; imported names are noise.
    if inspect.ismodule(value):
        return False
    return getattr(value, "__module__", None) == module.__name__
