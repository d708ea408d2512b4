"""KnownEvals: every eval directory a project knows of, wherever it was written.

An eval writes into ``.silo/evals/<eval_id>/`` unless ``eval --out DIR`` names another place;
such a directory is remembered in ``.silo/known-evals.jsonl`` (one ``{"path": ...}`` line per
eval, appended whole), so ``evals list``, ``report``, ``runs show`` and ``runs list --eval``
find it again by id from the project. An eval directory is one that holds ``eval.json``; a
remembered path that no longer does (moved, deleted) is skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from .._errors import SiloError
from .._jsonutil import parse_json
from ._evaldir import EvalDir

__all__ = ["KnownEvals"]


class KnownEvals:
    """The eval directories of the project at ``root`` (the directory holding ``.silo/``).

    Args:
        root: the project directory.
    """

    __slots__ = ("_root",)

    #: The remembered eval directories written outside ``.silo/evals/``, relative to ``.silo/``.
    FILE = "known-evals.jsonl"

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._root = Path(root).absolute()

    @property
    def evals_dir(self) -> Path:
        """Where evals go by default: ``.silo/evals/``."""
        return self._root / ".silo" / "evals"

    @property
    def file(self) -> Path:
        """The list of eval directories written elsewhere."""
        return self._root / ".silo" / self.FILE

    def remember(self, eval_dir: str | os.PathLike[str]) -> None:
        """Note ``eval_dir``, an ``eval --out`` directory.

        One under ``.silo/evals/`` is known anyway, and one already noted is not noted again.
        """
        path = Path(eval_dir).absolute()
        if path.parent == self.evals_dir or path in self._remembered():
            return
        # ASCII: a name that is not UTF-8 (its bytes as U+DC80..U+DCFF) reads back as it was.
        line = json.dumps({"path": os.fspath(path)}) + "\n"
        self.file.parent.mkdir(parents=True, exist_ok=True)
        with open(self.file, "a", encoding="utf-8") as out:  # one write: a whole line or none
            out.write(line)

    def _remembered(self) -> list[Path]:
        try:
            text = self.file.read_text(encoding="utf-8")
        except OSError:
            return []
        paths = []
        for line in text.splitlines():
            with contextlib.suppress(ValueError, TypeError, KeyError):
                paths.append(Path(parse_json(line)["path"]))
        return paths

    def dirs(self) -> list[Path]:
        """Every eval directory known: ``.silo/evals/*`` then those remembered, each once."""
        found = sorted(p for p in self.evals_dir.glob("*") if _is_eval(p))
        for path in self._remembered():
            if _is_eval(path) and path not in found:
                found.append(path)
        return found

    def find(self, eval_id: str) -> Path | None:
        """The directory of eval ``eval_id`` (its name, or its ``eval.json``'s id), or None."""
        direct = self.evals_dir / eval_id
        if _is_eval(direct):
            return direct
        for path in self.dirs():
            if path.name == eval_id or _eval_id(path) == eval_id:
                return path
        return None


def _is_eval(path: Path) -> bool:
    return os.path.isfile(EvalDir(path).file(EvalDir.EVAL))


def _eval_id(path: Path) -> str | None:
    try:
        data = EvalDir(path).read_plan()  # the plan's one reader: a damaged one names no id
    except SiloError:
        return None
    value = data.get("evalId")
    return value if isinstance(value, str) else None
