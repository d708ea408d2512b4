"""The authoring store for JSON resources: datasets (``data/``) and tasks (``tasks/``).

Synchronous and small on purpose: the SDK and the CLI call these directly. Names are checked
before they become paths; file names are compared ignoring case, so a project behaves the same
on case-sensitive and case-insensitive file systems; writes never leave half a file.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from .._errors import SiloError
from .._task import Task
from ._files import json_files, read_json, read_json_as, remove_gitkeep, to_json_text, write_text
from ._names import check_safe_name

__all__ = ["DataStore", "Mode", "TaskStore"]


class Mode(enum.Enum):
    """How a write treats an existing resource."""

    CREATE = "create"
    UPDATE = "update"
    UPSERT = "upsert"


def _find_file(directory: Path, file_name: str) -> Path | None:
    """``directory/<file_name>`` if a file of that name exists, ignoring case."""
    exact = directory / file_name
    if exact.is_file():
        return exact
    if not directory.is_dir():
        return None
    lowered = file_name.lower()
    for entry in directory.iterdir():
        if entry.name.lower() == lowered and entry.is_file():
            return entry
    return None


def _foreign_keys(existing: Path | None, given: Task | Mapping[str, Any]) -> dict[str, Any]:
    """Keys a task file may carry that silo_async does not model (Silo's ``entities``, say).

    They belong to other tools, so rewriting a task keeps the ones its file had; keys given with
    the new task (as a mapping) replace them one by one.
    """
    known = {"id", "title", "instruction", "verifierId", "difficulty", "user"}
    kept: dict[str, Any] = {}
    if existing is not None:
        on_disk = read_json(existing)  # parsed once already by _find: it is a JSON object
        kept = {k: v for k, v in on_disk.items() if k not in known}
    if isinstance(given, Mapping):
        kept.update({k: v for k, v in given.items() if k not in known})
    return kept


class _ResourceDir:
    """A directory of JSON resources inside one environment (``data/``, ``tasks/``).

    Args:
        env_dir: the environment directory.
        environment: its name, for messages.
    """

    #: The directory's name inside the environment, also the prefix of every relative file.
    subdir: ClassVar[str]

    def __init__(self, env_dir: Path, environment: str) -> None:
        self.dir = env_dir / self.subdir
        self.environment = environment

    def relative(self, path: Path) -> str:
        """``<subdir>/<file name>``: how files are named to the user."""
        return f"{self.subdir}/{path.name}"


class DataStore(_ResourceDir):
    """Datasets ``data/<name>.json``: any JSON value."""

    subdir = "data"

    def _locate(self, name: str) -> Path | None:
        check_safe_name(name, "dataset")
        return _find_file(self.dir, f"{name}.json")

    def _not_found(self, name: str, message: str) -> SiloError:
        return SiloError("data_not_found", message, {"environment": self.environment, "name": name})

    def _names(self) -> str:
        return ", ".join(entry["name"] for entry in self.list()) or "none"

    def list(self) -> list[dict[str, Any]]:
        """``[{name, file, bytes}]`` for every ``data/*.json``, sorted by file name."""
        if not self.dir.is_dir():
            return []
        files = json_files(self.dir)
        return [
            {"name": p.stem, "file": self.relative(p), "bytes": p.stat().st_size} for p in files
        ]

    def get(self, name: str) -> Any:
        """The content of dataset ``name``.

        Raises:
            SiloError: ``unsafe_name``, ``data_not_found``, ``invalid_json``.
        """
        path = self._locate(name)
        if path is None:
            raise self._not_found(
                name,
                f'Dataset "{name}" was not found in environment "{self.environment}". '
                f"Available: {self._names()}.",
            )
        return read_json(path)

    def put(self, name: str, value: Any, mode: Mode = Mode.UPSERT) -> str:
        """Write dataset ``name``; return ``data/<name>.json``.

        Raises:
            SiloError: ``unsafe_name``; ``data_already_exists`` (create), ``data_not_found``
                (update); ``invalid_json`` when ``value`` is not JSON (NaN, a set, an object).
        """
        existing = self._locate(name)
        env = self.environment
        if mode is Mode.CREATE and existing is not None:
            raise SiloError(
                "data_already_exists",
                f'Dataset "{name}" already exists in environment "{env}". '
                'Use "silo-async data update" to replace it.',
                {"environment": env, "name": name},
            )
        if mode is Mode.UPDATE and existing is None:
            raise self._not_found(
                name,
                f'Dataset "{name}" does not exist in environment "{env}". '
                'Use "silo-async data add" to create it.',
            )
        try:
            text = to_json_text(value)
        except (TypeError, ValueError) as exc:
            raise SiloError(
                "invalid_json",
                f'Dataset "{name}" has no valid JSON content to write: {exc}.',
                {"environment": env, "name": name},
            ) from None
        self.dir.mkdir(exist_ok=True)
        path = existing or self.dir / f"{name}.json"
        try:
            write_text(path, text, exclusive=existing is None)
        except FileExistsError:
            raise SiloError(
                "data_already_exists",
                f'Dataset "{name}" already exists in environment "{env}".',
                {"environment": env, "name": name},
            ) from None
        remove_gitkeep(self.dir)
        return self.relative(path)

    def add(self, name: str, value: Any) -> str:
        """Create dataset ``name`` (``data_already_exists``); return its relative file."""
        return self.put(name, value, Mode.CREATE)

    def update(self, name: str, value: Any) -> str:
        """Replace dataset ``name`` (``data_not_found``); return its relative file."""
        return self.put(name, value, Mode.UPDATE)

    def remove(self, name: str) -> str:
        """Delete dataset ``name``; return its relative file.

        Raises:
            SiloError: ``unsafe_name``, ``data_not_found``.
        """
        path = self._locate(name)
        if path is None:
            raise self._not_found(
                name,
                f'Dataset "{name}" was not found in environment "{self.environment}". '
                f"Available: {self._names()}.",
            )
        path.unlink()
        return self.relative(path)


class TaskStore(_ResourceDir):
    """Tasks ``tasks/<id>.json`` ({id, title, instruction, verifierId, difficulty})."""

    subdir = "tasks"

    def _read(self, path: Path) -> tuple[Task, Path]:
        rel = self.relative(path)
        where = {"environment": self.environment, "file": rel, "id": path.stem}
        try:
            data = read_json_as(path, f'Task file "{rel}"', where)
        except SiloError as exc:
            raise SiloError(exc.code, exc.message, {**exc.details, **where}) from None
        if isinstance(data, dict) and isinstance(data.get("id"), str) and data["id"].strip():
            where["id"] = data["id"]
        if not isinstance(data, dict):
            raise SiloError("task_invalid", f'Task file "{rel}" is not a JSON object.', where)
        try:
            return Task.from_dict(data, source=f'Task file "{rel}"'), path
        except SiloError as exc:
            raise SiloError("task_invalid", exc.message, {**exc.details, **where}) from None

    def _entries(self, broken: list[SiloError] | None = None) -> list[tuple[Task, Path]]:
        """Every task file, read.

        A broken one is raised, or appended to ``broken`` and left out (its error's details
        name the ``file`` and the ``id`` it is for).
        """
        if not self.dir.is_dir():
            return []
        entries: list[tuple[Task, Path]] = []
        for path in json_files(self.dir):
            try:
                entries.append(self._read(path))
            except SiloError as exc:
                if broken is None:
                    raise
                broken.append(exc)
        return entries

    def _find(self, task_id: str) -> tuple[Task, Path] | None:
        """The task ``task_id``; the others' broken files are no obstacle, its own is raised."""
        broken: list[SiloError] = []
        for task, path in self._entries(broken):
            if task.id == task_id:
                return task, path
        for problem in broken:
            if problem.details.get("id") == task_id:
                raise problem
        return None

    def list(self, *, broken: list[SiloError] | None = None) -> list[Task]:
        """Every task, sorted by id.

        Args:
            broken: when given, a task file that cannot be read is appended here and left out
                of the list; by default it is raised.

        Raises:
            SiloError: ``invalid_json`` or ``task_invalid`` for a broken task file.
        """
        return sorted((t for t, _ in self._entries(broken)), key=lambda t: t.id)

    def get(self, task_id: str) -> Task:
        """The task with id ``task_id``.

        Raises:
            SiloError: ``task_not_found``.
        """
        found = self._find(task_id)
        if found is None:
            raise self._not_found(task_id, "was not found in", available=True)
        return found[0]

    def _not_found(self, task_id: str, verb: str, *, available: bool = False) -> SiloError:
        # Listing the ids saves a "task list" round trip after a typo (as run does).
        broken: list[SiloError] = []
        known = ", ".join(t.id for t in self.list(broken=broken)) or "none"
        hint = f" Available: {known}." if available else ""
        files = ", ".join(str(p.details.get("file")) for p in broken)
        if available and files:
            hint += f" Not readable: {files} (silo-async env validate names the problems)."
        if "#" in task_id:  # an instance has no file: its family generates it
            hint += (
                " An id FAMILY#SEED names an instance of a task family, generated by the family "
                "in families/ (there is no file of its own): change the family instead."
            )
        return SiloError(
            "task_not_found",
            f'Task "{task_id}" {verb} environment "{self.environment}".{hint}',
            {"environment": self.environment, "id": task_id},
        )

    def _coerce(self, task: Task | Mapping[str, Any]) -> Task:
        if isinstance(task, Task):
            task = task.to_dict()
        raw_id = task.get("id") if isinstance(task, Mapping) else None
        label = f'Task "{raw_id}"' if isinstance(raw_id, str) and raw_id.strip() else "Task"
        try:
            parsed = Task.from_dict(task, source=label)
        except SiloError as exc:
            details = {"environment": self.environment, **exc.details}
            raise SiloError("task_invalid", exc.message, details) from None
        check_safe_name(parsed.id, "task id")
        return parsed

    def put(self, task: Task | Mapping[str, Any], mode: Mode = Mode.UPSERT) -> str:
        """Write a task (its fields replaced whole, never merged); return its relative file.

        An existing task is rewritten in the file it came from, so updating never creates a
        second file with the same id. Keys of that file silo_async does not model (Silo's
        ``entities``, another tool's metadata) are kept.

        Raises:
            SiloError: ``task_invalid``, ``unsafe_name``, ``task_already_exists`` (create),
                ``task_not_found`` (update), ``invalid_json``/``task_invalid`` for a broken
                existing task file.
        """
        parsed = self._coerce(task)
        found = self._find(parsed.id)
        env = self.environment
        if mode is Mode.CREATE and found is not None:
            rel = self.relative(found[1])
            raise SiloError(
                "task_already_exists",
                f'Task "{parsed.id}" already exists in environment "{env}" ({rel}).',
                {"environment": env, "id": parsed.id, "file": rel},
            )
        if mode is Mode.UPDATE and found is None:
            raise self._not_found(parsed.id, "does not exist in")
        self.dir.mkdir(exist_ok=True)
        path = found[1] if found else _find_file(self.dir, f"{parsed.id}.json")
        if path is not None and found is None:
            # Another task's file already has this name (ignoring case): never overwrite it.
            rel = self.relative(path)
            raise SiloError(
                "task_already_exists",
                f'File "{rel}" already exists in environment "{env}" and holds another task.',
                {"environment": env, "id": parsed.id, "file": rel},
            )
        target = path or self.dir / f"{parsed.id}.json"
        document = {**parsed.to_dict(), **_foreign_keys(found[1] if found else None, task)}
        write_text(target, to_json_text(document), exclusive=found is None)
        remove_gitkeep(self.dir)
        return self.relative(target)

    def add(self, task: Task | Mapping[str, Any]) -> str:
        """Create a task (``task_already_exists``, ``task_invalid``); return its relative file."""
        return self.put(task, Mode.CREATE)

    def update(self, task: Task | Mapping[str, Any]) -> str:
        """Replace a task as a whole (``task_not_found``); return its relative file."""
        return self.put(task, Mode.UPDATE)

    def remove(self, task_id: str) -> str:
        """Delete the file task ``task_id`` came from; return it (relative).

        Raises:
            SiloError: ``task_not_found``.
        """
        found = self._find(task_id)
        if found is None:
            raise self._not_found(task_id, "was not found in", available=True)
        found[1].unlink()
        return self.relative(found[1])
