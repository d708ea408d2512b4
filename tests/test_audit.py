"""The audit on a shop whose tasks carry one deliberate flaw each, or none.

``tests/audit_world.py`` holds the shop: every flawed task must get exactly its verdict
(``gameable``, ``loose``, ``unsolved``) and every sound one ``sound``, through the library and
the CLI; the same audit twice gives the same ``audit.json`` (ids aside); every probe and mutant
is a rollout on disk; ``--fail-on`` sets the exit code.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.auditing import PROBES
from tests import audit_world
from tests.audit_world import EXPECTED
from tests.cli_support import cli

from .peers import extra

pytestmark = pytest.mark.anyio

CHAT = "T-CHAT"


async def _audit(tmp_path: Path, **options: Any) -> silo.AuditReport:
    options.setdefault("solver", audit_world.solver)
    return await silo.audit(audit_world.environment(), out=tmp_path / "audit", **options)


def _without_ids(document: dict[str, Any]) -> dict[str, Any]:
    """``audit.json`` with its audit id and every run id blanked (they differ run to run)."""
    text = json.dumps(document, sort_keys=True)
    data: dict[str, Any] = json.loads(text)
    data["auditId"] = ""
    for entry in data["tasks"]:
        for played in [entry["solver"] or {}, *entry["probes"].values(), *entry["mutants"]]:
            played["runId"] = ""
    return data


async def test_every_flaw_gets_its_verdict_and_every_sound_task_sound(tmp_path: Path) -> None:
    report = await _audit(tmp_path)
    assert {e["task"]: e["verdict"] for e in report.tasks} == EXPECTED
    assert report.counts == {"sound": 3, "gameable": 3, "loose": 2, "unsolved": 1}
    assert [e["task"] for e in report.tasks] == list(EXPECTED)  # the tasks' order
    by_task = {e["task"]: e for e in report.tasks}
    # How each flaw was found: the probe or the mutant that passed.
    assert by_task["T-UNTOUCHED"]["probes"]["noop"]["passed"]
    assert by_task["T-NUMBER"]["probes"]["echo"]["passed"]
    assert not by_task["T-NUMBER"]["probes"]["noop"]["passed"]
    assert by_task["T-ANYWRITE"]["probes"]["explorer"]["passed"]
    assert not by_task["T-ANYWRITE"]["probes"]["echo"]["passed"]
    passing = [
        (m["kind"], m["call"]["tool"])
        for m in by_task["T-ONEOFTWO"]["mutants"]
        if m["passed"] and not m["sameWorld"]
    ]
    assert ("drop", "refund_order") in passing and ("drop", "cancel_order") not in passing
    ignored = [m for m in by_task["T-IGNORED"]["mutants"] if m["passed"] and not m["sameWorld"]]
    assert [(m["kind"], m["call"]["argument"]) for m in ignored] == [("alter", "percent")]
    assert ignored[0]["call"]["value"] != 15 and 1 <= ignored[0]["call"]["value"] <= 50
    failing = by_task["T-FAILING"]
    assert failing["solver"]["passed"] is False and failing["mutants"] == []
    # gap: the solver's reward minus the best probe's.
    assert by_task["T-SOUND"]["gap"] == round(
        1.0 - max(p["reward"] for p in by_task["T-SOUND"]["probes"].values()), 2
    )
    assert report.verdict("T-SOUND") == "sound"


async def test_verdicts_follow_their_precedence(tmp_path: Path) -> None:
    async def breaking(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("cancel_order", {"orderId": "ORD-002", "reason": "fraud"})
        return "Done."

    # unsolved before gameable: the noop probe passes, but the solver fails.
    broken = await _audit(tmp_path / "a", tasks=["T-UNTOUCHED"], solver=breaking)
    entry = broken.tasks[0]
    assert entry["probes"]["noop"]["passed"] and entry["verdict"] == "unsolved"
    # gameable before loose: the explorer passes, and so does a mutant noting another order.
    report = await _audit(tmp_path / "b", tasks=["T-ANYWRITE", "T-SOUND"])
    entry, sound = report.tasks
    loose = [m for m in entry["mutants"] if m["passed"] and m["kind"] != "repeat"]
    assert loose and not any(m["sameWorld"] for m in loose)
    assert entry["probes"]["explorer"]["passed"] and entry["verdict"] == "gameable"
    # A passing repeat is no verdict: T-SOUND's second cancel is refused, and it stays sound.
    assert [(m["kind"], m["passed"]) for m in sound["mutants"] if m["kind"] != "alter"] == [
        ("drop", False),
        ("repeat", True),
    ]
    assert sound["verdict"] == "sound"


async def test_every_probe_and_mutant_is_a_rollout_written_under_the_audit(tmp_path: Path) -> None:
    report = await _audit(tmp_path, tasks=["T-ONEOFTWO", "T-UNTOUCHED"])
    assert report.path == tmp_path / "audit"
    written = json.loads((report.path / "audit.json").read_text(encoding="utf-8"))
    assert written == report.to_dict()
    assert set(written) == {"auditId", "environment", "tasks", "counts"}
    assert written["environment"] == "shop"
    for entry in written["tasks"]:
        assert list(entry) == ["task", "verdict", "solver", "probes", "mutants", "gap"]
        assert list(entry["probes"]) == list(PROBES)
        played = [entry["solver"], *entry["probes"].values(), *entry["mutants"]]
        for one in played:
            result = json.loads((report.path / "runs" / one["runId"] / "result.json").read_text())
            assert (result["passed"], result["reward"]) == (one["passed"], one["reward"])
    # Only the reported rollouts stay (an alter's values that changed nothing are removed).
    runs = {p.name for p in (report.path / "runs").iterdir()}
    assert runs == {
        one["runId"]
        for e in written["tasks"]
        for one in [e["solver"], *e["probes"].values(), *e["mutants"]]
    }
    markdown = (report.path / "audit.md").read_text(encoding="utf-8")
    assert "| T-ONEOFTWO | **loose** |" in markdown
    assert "drop of call 1 (refund_order) passes" in markdown


async def test_the_same_audit_twice_gives_the_same_audit_json(tmp_path: Path) -> None:
    env = audit_world.environment()
    options: dict[str, Any] = {"solver": audit_world.solver, "seed": 3}
    options["families"] = {"discount-order": 2}
    tasks = list(EXPECTED)
    first = await silo.audit(env, tasks, out=tmp_path / "one", **options)
    # One rollout at a time instead of 32: nothing depends on the order rollouts finish in.
    second = await silo.audit(
        audit_world.environment(), tasks, out=tmp_path / "two", concurrency=1, **options
    )
    assert first.audit_id != second.audit_id
    assert _without_ids(first.to_dict()) == _without_ids(second.to_dict())
    assert _markdown_without_ids(first) == _markdown_without_ids(second)
    # Another seed changes the probes' walks: the audit is seeded, not fixed.
    third = await silo.audit(env, ["T-ANYWRITE"], out=tmp_path / "three", solver=None, seed=4)
    walk = next(e for e in first.tasks if e["task"] == "T-ANYWRITE")["probes"]["explorer"]
    other = third.tasks[0]["probes"]["explorer"]
    assert _calls(first.path, walk["runId"]) != _calls(third.path, other["runId"])


def _markdown_without_ids(report: silo.AuditReport) -> str:
    """``audit.md`` with its audit id and run ids blanked."""
    text = (report.path / "audit.md").read_text(encoding="utf-8")
    return re.sub(r"(audit|run)_[0-9T]+_[0-9]+_[0-9a-f]+", "ID", text)


def _calls(audit_dir: Path, run_id: str) -> list[Any]:
    """The tool calls of one rollout of an audit, from its trace."""
    trace = (audit_dir / "runs" / run_id / "trace.jsonl").read_text(encoding="utf-8")
    events = [json.loads(line) for line in trace.splitlines()]
    return [(e["tool"], e["input"]) for e in events if e.get("type") == "tool_call"]


async def test_a_conversation_is_mutated_by_its_turns_that_changed_the_world(
    tmp_path: Path,
) -> None:
    report = await _audit(tmp_path, tasks=[CHAT])
    mutants = report.tasks[0]["mutants"]
    turns = [m for m in mutants if m["call"]["tool"] == "message_user"]
    # Only the turn during which the customer approved (their own tool call) changed the
    # world: it yields a drop, never a repeat or an alter; the other turns yield nothing.
    assert [(m["kind"], m["call"]["index"]) for m in turns] == [("drop", 0)]
    assert not turns[0]["passed"]
    assert {m["call"]["tool"] for m in mutants} == {"message_user", "update_address"}
    address = [m for m in mutants if m["kind"] == "alter" and m["call"]["argument"] == "address"]
    assert address and not address[0]["passed"]  # the address came from the customer's reply
    explorer = json.loads(
        (report.path / "runs" / report.tasks[0]["probes"]["explorer"]["runId"] / "trace.jsonl")
        .read_text()
        .splitlines()[-4]
    )
    assert explorer["type"] == "user_turn"  # it told the customer everything it saw, at the end


async def test_text_the_solver_wrote_itself_is_never_altered(tmp_path: Path) -> None:
    async def noting(ctx: silo.AgentContext) -> str:
        # Its own words, written twice (the second time after a tool echoed them back).
        await ctx.call_tool("list_orders", {})
        await ctx.call_tool("add_note", {"orderId": "ORD-001", "text": "checked twice"})
        await ctx.call_tool("add_note", {"orderId": "ORD-002", "text": "checked twice"})
        return "Noted."

    report = await _audit(tmp_path, tasks=["T-ANYWRITE"], solver=noting, probes=["noop"])
    altered = [m["call"]["argument"] for m in report.tasks[0]["mutants"] if m["kind"] == "alter"]
    assert altered == ["orderId", "orderId"]  # the ids came from the instruction and the world


async def test_without_a_solver_there_is_no_gap_and_no_mutant(tmp_path: Path) -> None:
    report = await _audit(tmp_path, solver=None, probes=["noop", "echo"])
    for entry in report.tasks:
        assert entry["solver"] is None and entry["gap"] is None and entry["mutants"] == []
        assert list(entry["probes"]) == ["noop", "echo"]
    verdicts = {e["task"]: e["verdict"] for e in report.tasks}
    assert verdicts["T-UNTOUCHED"] == verdicts["T-NUMBER"] == "gameable"
    assert verdicts["T-ONEOFTWO"] == verdicts["T-FAILING"] == "sound"


async def test_unknown_probes_and_tasks_fail_before_anything_runs(tmp_path: Path) -> None:
    env = audit_world.environment()
    with pytest.raises(ValueError, match="Unknown probe 'lazy'"):
        await silo.audit(env, probes=["noop", "lazy"], out=tmp_path / "a")
    with pytest.raises(ValueError, match="No probe given"):
        await silo.audit(env, probes=[], out=tmp_path / "a")
    with pytest.raises(silo.SiloError) as caught:
        await silo.audit(env, ["T-NOPE"], out=tmp_path / "a")
    assert caught.value.code == "task_not_found"
    assert not (tmp_path / "a").exists()


# --- the CLI --------------------------------------------------------------------------------------


def _on_disk(project: Path, name: str, task_ids: list[str] | None = None) -> None:
    """The audit world as the environment ``name`` of ``project`` (some of its tasks)."""
    assert cli("init", name).exit_code == 0
    env_dir = project / ".silo" / "environments" / name
    (env_dir / "__init__.py").write_text(
        "from tests.audit_world import bind_tools, create_state, families, verifiers\n",
        encoding="utf-8",
    )
    for task in audit_world.tasks():
        if task_ids is None or task.id in task_ids:
            (env_dir / "tasks" / f"{task.id}.json").write_text(json.dumps(task.to_dict()))


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose environment ``shop`` is the audit world, on disk."""
    monkeypatch.chdir(tmp_path)
    _on_disk(tmp_path, "shop")
    return tmp_path


