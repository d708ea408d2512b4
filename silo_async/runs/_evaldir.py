"""EvalDir: an eval's directory, whose ``runs/`` holds one run directory per rollout.

```
<eval dir>/
  eval.json           the plan: everything needed to run the eval again, written first
  summary.json        the versioned summary (docs/eval-summary.md), written at the end, last
  summary.md          the same, for people
  report.html         one self-contained page
  runs/index.jsonl    one line per finished rollout, appended as each one finishes, rewritten
                      in plan order with the summary; each points at runs/<run_id>/
  runs/<run_id>/      a run directory (RunDir)
  .resume/<run_id>/   while an eval resumes: a model agent's interrupted attempt, whose
                      recorded responses its rerun replays (removed once the rerun finishes)
```

The eval writes and reads these files itself (``silo_async.eval``); their names live here,
beside the run directory's, so that the on-disk format has one owner.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ._rundir import RunDir

__all__ = ["EvalDir"]


class EvalDir:
    """An eval directory: its file names and where its run directories are.

    Args:
        path: the eval directory (``.silo/evals/<eval_id>`` or an ``eval --out`` directory).
    """

    __slots__ = ("_path",)

    #: The plan, written before the first rollout starts.
    EVAL = "eval.json"
    #: The summary, for programs.
    SUMMARY = "summary.json"
    #: The summary, for people.
    SUMMARY_MD = "summary.md"
    #: The report page.
    REPORT = "report.html"
    #: The directory holding the run directories.
    RUNS = "runs"
    #: The rollout index, relative to the eval directory (as ``summary.json`` names it).
    INDEX = "runs/index.jsonl"
    #: Interrupted attempts kept for their recorded model responses while the eval resumes.
    RESUME = ".resume"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = os.fspath(path)

    def __repr__(self) -> str:
        return f"EvalDir({self._path!r})"

    def __fspath__(self) -> str:
        return self._path

    @property
    def path(self) -> Path:
        """The directory."""
        return Path(self._path)

    def file(self, name: str) -> str:
        """The path of ``name`` (one of :attr:`SUMMARY`, :attr:`INDEX`, ...) inside."""
        return os.path.join(self._path, name)

    @property
    def runs(self) -> str:
        """The directory of the run directories (``runs/``)."""
        return self.file(self.RUNS)

    def run(self, relative: str) -> RunDir:
        """The run directory ``relative`` to the eval directory (an index line's ``runDir``)."""
        return RunDir(self.file(relative))

    def run_dirs(self) -> Iterator[RunDir]:
        """Every directory under ``runs/``, in name (start) order, finished or not."""
        return _dirs(self.runs)

    @property
    def resume(self) -> str:
        """The directory of interrupted attempts kept for a resume (``.resume/``)."""
        return self.file(self.RESUME)

    def resume_dirs(self) -> Iterator[RunDir]:
        """Every run directory under ``.resume/``, in name order."""
        return _dirs(self.resume)


def _dirs(parent: str) -> Iterator[RunDir]:
    if not os.path.isdir(parent):
        return iter(())
    names = sorted(entry.name for entry in os.scandir(parent) if entry.is_dir())
    return (RunDir(os.path.join(parent, name)) for name in names)
