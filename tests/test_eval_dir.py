"""EvalDir owns an eval directory: its index's one torn-line rule, its plan and summary files.

The index rule (``silo_async.runs._evaldir``): a line counts once its newline is on disk, so a
kill that cuts a line of any length part-way leaves nothing a reader takes for a line. Shown on
every place a cut can fall, and on a real process killed with SIGKILL while appending lines of
up to a megabyte (lines far over the 4 KiB page an earlier rule relied on).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from silo_async import SiloError
from silo_async.eval import read_index
from silo_async.runs import EvalDir, IndexLine, RunDir
from silo_async.runs._appender import LineAppender


def _write_lines(path: Path, sizes: list[int]) -> list[dict[str, object]]:
    appender = LineAppender(path)
    lines = [{"n": n, "pad": "é" * size} for n, size in enumerate(sizes)]
    for line in lines:
        appender.append(json.dumps(line, ensure_ascii=False))
    appender.close()
    return lines


def _read(eval_dir: Path) -> list[IndexLine]:
    return list(EvalDir(eval_dir).index())


def test_a_cut_line_is_never_read_whatever_its_length(tmp_path: Path) -> None:
    whole = tmp_path / "whole" / "runs" / "index.jsonl"
    whole.parent.mkdir(parents=True)
    # Short lines and lines of several pages (a 2-byte character splits across pages too).
    lines = _write_lines(whole, [3, 5000, 10, 9000, 2047, 20000, 1])
    data = whole.read_bytes()
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    assert len(ends) == len(lines)
    cut = tmp_path / "cut"
    (cut / "runs").mkdir(parents=True)
    starts = [0, *ends[:-1]]
    for start, end in zip(starts, ends, strict=True):
        for at in sorted({start, start + 1, (start + end) // 2, end - 1, end}):
            (cut / "runs" / "index.jsonl").write_bytes(data[:at])
            read = _read(cut)
            whole_before = sum(e <= at for e in ends)
            assert [line.data for line in read] == lines[:whole_before], at
            assert [line.number for line in read] == list(range(1, whole_before + 1))


def test_blank_lines_are_skipped_and_a_damaged_line_is_none(tmp_path: Path) -> None:
    index = tmp_path / "runs" / "index.jsonl"
    index.parent.mkdir()
    # Spaces before a line, as an earlier silo_async padded lines to a page boundary.
    index.write_bytes(b'{"n": 0}\n      \n   {"n": 1}\n[1, 2]\n{"n": \n\xff\xfe\n{"n": 2}\n{"n"')
    assert _read(tmp_path) == [
        IndexLine(1, {"n": 0}),
        IndexLine(3, {"n": 1}),
        IndexLine(4, None),  # JSON, but not an object
        IndexLine(5, None),  # damaged by hand
        IndexLine(6, None),  # not UTF-8
        IndexLine(7, {"n": 2}),
    ]  # and the last line, cut short, is no line at all
    assert _read(tmp_path / "nowhere") == []


def test_read_index_refuses_a_damaged_line_but_not_a_cut_one(tmp_path: Path) -> None:
    line = {
        "task": "T-1", "agent": "a", "run": 1, "runId": "run_1", "runDir": "runs/run_1",
        "passed": True, "reward": 1.0, "terminationReason": "completed", "toolCalls": 0,
        "toolErrors": 0, "toolFaults": 0, "durationMs": 1.0,
    }  # fmt: skip
    index = tmp_path / "runs" / "index.jsonl"
    index.parent.mkdir()
    index.write_text(json.dumps(line) + "\n" + json.dumps(line)[:40])
    assert [r.run_id for r in read_index(tmp_path)] == ["run_1"]
    index.write_text(json.dumps(line) + "\n" + "{oops\n" + json.dumps(line) + "\n")
    with pytest.raises(ValueError, match="line 2 is not an index line"):
        read_index(tmp_path)


def test_an_appender_whose_file_was_removed_says_so(tmp_path: Path) -> None:
    path = tmp_path / "index.jsonl"
    appender = LineAppender(path)
    appender.append('{"n": 0}')
    path.unlink()
    with pytest.raises(FileNotFoundError) as removed:
        appender.append('{"n": 1}')
    assert removed.value.filename == str(path)
    appender.close()
    assert not path.exists()


_APPENDER = """
import json, sys
from silo_async.runs._appender import LineAppender

appender = LineAppender(sys.argv[1])
n = 0
while True:
    size = (n * 7919) % 1_000_000 + 1
    appender.append(json.dumps({"n": n, "size": size, "pad": "x" * size}))
    n += 1
"""


def test_a_process_killed_while_appending_long_lines_leaves_only_whole_lines(
    tmp_path: Path,
) -> None:
    index = tmp_path / "runs" / "index.jsonl"
    index.parent.mkdir()
    for attempt in range(3):  # three kills at whatever moment each lands
        index.unlink(missing_ok=True)
        child = subprocess.Popen(  # this checkout's silo_async, whatever the venv points at
            [sys.executable, "-c", _APPENDER, str(index)],
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
        )
        deadline = time.monotonic() + 30
        try:
            target = (attempt + 1) * 3_000_000
            while not index.exists() or index.stat().st_size < target:
                assert time.monotonic() < deadline and child.poll() is None
                time.sleep(0.005)
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
        data = index.read_bytes()
        read = _read(tmp_path)
        assert len(read) == data.count(b"\n") >= 1
        for number, line in enumerate(read):
            assert line.data is not None
            assert line.data["n"] == number and len(str(line.data["pad"])) == line.data["size"]


def test_run_dirs_are_the_directories_of_runs_not_links_to_them(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    (runs / "run_a").mkdir(parents=True)
    (runs / "run_b").mkdir()
    (runs / "index.jsonl").write_text("")
    (runs / "run_c").symlink_to(runs / "run_a", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    (runs / "run_d").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert [d.name for d in EvalDir(tmp_path).run_dirs()] == ["run_a", "run_b"]


def test_a_document_nested_too_deeply_is_damaged_not_a_crash(tmp_path: Path) -> None:
    # 100,000 levels: Python's decoder gives up with RecursionError (it was internal_error).
    deep = "[" * 100_000 + "]" * 100_000
    index = tmp_path / "runs" / "index.jsonl"
    index.parent.mkdir()
    index.write_text('{"n": 0}\n' + deep + "\n")
    assert _read(tmp_path) == [IndexLine(1, {"n": 0}), IndexLine(2, None)]
    (tmp_path / EvalDir.EVAL).write_text(deep)
    with pytest.raises(SiloError) as plan:
        EvalDir(tmp_path).read_plan()
    assert plan.value.code == "eval_not_found" and "nests too deeply" in plan.value.message
    run = RunDir(tmp_path / "runs" / "run_1")
    run.path.mkdir()
    (run.path / RunDir.RUN).write_text(deep)
    with pytest.raises(SiloError) as damaged:
        run.read_run()
    assert damaged.value.code == "run_invalid" and "nests too deeply" in damaged.value.message
    (run.path / RunDir.TRACE).write_text('{"type": "run_start"}\n' + deep + "\n")
    events = run.events(strict=False)
    assert list(events) == [{"type": "run_start"}] and events.skipped == (2,)
