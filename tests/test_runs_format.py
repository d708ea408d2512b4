"""silo_async.runs: one owner of the run-directory format, its version, and torn traces."""

from __future__ import annotations

import ast
import io
import json
import re
import shutil
from pathlib import Path

import pytest

import silo_async as silo
from silo_async.eval import load_run
from silo_async.export import SKIP_TRACE_CUT, export_runs, trajectories
from silo_async.runs import FORMAT_VERSION, EvalDir, RunDir

from .cli_support import cli
from .worlds import ENV, blocker

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "silo_async"

#: A string that names a file of a run directory, alone or at the end of a path.
RUN_FILE_NAME = re.compile(r"(^|/)(trace\.jsonl|result\.json|state-diff\.json|run\.json)$")


def _name_literals(path: Path) -> list[str]:
    """``file:line: 'literal'`` of every string in ``path`` (docstrings aside) naming a run file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and RUN_FILE_NAME.search(node.value)
    ]


def test_no_run_file_name_is_spelled_outside_silo_async_runs() -> None:
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if (PACKAGE / "runs") not in path.parents
        for hit in _name_literals(path)
    ]
    assert found == [], "use RunDir's names (silo_async.runs) instead:\n" + "\n".join(found)
    # The check itself sees a literal where there is one: runs/ names them all.
    assert len([h for p in (PACKAGE / "runs").rglob("*.py") for h in _name_literals(p)]) >= 4


pytestmark = pytest.mark.anyio


async def _run(runs_dir: Path) -> RunDir:
    result = await silo.run(ENV, "TASK-BLOCK", blocker, runs_dir=runs_dir)
    assert result.run_dir is not None
    return RunDir(result.run_dir)


def _set_version(run_dir: RunDir, version: object) -> None:
    """Rewrite run.json by hand: ``formatVersion`` set to ``version`` (absent for ``...``)."""
    run = json.loads(Path(run_dir.file(RunDir.RUN)).read_text())
    del run["formatVersion"]
    if version is not ...:
        run = {"formatVersion": version, **run}
    Path(run_dir.file(RunDir.RUN)).write_text(json.dumps(run, indent=2) + "\n")


async def test_run_json_starts_with_the_format_version_and_the_rollouts_place(
    tmp_path: Path,
) -> None:
    results = await silo.run_many(
        ENV, ["TASK-BLOCK"], blocker, runs=2, agent_name="me", runs_dir=tmp_path
    )
    for number, result in enumerate(results, start=1):
        assert result.run_dir is not None
        run = RunDir(result.run_dir).read_run()
        assert next(iter(run)) == "formatVersion"
        assert run["formatVersion"] == FORMAT_VERSION == 1
        assert (run["taskId"], run["agent"], run["run"]) == ("TASK-BLOCK", "me", number)


async def test_a_run_written_before_format_versions_reads_as_version_1(tmp_path: Path) -> None:
    run_dir = await _run(tmp_path / ".silo" / "runs")
    _set_version(run_dir, ...)
    assert "formatVersion" not in run_dir.read_run()
    assert run_dir.is_complete()
    assert load_run(run_dir).run_id == run_dir.name
    assert [line["runId"] for line in trajectories(environment=ENV, cwd=tmp_path)] == [run_dir.name]
    shown = cli("runs", "show", str(run_dir.path), "--json")
    assert shown.exit_code == 0, shown.output


@pytest.mark.parametrize("version", [2, 17, "2", 1.5, None, 0])
async def test_a_newer_or_unknown_format_version_is_refused(
    tmp_path: Path, version: object
) -> None:
    run_dir = await _run(tmp_path / ".silo" / "runs")
    _set_version(run_dir, version)
    with pytest.raises(silo.SiloError) as refused:
        run_dir.read_run()
    error = refused.value
    assert error.code == "run_format_unsupported"
    assert f"run format version {version!r}" in error.message
    assert "this silo_async reads run format version 1" in error.message
    assert "Upgrade silo_async" in error.message
    assert error.details["found"] == version and error.details["supported"] == 1
    for read in (run_dir.is_complete, lambda: load_run(run_dir), lambda: silo.list_runs(tmp_path)):
        with pytest.raises(silo.SiloError, match="Upgrade silo_async"):
            read()


async def test_the_cli_refuses_a_newer_format_with_its_own_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run_dir = await _run(tmp_path / ".silo" / "runs")
    _set_version(run_dir, 2)
    out = tmp_path / "train.jsonl"
    for args in (
        ["runs", "show", run_dir.name],
        ["runs", "show", run_dir.name, "--json"],
        ["runs", "list"],
        ["replay", run_dir.name],
        ["runs", "export", "--out", str(out)],
        ["runs", "export", run_dir.name],
    ):
        result = cli(*args)
        assert result.exit_code == 1, (args, result.output)
        assert result.stdout == "", args
        assert result.stderr.startswith("error: run_format_unsupported: "), args
        assert "has run format version 2; this silo_async reads run format version 1" in (
            result.stderr
        )
    assert not out.exists()  # the export wrote nothing, not even a partial file


def _tear(run_dir: RunDir, middle: bool = False) -> int:
    """Cut the trace's last line short (or damage a line in the middle); its line number."""
    path = Path(run_dir.file(RunDir.TRACE))
    lines = path.read_text().splitlines(keepends=True)
    number = 2 if middle else len(lines)
    # A kill mid-write leaves the last line cut short; a hand edit damages a whole line.
    lines[number - 1] = lines[number - 1][:12] + ("\n" if middle else "")
    path.write_text("".join(lines))
    return number


