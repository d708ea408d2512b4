"""validate(): stable finding codes, ok semantics, and the do-nothing credibility check."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from silo_async.project import EnvironmentHandle, Project, ValidationReport

pytestmark = pytest.mark.anyio

TOOLS = """\
import silo_async as silo

SCHEMA = {"type": "object", "additionalProperties": False}


@silo.tool(name="ship", description="Ship the order.", input_schema=SCHEMA)
def ship(state, input):
    state["order"]["status"] = "shipped"
    return "ok"


tools = [ship]
"""

VERIFIERS = """\
import silo_async as silo


@silo.verifier(id="VER-001", task_id="TASK-001", name="order shipped")
def ver_001(final, initial, ctx):
    return [silo.check("shipped", final["order"]["status"] == "shipped")]


verifiers = [ver_001]
"""

TASK = {
    "id": "TASK-001",
    "title": "Ship",
    "instruction": "Ship the order.",
    "verifierId": "VER-001",
}


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


async def good_env(tmp_path: Path, name: str = "shop") -> EnvironmentHandle:
    project = await Project.open(tmp_path)
    env = await project.environments.create(name)
    await env.data.add("order", {"id": "ORD-1", "status": "open"})
    write(env.path / "tools" / "__init__.py", TOOLS)
    write(env.path / "verifiers" / "__init__.py", VERIFIERS)
    await env.tasks.add(TASK)
    return env


def codes(report: ValidationReport) -> list[tuple[str, str]]:
    return [(f.level, f.code) for f in report.findings]


async def test_blank_environment_is_ok_with_warnings(tmp_path: Path) -> None:
    project = await Project.open(tmp_path)
    env = await project.environments.create("blank-one")
    report = await env.validate()
    assert report.ok
    assert codes(report) == [("warning", "no_tasks"), ("warning", "no_tools")]
    assert report.to_dict() == {
        "environment": "blank-one",
        "ok": True,
        "findings": [
            {
                "level": "warning",
                "code": "no_tasks",
                "message": "No tasks defined, so this environment cannot be run yet.",
            },
            {
                "level": "warning",
                "code": "no_tools",
                "message": "No tools registered, so the agent cannot observe or change anything.",
            },
        ],
        "counts": {"data": 0, "tasks": 0, "tools": 0, "verifiers": 0},
        "solver": None,
    }


async def test_good_environment_is_clean(tmp_path: Path) -> None:
    env = await good_env(tmp_path)
    report = await env.validate()
    assert codes(report) == []
    assert report.ok
    assert report.counts == {"data": 1, "tasks": 1, "tools": 1, "verifiers": 1}
    assert not (tmp_path / ".silo" / "runs").exists()  # credibility runs stay in memory


async def test_verifier_passing_noop_agent_is_an_error(tmp_path: Path) -> None:
    env = await good_env(tmp_path)
    lenient = VERIFIERS.replace('final["order"]["status"] == "shipped"', "True")
    write(env.path / "verifiers" / "__init__.py", lenient)
    report = await env.validate()
    assert not report.ok
    assert codes(report) == [("error", "verifier_passes_noop")]
    assert report.findings[0].message == (
        'Task "TASK-001" passes with an agent that does nothing: verifier "VER-001" must '
        "require a change in the world or an answer."
    )


async def test_verifier_raising_on_untouched_world(tmp_path: Path) -> None:
    env = await good_env(tmp_path)
    write(
        env.path / "verifiers" / "__init__.py",
        VERIFIERS.replace('final["order"]["status"]', 'final["missing"]'),
    )
    report = await env.validate()
    assert codes(report) == [("error", "verifier_failed")]
    assert "missing" in report.findings[0].message


async def test_cross_references(tmp_path: Path) -> None:
    env = await good_env(tmp_path)
    await env.tasks.add({**TASK, "id": "TASK-002", "verifierId": "VER-404"})
    await env.tasks.add({**TASK, "id": "TASK-003", "verifierId": "VER-003"})
    extra = """
@silo.verifier(id="VER-009", task_id="TASK-009")
def orphan(final, initial, ctx):
    return [silo.check("x", final["order"]["status"] == "shipped")]


@silo.verifier(id="VER-003", task_id="TASK-001")
def mismatch(final, initial, ctx):
    return [silo.check("x", final["order"]["status"] == "shipped")]


verifiers = [ver_001, orphan, mismatch]
"""
    write(env.path / "verifiers" / "__init__.py", VERIFIERS + extra)
    report = await env.validate()
    assert codes(report) == [
        ("warning", "verifier_orphan"),
        ("error", "verifier_task_mismatch"),
        ("error", "task_verifier_unresolved"),
    ]
    messages = [f.message for f in report.findings]
    assert messages == [
        'Verifier "VER-009" names task "TASK-009", which does not exist.',
        'Verifier "VER-003" claims task "TASK-001", but that task is graded by "VER-001".',
        'Task "TASK-002" names verifier "VER-404", which is not registered.',
    ]


async def test_duplicate_and_invalid_verifiers(tmp_path: Path) -> None:
    env = await good_env(tmp_path)
    write(
        env.path / "verifiers" / "__init__.py",
        VERIFIERS.replace("verifiers = [ver_001]", "verifiers = [ver_001, ver_001, 'VER-2']"),
    )
    report = await env.validate()
    assert codes(report) == [("error", "verifier_duplicate_id"), ("error", "verifier_invalid")]
    assert report.counts["verifiers"] == 3


async def test_scaffolded_stubs_are_errors_until_implemented(tmp_path: Path) -> None:
    env = await good_env(tmp_path)
    await env.tools.scaffold("refund")
    await env.verifiers.scaffold("VER-002", "TASK-002")
    await env.tasks.add({**TASK, "id": "TASK-002", "verifierId": "VER-002"})
    report = await env.validate()
    assert codes(report) == [
        ("error", "tool_not_implemented"),
        ("error", "verifier_not_implemented"),
    ]
    assert "tools/refund.py" in report.findings[0].message
    assert "verifiers/ver_002.py" in report.findings[1].message


async def test_tool_findings(tmp_path: Path) -> None:
    env = await good_env(tmp_path)
    extra = """
