"""Create environments from templates, and scaffold tool and verifier modules.

Environment creation is atomic: the template is copied into a hidden staging directory next to
the destination and moved into place with one rename; on any failure the staging directory is
removed. Nothing is ever overwritten or merged.
"""

from __future__ import annotations

import ast
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from .._errors import SiloError
from .._version import __version__
from ._files import (
    environments_dir,
    list_environment_names,
    remove_gitkeep,
    to_json_text,
    write_text,
)
from ._manifest import DEFAULT_ENTRYPOINT, MANIFEST_FILE, Manifest
from ._names import (
    check_environment_name,
    check_identifier,
    check_safe_name,
    python_identifier,
    suggest_free_name,
)
from ._registry import register
from ._stubs import tool_stub, verifier_stub
from ._templates import template_dir

__all__ = [
    "ScaffoldResult",
    "copy_template",
    "create_environment",
    "detect_state_type",
    "scaffold_tool",
    "scaffold_verifier",
]

_SKIP = {"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}


@attrs.frozen
class ScaffoldResult:
    """What a scaffold created.

    Attributes:
        created: the new module, relative to the environment (``tools/get_profit.py``).
        registered_in: the registry it was added to (``tools/__init__.py``).
        identifier: the Python name bound in the registry.
    """

    created: str
    registered_in: str
    identifier: str

    def to_dict(self) -> dict[str, str]:
        """``{created, registeredIn, identifier}`` (Silo's keys)."""
        return {
            "created": self.created,
            "registeredIn": self.registered_in,
            "identifier": self.identifier,
        }


def copy_template(source: Path, destination: Path) -> None:
    """Copy a template tree into ``destination`` (which exists), skipping caches."""
    for entry in sorted(source.iterdir()):
        if entry.name in _SKIP or entry.suffix == ".pyc":
            continue
        target = destination / entry.name
        if entry.is_dir():
            target.mkdir()
            copy_template(entry, target)
        else:
            shutil.copyfile(entry, target)


def _already_exists(name: str, existing: Sequence[str], root: Path | None = None) -> SiloError:
    suggestion = suggest_free_name(name, existing)
    taken = _taken_as(name, root)
    # Names collide ignoring case: say which environment is in the way when it is spelled
    # differently, or "CRM1" already existing would make no sense next to "crm1".
    where = f' as "{taken}" (names are compared ignoring case)' if taken not in (None, name) else ""
    return SiloError(
        "environment_already_exists",
        f'Environment "{name}" already exists{where}. Try "{suggestion}".',
        {"name": name, "suggestion": suggestion, "existing": taken or name},
    )


def _taken_as(name: str, root: Path | None) -> str | None:
    """The directory name that ``name`` collides with, as spelled on disk."""
    if root is None or not root.is_dir():
        return None
    for entry in sorted(root.iterdir()):
        if entry.is_dir() and not entry.name.startswith(".") and entry.name.lower() == name.lower():
            return entry.name
    return None


def _make_staging(root: Path) -> Path:
    """A fresh hidden directory in ``root``, made with the usual permissions.

    ``tempfile.mkdtemp`` makes ``drwx------`` directories, which the rename would hand to the
    user as their environment; ``os.mkdir`` applies the umask like any other directory.
    """
    while True:
        staging = root / f".staging-{os.urandom(6).hex()}"
        try:
            staging.mkdir()
        except FileExistsError:  # pragma: no cover - 48 random bits collided
            continue
        return staging


def create_environment(
    cwd: Path, name: str, template: str = "blank", tools: Sequence[str] = ()
) -> Path:
    """Create ``.silo/environments/<name>/`` from ``template``; return its path.

    Raises:
        SiloError: ``unsafe_name``, ``template_not_found``, ``environment_already_exists``
            (suggesting the next free name).
    """
    source = template_dir(template)
    return publish_environment(
        cwd, name, template, lambda staging: copy_template(source, staging), tools
    )


def publish_environment(
    cwd: Path,
    name: str,
    template: str,
    fill: Callable[[Path], None],
    tools: Sequence[str] = (),
) -> Path:
    """Create ``.silo/environments/<name>/`` whole or not at all; return its path.

    ``fill(staging)`` writes the environment's files into a hidden staging directory, the
    manifest (naming ``template``) is added, and one rename publishes it: a failure anywhere
    leaves nothing behind, and an existing environment is never overwritten.

    Raises:
        SiloError: ``unsafe_name``, ``environment_already_exists`` (suggesting a free name);
            whatever ``fill`` raises.
    """
    check_environment_name(name)
    existing = list_environment_names(cwd)
    root = environments_dir(cwd)
    if name.lower() in existing:
        raise _already_exists(name, existing, root)
    root.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(
        name=name,
        template=template,
        template_version=__version__,
        entrypoint=DEFAULT_ENTRYPOINT,
        tools=tuple(tools),
    )
    staging = _make_staging(root)
    destination = root / name
    try:
        fill(staging)
        write_text(staging / MANIFEST_FILE, to_json_text(manifest.to_dict()), exclusive=True)
        if destination.exists():  # created by someone else since the check above
            raise _already_exists(name, list_environment_names(cwd), root)
        try:
            os.rename(staging, destination)
        except OSError as exc:
            if destination.exists():  # a non-empty destination appeared meanwhile
                raise _already_exists(name, list_environment_names(cwd), root) from exc
            raise
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return destination


def _top_level_names(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            names.append(stmt.name)
        elif isinstance(stmt, ast.Assign):
            names.extend(t.id for t in stmt.targets if isinstance(t, ast.Name))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            names.append(stmt.target.id)
        elif isinstance(stmt, ast.ImportFrom):
            names.extend(a.asname or a.name for a in stmt.names)
        else:
            # ``type State = ...`` (Python 3.12+): an ast.TypeAlias with a Name target.
            target = getattr(stmt, "name", None)
            if type(stmt).__name__ == "TypeAlias" and isinstance(target, ast.Name):
                names.append(target.id)
    return names


def detect_state_type(env_dir: Path, environment: str) -> str:
    """The state type scaffolds import: ``State`` in ``state.py``, else the first ``*State``.

    Raises:
        SiloError: ``state_type_not_found`` when ``state.py`` cannot be read or parsed, or
            defines no such name.
    """
    names = _state_names(env_dir, environment, "Name the state type explicitly instead.")
    if "State" in names:
        return "State"
    for name in names:
        if name.endswith("State") and name.isidentifier():
            return name
    raise SiloError(
        "state_type_not_found",
        f'Could not find a "State" type in state.py of environment "{environment}". '
        'Define "State" there (a class, TypedDict or type alias) or name the type explicitly.',
        {"environment": environment},
    )


def _state_names(env_dir: Path, environment: str, fix: str) -> list[str]:
    try:
        tree = ast.parse((env_dir / "state.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError) as exc:
        raise SiloError(
            "state_type_not_found",
            f'Could not read state.py in environment "{environment}" ({exc}). {fix}',
            {"environment": environment},
        ) from None
    return _top_level_names(tree)


def check_state_type(env_dir: Path, environment: str, state_type: str) -> str:
    """``state_type``, checked to be a name ``state.py`` defines (the stub imports it).

    Raises:
        SiloError: ``unsafe_name`` for a name that is not an identifier;
            ``state_type_not_found`` when ``state.py`` does not define it (nothing is written).
    """
    name = check_identifier(state_type)
    names = _state_names(env_dir, environment, f'Define "{name}" in state.py first.')
    if name not in names:
        types = [n for n in names if n.endswith("State")]
        hint = f"pass --state {types[0]}" if types else "omit --state"
        raise SiloError(
            "state_type_not_found",
            f'state.py of environment "{environment}" defines no "{name}" (state types there: '
            f"{', '.join(types) or 'none'}); {hint}, or define {name} in state.py first.",
            {"environment": environment, "stateType": name, "available": types},
        )
    return name


@attrs.frozen
class _Plan:
    kind: str  # "tool" or "verifier"
    directory: str  # "tools" or "verifiers"
    stem: str
    identifier: str


def _scaffold(
    env_dir: Path,
    environment: str,
    plan: _Plan,
    render: Callable[[str], str],
    state_type: str | None,
) -> ScaffoldResult:
    state = (
        check_state_type(env_dir, environment, state_type)
        if state_type is not None
        else detect_state_type(env_dir, environment)
    )
    directory = env_dir / plan.directory
    created = f"{plan.directory}/{plan.stem}.py"
    registry_rel = f"{plan.directory}/__init__.py"
    target = directory / f"{plan.stem}.py"
    if target.exists():
        raise SiloError(
            f"{plan.kind}_already_exists",
            f'"{created}" already exists in environment "{environment}".',
            {"environment": environment, "file": created},
        )
    registry = directory / "__init__.py"
    try:
        source = registry.read_text(encoding="utf-8")
    except OSError:
        raise SiloError(
            "registry_not_found",
            f'Environment "{environment}" has no {registry_rel} to register in. '
            f'Create one defining "{plan.directory} = [...]".',
            {"environment": environment, "file": registry_rel},
        ) from None
    # Everything is computed before anything is written: a failure leaves no orphan file.
    new_registry = register(source, registry_rel, plan.directory, plan.stem, plan.identifier)
    stub = render(state)
    try:
        write_text(target, stub, exclusive=True)
    except FileExistsError:
        raise SiloError(
            f"{plan.kind}_already_exists",
            f'"{created}" already exists in environment "{environment}".',
            {"environment": environment, "file": created},
        ) from None
    try:
        write_text(registry, new_registry, exclusive=False)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    remove_gitkeep(directory)
    return ScaffoldResult(created, registry_rel, plan.identifier)


def scaffold_tool(
    env_dir: Path,
    environment: str,
    name: str,
    description: str | None = None,
    state_type: str | None = None,
) -> ScaffoldResult:
    """Create ``tools/<stem>.py`` (a stub that fails on purpose) and register it.

    Raises:
        SiloError: ``unsafe_name``, ``state_type_not_found``, ``tool_already_exists``,
            ``registry_not_found``, ``already_registered``.
    """
    check_safe_name(name, "tool")
    # The module stem is the identifier too: "from .<stem> import <identifier>" must parse.
    ident = python_identifier(name, "tool", "tool_")
    plan = _Plan("tool", "tools", ident, ident)

    def render(state: str) -> str:
        return tool_stub(name, plan.identifier, description, state)

    return _scaffold(env_dir, environment, plan, render, state_type)


def scaffold_verifier(
    env_dir: Path,
    environment: str,
    verifier_id: str,
    task_id: str,
    name: str | None = None,
    state_type: str | None = None,
) -> ScaffoldResult:
    """Create ``verifiers/<stem>.py`` (one required, failing TODO check) and register it.

    The task id is checked for a safe name only; ``validate`` checks that it exists.

    Raises:
        SiloError: ``unsafe_name``, ``state_type_not_found``, ``verifier_already_exists``,
            ``registry_not_found``, ``already_registered``.
    """
    check_safe_name(verifier_id, "verifier id")
    check_safe_name(task_id, "task id")
    ident = python_identifier(verifier_id, "verifier id", "verifier_")
    plan = _Plan("verifier", "verifiers", ident, ident)

    def render(state: str) -> str:
        return verifier_stub(verifier_id, task_id, plan.identifier, name, state)

    return _scaffold(env_dir, environment, plan, render, state_type)