@pytest.mark.parametrize("middle", [False, True])
async def test_a_torn_trace_line_is_refused_strictly_and_skipped_knowingly(
    tmp_path: Path, middle: bool
) -> None:
    run_dir = await _run(tmp_path)
    whole = run_dir.events(strict=True)
    assert whole.skipped == () and whole.ended and len(whole) > 3
    line = _tear(run_dir, middle)
    with pytest.raises(silo.SiloError) as refused:
        run_dir.events(strict=True)
    assert refused.value.code == "run_invalid"
    assert refused.value.details == {"path": run_dir.file(RunDir.TRACE), "line": line}
    assert f"trace.jsonl line {line} is cut short or damaged" in refused.value.message
    lenient = run_dir.events(strict=False)
    assert lenient.skipped == (line,)
    assert lenient.events == [e for i, e in enumerate(whole.events, 1) if i != line]
    # Each reader chose: load_run (runs show) skips and says so, export refuses (trace_cut).
    assert load_run(run_dir).skipped_lines == (line,)
    with pytest.raises(silo.SiloError, match=f"line {line}"):
        load_run(run_dir, strict=True)
    stats = export_runs([str(run_dir.path)], out=io.StringIO(), environment=ENV, cwd=tmp_path)
    assert stats.skipped == {SKIP_TRACE_CUT: 1}


async def test_runs_show_notes_a_torn_line_and_replay_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run_dir = await _run(tmp_path / ".silo" / "runs")
    line = _tear(run_dir)
    shown = cli("runs", "show", run_dir.name)
    assert shown.exit_code == 0, shown.output
    assert f"note: trace line {line} of .silo/runs/{run_dir.name} cannot be read" in shown.stderr
    replayed = cli("replay", run_dir.name)
    assert replayed.exit_code == 1
    assert replayed.stderr.startswith("error: run_invalid: ")
    assert f"trace.jsonl line {line} is cut short or damaged" in replayed.stderr
    with pytest.raises(silo.SiloError, match="a replay needs every recorded call"):
        await silo.replay(load_run(run_dir), ENV)


async def test_complete_and_torn_run_directories_are_told_apart(tmp_path: Path) -> None:
    run_dir = await _run(tmp_path)
    assert run_dir.is_finished() and run_dir.is_complete() and run_dir.has_trace()
    copies = {}
    for case in ("no_run", "damaged_run", "no_result", "trace_only"):
        copies[case] = RunDir(tmp_path / "copies" / case)
        shutil.copytree(run_dir.path, copies[case].path)
    Path(copies["no_run"].file(RunDir.RUN)).unlink()
    Path(copies["damaged_run"].file(RunDir.RUN)).write_text('{"formatVers')
    Path(copies["no_result"].file(RunDir.RESULT)).unlink()
    for name in (RunDir.RESULT, RunDir.STATE_DIFF, RunDir.RUN):
        Path(copies["trace_only"].file(name)).unlink()
    assert {case: d.is_complete() for case, d in copies.items()} == dict.fromkeys(copies, False)
    assert not RunDir(tmp_path / "absent").is_complete()
    with pytest.raises(silo.SiloError, match="is not valid JSON") as damaged:
        copies["damaged_run"].read_run()
    assert damaged.value.code == "run_invalid"
    with pytest.raises(FileNotFoundError):
        copies["no_run"].read_run()


async def test_an_eval_directory_is_laid_out_as_eval_dir_names_it(tmp_path: Path) -> None:
    summary = await silo.evaluate(ENV, ["TASK-BLOCK"], {"a": blocker}, runs=2, out_dir=tmp_path)
    eval_dir = EvalDir(tmp_path)
    for name in (EvalDir.SUMMARY, EvalDir.SUMMARY_MD, EvalDir.INDEX):
        assert Path(eval_dir.file(name)).is_file(), name
    assert json.loads(Path(eval_dir.file(EvalDir.SUMMARY)).read_text())["index"] == EvalDir.INDEX
    index = Path(eval_dir.file(EvalDir.INDEX)).read_text().splitlines()
    indexed = [json.loads(line)["runDir"] for line in index]
    assert all(eval_dir.run(rel).is_complete() for rel in indexed)
    assert sorted(d.name for d in eval_dir.run_dirs()) == sorted(r.run_id for r in summary.records)


def test_the_runs_package_documents_its_public_surface() -> None:
    import inspect

    import silo_async.runs as runs

    assert sorted(runs.__all__) == sorted(
        [
            "FORMAT_VERSION",
            "EvalDir",
            "IndexLine",
            "KnownEvals",
            "RunDir",
            "TraceEvents",
            "write_atomic",
        ]
    )
    for name in runs.__all__:
        value = getattr(runs, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), name
        if inspect.isclass(value):
            for attr, member in vars(value).items():
                public = not attr.startswith("_")
                if public and (callable(member) or isinstance(member, property)):
                    assert inspect.getdoc(member), f"{name}.{attr}"