@silo.tool(name="odd.name", description="", input_schema={"type": "array"})
def odd(state, input):
    return 1


tools = [ship, odd]
"""
    write(env.path / "tools" / "__init__.py", TOOLS + extra)
    report = await env.validate()
    assert codes(report) == [
        ("warning", "tool_name_unportable"),
        ("warning", "tool_no_description"),
        ("error", "tool_schema_invalid"),
    ]
    assert report.counts["tools"] == 2


async def test_duplicate_tool_names(tmp_path: Path) -> None:
    env = await good_env(tmp_path)
    write(
        env.path / "tools" / "__init__.py", TOOLS.replace("tools = [ship]", "tools = [ship, ship]")
    )
    report = await env.validate()
    assert codes(report) == [("error", "tool_duplicate_name")]
    assert report.findings[0].message == 'Tool name "ship" is registered more than once.'


async def test_invalid_schema_at_definition(tmp_path: Path) -> None:
    env = await good_env(tmp_path)
    bad = TOOLS.replace('SCHEMA = {"type": "object"', 'SCHEMA = {"type": "objekt"')
    write(env.path / "tools" / "__init__.py", bad)
    report = await env.validate()
    assert codes(report) == [("error", "tool_schema_invalid")]
    assert 'Tool "ship" has an invalid input schema' in report.findings[0].message
    assert "tools/__init__.py:6" in report.findings[0].message


async def test_create_state_and_bind_failures(tmp_path: Path) -> None:
    env = await good_env(tmp_path)
    environment_py = env.path / "environment.py"
    original = environment_py.read_text()
    environment_py.write_text(original + "\n\ndef create_state():\n    raise ValueError('no')\n")
    report = await env.validate()
    assert codes(report) == [("error", "create_state_failed")]
    assert report.findings[0].message == "create_state() raised ValueError: no"
    shared = (
        "\n\n_WORLD = {'order': {'status': 'open'}}\n\ndef create_state():\n    return _WORLD\n"
    )
    environment_py.write_text(original + shared)
    assert codes(await env.validate()) == [("error", "create_state_shared")]
    environment_py.write_text(original)
    init = env.path / "__init__.py"
    init.write_text(init.read_text() + "\n\ndef bind_tools(state):\n    raise KeyError('x')\n")
    report = await env.validate()
    assert codes(report) == [("error", "bind_tools_failed")]


async def test_load_failures_and_compile_errors(tmp_path: Path) -> None:
    env = await good_env(tmp_path)
    (env.path / "silo.environment.json").unlink()
    assert codes(await env.validate()) == [("warning", "manifest_missing")]
    (env.path / "tasks" / "broken.json").write_text("[]")
    (env.path / "tasks" / "torn.json").write_text('{"id": ')
    report = await env.validate()
    # every broken task file is named, and the rest of the environment is still checked
    assert codes(report) == [
        ("error", "task_invalid"),
        ("error", "invalid_json"),
        ("warning", "manifest_missing"),
    ]
    assert 'Task file "tasks/broken.json"' in report.findings[0].message
    assert 'Task file "tasks/torn.json"' in report.findings[1].message
    assert report.counts["tasks"] == 3 and report.counts["tools"] > 0
    (env.path / "tasks" / "torn.json").unlink()
    (env.path / "tasks" / "broken.json").unlink()
    write(env.path / "tools" / "helpers.py", "def f(:\n    pass\n")
    write(env.path / "tools" / "__init__.py", "from .helpers import f\n" + TOOLS)
    report = await env.validate()
    assert codes(report) == [("error", "runtime_load_failed"), ("error", "compile_error")]
    assert report.findings[1].message.startswith("tools/helpers.py:1:7 ")
    assert not list(env.path.rglob("__pycache__"))


async def test_data_findings(tmp_path: Path) -> None:
    env = await good_env(tmp_path)
    (env.path / "data" / "bad.json").write_text("{")
    report = await env.validate()
    assert ("error", "data_invalid_json") in codes(report)
    assert report.counts["data"] == 1
    for path in (env.path / "data").iterdir():
        path.unlink()
    (env.path / "data").rmdir()
    report = await env.validate()
    assert codes(report)[0] == ("warning", "data_dir_missing")
    assert json.loads(json.dumps(report.to_dict()))["ok"] is False


async def test_stub_implemented_in_place_is_seen_in_the_same_process(tmp_path: Path) -> None:
    import os

    env = await good_env(tmp_path)
    created = (await env.tools.scaffold("refund")).created
    assert [f.code for f in (await env.validate()).findings] == ["tool_not_implemented"]
    path = env.path / created
    text = path.read_text()
    stat = path.stat()
    stub_line = next(line for line in text.splitlines() if "not implemented yet" in line)
    replacement = '    return "refunded"'
    # Same size and same mtime, so only a fresh read can tell the difference.
    path.write_text(text.replace(stub_line, replacement.ljust(len(stub_line))))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    assert (await env.validate()).findings == ()