SOLVER = "tests.audit_world:solver"


def test_the_cli_prints_the_verdicts_and_writes_the_audit(shop: Path) -> None:
    result = cli("audit", "--env", "shop", "--solver", SOLVER)
    assert result.exit_code == 1, result.output  # gameable and unsolved tasks
    lines = result.output.splitlines()
    assert lines[0].split() == ["TASK", "VERDICT", "SOLVER", "BEST", "PROBE", "GAP", "WHY"]
    shown = {line.split()[0]: line.split()[1] for line in lines[1:10]}
    assert shown == EXPECTED
    assert "T-IGNORED    loose     1.00" in result.output
    assert "alter of call 0 (set_discount) percent=" in result.output
    assert lines[10] == "9 tasks: 3 sound, 3 gameable, 2 loose, 1 unsolved"
    (audit_dir,) = (shop / ".silo" / "audits").iterdir()
    assert lines[11] == f"Written to .silo/audits/{audit_dir.name} (audit.json, audit.md, runs/)."
    written = json.loads((audit_dir / "audit.json").read_text())
    assert written["auditId"] == audit_dir.name
    assert {e["task"]: e["verdict"] for e in written["tasks"]} == EXPECTED


async def test_an_audit_is_written_in_its_environment_s_project_by_default(
    shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = shop / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    env = silo.load_environment("shop", shop)
    report = await silo.audit(env, ["T-SOUND"], probes=["noop"])
    assert report.path == shop / ".silo" / "audits" / report.audit_id
    assert (report.path / "audit.json").is_file() and not (elsewhere / ".silo").exists()
    # A code-first environment has no project: the current directory's .silo/audits/.
    code_first = await silo.audit(audit_world.environment(), ["T-SOUND"], probes=["noop"])
    assert code_first.path == elsewhere / ".silo" / "audits" / code_first.audit_id


def test_the_cli_prints_audit_json_with_json(shop: Path) -> None:
    result = cli("audit", "--env", "shop", "--task", "T-SOUND", "--probes", "noop", "--json")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    (entry,) = printed["tasks"]
    assert entry["verdict"] == "sound" and entry["solver"] is None and entry["gap"] is None
    assert list(entry["probes"]) == ["noop"]
    audit_dir = shop / ".silo" / "audits" / printed["auditId"]
    assert json.loads((audit_dir / "audit.json").read_text()) == printed


def test_the_cli_gives_the_same_audit_json_twice(shop: Path) -> None:
    args = ["audit", "--env", "shop", "--solver", SOLVER, "--family", "discount-order"]
    args += ["--count", "2", "--task", "T-IGNORED", "--task", CHAT, "--seed", "7", "--json"]
    first, second = cli(*args), cli(*args, "--out", "elsewhere")
    assert first.exit_code == second.exit_code == 0, first.output  # loose fails only on loose
    one, two = json.loads(first.stdout), json.loads(second.stdout)
    assert [e["verdict"] for e in one["tasks"]] == ["loose", "sound", "sound", "sound"]
    assert _without_ids(one) == _without_ids(two)
    assert json.loads((shop / "elsewhere" / "audit.json").read_text()) == two


@pytest.mark.parametrize(
    ("tasks", "fail_on", "code"),
    [
        (["T-IGNORED", "T-SOUND"], "gameable", 0),  # loose is not a failure by default
        (["T-IGNORED", "T-SOUND"], "loose", 1),
        (["T-SOUND"], "loose", 0),
        (["T-FAILING"], "gameable", 1),  # unsolved fails too
        (["T-UNTOUCHED"], "never", 0),
        (["T-UNTOUCHED"], "gameable", 1),
    ],
)
def test_fail_on_sets_the_exit_code(shop: Path, tasks: list[str], fail_on: str, code: int) -> None:
    args = [arg for task in tasks for arg in ("--task", task)]
    result = cli("audit", "--env", "shop", "--solver", SOLVER, "--fail-on", fail_on, *args)
    assert result.exit_code == code, result.output


@pytest.mark.parametrize("probes", ["", " , ", "noop,lazy"])
def test_an_empty_or_unknown_probe_list_is_a_usage_error(shop: Path, probes: str) -> None:
    result = cli("audit", "--env", "shop", "--probes", probes)
    assert result.exit_code == 2
    assert "--probes" in result.output
    assert not (shop / ".silo" / "audits").exists()


def test_an_unknown_task_is_one_error_line(shop: Path) -> None:
    result = cli("audit", "--env", "shop", "--task", "T-NOPE", "--out", "elsewhere")
    assert result.exit_code == 1
    assert result.output.startswith('error: task_not_found: Task "T-NOPE" was not found')
    assert not (shop / "elsewhere").exists()


# --- family instances -----------------------------------------------------------------------------


async def test_instances_are_solved_by_their_gold_and_audit_sound(tmp_path: Path) -> None:
    report = await _audit(tmp_path, solver=None, families={"discount-order": 3})
    ids = [e["task"] for e in report.tasks]
    env = audit_world.environment()
    assert ids == [t.id for t in env.instances("discount-order", 3)]  # eval's rule: test, seed 0
    for entry in report.tasks:
        assert entry["verdict"] == "sound", entry
        assert entry["solver"]["passed"] and entry["gap"] is not None
        kinds = {(m["kind"], m["call"].get("argument")) for m in entry["mutants"]}
        assert kinds == {
            ("drop", None),
            ("repeat", None),
            ("alter", "orderId"),
            ("alter", "percent"),
        }
    # Hand-written tasks come first, instances after; --solver serves the hand-written ones.
    both = await _audit(tmp_path / "both", tasks=["T-IGNORED"], families={"discount-order": 1})
    assert [e["verdict"] for e in both.tasks] == ["loose", "sound"]


def test_the_cli_audits_instances_with_family_and_count(shop: Path) -> None:
    result = cli("audit", "--env", "shop", "--family", "discount-order", "--count", "2", "--json")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert [e["task"].split("#")[0] for e in printed["tasks"]] == ["discount-order"] * 2
    assert printed["counts"]["sound"] == 2
    alone = cli("audit", "--env", "shop", "--count", "2")
    assert alone.exit_code == 2 and "--count applies to --family" in alone.output


def test_env_validate_audit_adds_task_gameable_and_task_loose(shop: Path) -> None:
    # Tasks the do-nothing agent fails and the solver solves: validation alone passes them.
    _on_disk(shop, "fine", ["T-NUMBER", "T-ANYWRITE", "T-ONEOFTWO", "T-IGNORED", "T-SOUND", CHAT])
    plain = cli("env", "validate", "--env", "fine", "--solver", SOLVER, "--instances", "2")
    assert plain.exit_code == 0, plain.output
    result = cli(
        "env",
        "validate",
        "--env",
        "fine",
        "--solver",
        SOLVER,
        "--instances",
        "2",
        "--audit",
        "--json",
    )
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    found = {
        (f["code"], f["message"].split('"')[1]) for f in report["findings"] if f["level"] == "error"
    }
    assert found == {
        ("task_gameable", "T-NUMBER"),
        ("task_gameable", "T-ANYWRITE"),
        ("task_loose", "T-ONEOFTWO"),
        ("task_loose", "T-IGNORED"),
    }
    loose = next(f["message"] for f in report["findings"] if "T-IGNORED" in f["message"])
    assert "alter of call 0 (set_discount) percent=" in loose and "/runs/run_" in loose
    # Without a solver there are no mutants, so nothing is loose.
    bare = cli("env", "validate", "--env", "fine", "--instances", "2", "--audit")
    codes = {line.split("\t")[1] for line in bare.output.splitlines() if line.startswith("ERROR")}
    assert codes == {"task_gameable"}


def test_env_validate_audit_waits_for_a_valid_environment(shop: Path) -> None:
    result = cli("env", "validate", "--env", "shop", "--instances", "2", "--audit")
    assert result.exit_code == 1  # T-UNTOUCHED passes untouched: validation says so itself
    assert "verifier_passes_noop" in result.output
    assert "WARNING\taudit_skipped\tThe audit did not run: fix the errors above first." in (
        result.output
    )
    assert not (shop / ".silo" / "audits").exists()


def test_the_docs_page_prints_what_it_shows() -> None:
    page = (Path(__file__).parent.parent / "docs" / "audit.md").read_text(encoding="utf-8")
    section = page.split("## A weak verifier, and how to fix it", 1)[1]
    program = section.split("```python\n", 1)[1].split("```", 1)[0]
    shown = section.split("```text\n", 1)[1].split("```", 1)[0]
    ran = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    assert ran.stdout.strip() == shown.strip()


@extra("rich")
def test_the_progress_line_counts_verdicts_on_a_terminal_only() -> None:
    from io import StringIO

    from rich.console import Console

    from silo_async.cli._audit import AuditProgress

    screen = StringIO()
    console = Console(file=screen, force_terminal=True, width=100)
    with AuditProgress(True, console) as progress:
        progress.judged({"verdict": "sound"})
        progress.judged({"verdict": "loose"})
        progress.progress.refresh()
    assert "2 tasks judged: 1 loose, 1 sound" in screen.getvalue()
    quiet = AuditProgress(False)
    with quiet:
        quiet.judged({"verdict": "gameable"})
    assert quiet.progress is None and quiet.counts["gameable"] == 1


async def test_an_eval_report_shows_the_verdicts_of_an_audit_of_its_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = audit_world.environment()
    tasks = ["T-SOUND", "T-IGNORED", "T-NUMBER"]
    agents = {"solver": audit_world.solver}
    evals = tmp_path / ".silo" / "evals"
    await silo.evaluate(env, tasks, agents, out_dir=evals / "e1")
    assert 'id="audit"' not in (evals / "e1" / "report.html").read_text()  # no audit yet
    older = await silo.audit(env, ["T-SOUND"], probes=["noop"])  # .silo/audits/ here
    report = await silo.audit(env, ["T-IGNORED", "T-NUMBER"], solver=audit_world.solver)
    other = silo.Environment(name="elsewhere", create_state=audit_world.create_state)
    await silo.audit(other, [])  # another environment's audit is not this report's
    await silo.evaluate(env, tasks, agents, out_dir=evals / "e2")
    page = (evals / "e2" / "report.html").read_text()
    table = page.split('<table id="audit">', 1)[1].split("</table>", 1)[0]
    rows = [r.split("</td>")[:2] for r in table.split("<tr>")[2:]]
    verdicts = {row[0].removeprefix("<td>"): row[1].rsplit("<b>", 1)[1] for row in rows}
    assert verdicts == {
        "T-SOUND": "sound</b>",
        "T-IGNORED": "loose</b>",
        "T-NUMBER": "gameable</b>",
    }
    assert report.audit_id in table and older.audit_id in table


class _Customer:
    """A user that is no script: it approves and gives its address in its own words."""

    async def reply(self, turn: silo.UserTurn) -> silo.UserReply:
        if "approve" in turn.text.lower():
            await turn.call_tool("approve_change", {"orderId": "ORD-007"})
            return silo.UserReply("Sure, approved.")
        if "address" in turn.text.lower():
            return silo.UserReply("It is 12 Elm Street.")
        return silo.UserReply("Thanks, bye!", ended=True)


async def test_another_user_plays_the_conversations(tmp_path: Path) -> None:
    report = await _audit(tmp_path, tasks=[CHAT], user=lambda task: _Customer())
    entry = report.tasks[0]
    assert entry["verdict"] == "sound"
    trace = (report.path / "runs" / entry["solver"]["runId"] / "trace.jsonl").read_text()
    assert "Sure, approved." in trace  # the solver talked to this user, not the script


def test_the_cli_user_flags_are_a_model_user_s(shop: Path) -> None:
    result = cli("audit", "--env", "shop", "--user-base-url", "http://127.0.0.1:9")
    assert result.exit_code == 2 and "--user-model" in result.output
