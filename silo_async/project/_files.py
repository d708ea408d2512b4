"""Project paths and small file helpers shared by the loader, the store and the scaffolder."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from .._errors import SiloError
from ._names import check_environment_name

__all__ = [
    "enclosing_project",
    "environments_dir",
    "find_environment",
    "json_files",
    "list_environment_names",
    "read_json",
    "read_json_as",
    "remove_gitkeep",
    "to_json_text",
    "write_text",
]


def environments_dir(cwd: Path) -> Path:
    """``<cwd>/.silo/environments``."""
    return cwd / ".silo" / "environments"


def enclosing_project(start: Path) -> Path | None:
    """The nearest directory *above* ``start`` that holds a ``.silo/`` directory, if any.

    The CLI works on the project of the current directory only, as Silo does (a stray
    ``.silo/`` in a parent directory must never capture commands run elsewhere); this is only
    used to point a user who ran a command from a subdirectory at their project.
    """
    for candidate in start.absolute().parents:
        if (candidate / ".silo").is_dir():
            return candidate
    return None


def _environment_dirs(cwd: Path) -> list[Path]:
    root = environments_dir(cwd)
    try:
        entries = list(root.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    # Staging directories start with "." and are never environments.
    return [p for p in entries if not p.name.startswith(".") and p.is_dir()]


def list_environment_names(cwd: Path) -> list[str]:
    """Environment names, lower-cased and sorted (missing directory: empty)."""
    return sorted({p.name.lower() for p in _environment_dirs(cwd)})


def find_environment(cwd: Path, name: str) -> Path:
    """The directory of environment ``name``; the case of ``name`` does not matter.

    An exact match wins; otherwise the single directory equal ignoring case. This keeps
    behaviour identical on case-sensitive and case-insensitive file systems.

    Raises:
        SiloError: ``unsafe_name`` for a name that could escape the directory;
            ``environment_not_found`` listing the environments that exist.
    """
    check_environment_name(name)
    dirs = _environment_dirs(cwd)
    for path in dirs:
        if path.name == name:
            return path
    for path in dirs:
        if path.name.lower() == name.lower():
            return path
    available = list_environment_names(cwd)
    if available:
        message = (
            f'Environment "{name}" was not found in .silo/environments. '
            f"Available: {', '.join(available)}."
        )
    else:
        message = f'Environment "{name}" was not found. Run "silo-async init" to create one.'
    raise SiloError("environment_not_found", message, {"environment": name, "available": available})


def json_files(directory: Path) -> list[Path]:
    """The ``*.json`` files of ``directory``, sorted by name (none when it does not exist)."""
    return sorted(p for p in directory.glob("*.json") if p.is_file())


def read_json(path: Path) -> Any:
    """Parse a UTF-8 JSON file.

    Raises:
        SiloError: ``invalid_json`` naming the absolute path and the parser's message (also
            for bytes that are not UTF-8).
        OSError: the file cannot be read.
    """
    return read_json_as(path, f'"{path}"', {"path": str(path)})


def read_json_as(path: Path, source: str, details: dict[str, Any]) -> Any:
    """Parse a UTF-8 JSON file of the environment, naming it as ``source`` in errors.

    ``source`` says what the file is and where, relative to the environment (for example
    ``Task file "tasks/x.json"``), so the message reads the same on every machine.

    Raises:
        SiloError: ``invalid_json`` carrying ``details``.
        OSError: the file cannot be read.
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise SiloError("invalid_json", f"{source} is not valid JSON: {exc}.", details) from None


def to_json_text(value: Any) -> str:
    """Pretty JSON as written to disk (2-space indent, trailing newline); strict.

    Raises:
        ValueError, TypeError: ``value`` is not JSON (NaN, a set, an object...).
    """
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


#: How text is encoded: a lone surrogate (from a JSON ``"\\ud83d"`` escape) is written as that
#: escape, which reads back as the same string in JSON and in a Python string literal.
_ANY_STR = "backslashreplace"


def write_text(path: Path, text: str, *, exclusive: bool) -> None:
    """Write ``text`` to ``path`` without ever leaving a half-written file.

    ``exclusive`` creates the file and fails with FileExistsError if it exists (also on a
    case-insensitive file system where another casing exists). Otherwise the new content
    replaces the old in one rename.
    """
    if exclusive:
        with path.open("x", encoding="utf-8", errors=_ANY_STR, newline="") as fh:
            try:
                fh.write(text)
            except BaseException:
                fh.close()
                path.unlink(missing_ok=True)
                raise
        return
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8", errors=_ANY_STR, newline="")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def remove_gitkeep(directory: Path) -> None:
    """Delete ``directory/.gitkeep`` once a real resource lives there (absent: fine)."""
    with contextlib.suppress(FileNotFoundError):
        (directory / ".gitkeep").unlink()
