"""Field-level state diff: which fields of each changed record changed, bounded and stable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
import silo_async.templates.crm as crm
from silo_async import state_diff
from silo_async._diff_fields import MAX_FIELDS, MAX_LIST_ITEMS, MAX_RECORDS, MAX_TOTAL, MAX_VALUE

from .template_support import load_agent, template_environment

CRM = template_environment("crm", crm)


@pytest.mark.anyio
async def test_a_crm_solver_run_names_every_changed_field(tmp_path: Path) -> None:
    result = await silo.run(CRM, "TASK-001", load_agent("crm_solver"), runs_dir=tmp_path)
    assert result.passed
    assert result.run_dir is not None
    on_disk = json.loads((result.run_dir / "state-diff.json").read_text())
    leads = on_disk["collections"]["leads"]
    assert leads["changed"] == ["LEAD-001"]  # Silo's keys are kept as they were
    changes = {f["path"]: (f.get("from"), f["to"]) for f in leads["fields"]["LEAD-001"]}
    assert changes["status"] == ("qualified", "converted")
    assert changes["convertedAccountId"] == (None, "ACC-013")
    assert "fieldsOmitted" not in leads  # nothing was left out of a small change
    sequences = on_disk["collections"]["sequences"]["fields"]
    assert sequences["ACC"] == [{"path": "", "from": 12, "to": 13}]  # a plain value: the record
    assert "fields" not in on_disk["collections"]["accounts"]  # only added: no field detail


def test_nested_paths_lists_and_odd_keys() -> None:
    before = {
        "people": {
            "P1": {
                "address": {"city": "Oslo", "zip": "0150"},
                "tags": ["a", "b", "b"],
                "deals": [{"id": "D1", "v": 1}, {"id": "D2", "v": 2}],
                "lines": [{"sku": "x"}, {"sku": "y"}],
                "a.b": 1,
                "gone": True,
            }
        }
    }
    after = {
        "people": {
            "P1": {
                "address": {"city": "Bergen", "zip": "0150"},
                "tags": ["b", "c"],
                "deals": [{"id": "D2", "v": 3}, {"id": "D3", "v": 0}],
                "lines": [{"sku": "x"}, {"sku": "z"}, {"sku": "w"}],
                "a.b": 2,
            }
        }
    }
    entries = state_diff(before, after)["collections"]["people"]["fields"]["P1"]
    assert entries == [
        {"path": "address.city", "from": "Oslo", "to": "Bergen"},
        {"path": "tags", "fromLength": 3, "toLength": 2, "added": ["c"], "removed": ["a", "b"]},
        {
            "path": "deals",
            "fromLength": 2,
            "toLength": 2,
            "added": ["D3"],
            "removed": ["D1"],
            "changed": ["D2"],
        },
        {"path": "lines", "fromLength": 2, "toLength": 3, "added": ["[2]"], "changed": ["[1]"]},
        {"path": '["a.b"]', "from": 1, "to": 2},
        {"path": "gone", "from": True},  # removed: no "to", as in scalars
    ]


def test_long_values_and_long_lists_are_cut_with_a_count() -> None:
    before = {"r": {"R1": {"note": "x" * 1000, "ids": list(range(50)), "blob": {"k": "v" * 500}}}}
    after = {"r": {"R1": {"note": "y" * 1000, "ids": list(range(100, 150)), "blob": None}}}
    note, ids, blob = state_diff(before, after)["collections"]["r"]["fields"]["R1"]
    assert note["from"] == "x" * MAX_VALUE + "…"
    assert note["cut"] == {"from": 1000 - MAX_VALUE, "to": 1000 - MAX_VALUE}
    assert ids["added"] == list(range(100, 100 + MAX_LIST_ITEMS))
    assert ids["itemsOmitted"] == 2 * (50 - MAX_LIST_ITEMS)
    assert isinstance(blob["from"], str) and blob["from"].startswith('{"k":"vvv')
    assert blob["to"] is None and blob["cut"].keys() == {"from"}


def rewrite_everything(state: dict[str, Any], args: dict[str, Any]) -> str:
    """Touch every field of every record of every collection of the crm world."""
    for collection in state.values():
        rows = collection.values() if isinstance(collection, dict) else collection
        for row in rows:
            if isinstance(row, dict):
                for key, value in list(row.items()):
                    if key != "id":
                        row[key] = [value, "rewritten " * 30]
    return "done"


def crm_with_a_vandal() -> silo.Environment:
    vandal = silo.tool(name="rewrite_everything", description="Rewrite every record.")(
        rewrite_everything
    )
    return silo.Environment(
        name="crm",
        create_state=crm.create_state,
        bind=lambda state: [*crm.bind_tools(state), vandal],
        verifiers=CRM.verifiers,
        tasks=CRM.tasks,
    )


@pytest.mark.anyio
async def test_a_rollout_that_rewrites_every_record_gives_a_bounded_diff(tmp_path: Path) -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("rewrite_everything", {})
        return "done"

    env = crm_with_a_vandal()
    first = await silo.run(env, "TASK-001", agent, runs_dir=tmp_path / "a")
    second = await silo.run(env, "TASK-001", agent, runs_dir=tmp_path / "b")
    assert first.run_dir is not None and second.run_dir is not None
    raw = (first.run_dir / "state-diff.json").read_bytes()
    assert raw == (second.run_dir / "state-diff.json").read_bytes()  # byte-deterministic
    diff = json.loads(raw)
    world: Any = crm.create_state()
    records = sum(
        isinstance(row, dict)
        for c in world.values()
        for row in (c.values() if isinstance(c, dict) else c)
    )
    shown = [
        e for c in diff["collections"].values() for es in c.get("fields", {}).values() for e in es
    ]
    omitted = [c["fieldsOmitted"] for c in diff["collections"].values() if "fieldsOmitted" in c]
    changed = sum(len(c["changed"]) for c in diff["collections"].values())
    assert changed == records > MAX_RECORDS  # Silo's keys still name every changed record
    assert len(shown) == MAX_TOTAL  # the whole diff holds at most MAX_TOTAL field entries...
    described = sum(len(c.get("fields", {})) for c in diff["collections"].values())
    assert described + sum(o["records"] for o in omitted) == changed  # ...and counts the rest
    assert sum(o["fields"] for o in omitted) > 0
    assert all(
        len(es) <= MAX_FIELDS
        for c in diff["collections"].values()
        for es in c.get("fields", {}).values()
    )
    assert len(raw) < 100_000


def test_field_detail_does_not_grow_with_the_world() -> None:
    def world(n: int, text: str) -> dict[str, Any]:
        return {
            "rows": {f"R{i}": {f"f{j}": f"{text}{i}{j}" * 20 for j in range(40)} for i in range(n)}
        }

    sizes = []
    for n in (200, 5_000):
        diff = state_diff(world(n, "a"), world(n, "b"))
        rows = diff["collections"]["rows"]
        described = MAX_TOTAL // MAX_FIELDS  # 40 fields each: every record fills its cap
        assert len(rows["fields"]) == described
        assert rows["fieldsOmitted"] == {"records": n - described, "fields": described * 20}
        sizes.append(len(json.dumps(rows["fields"])))
    assert sizes[0] == sizes[1] < 60_000  # 25x the world, the same detail


def test_runs_show_prints_the_field_level_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from silo_async.cli._app import app

    solver = str(Path(__file__).resolve().parent.parent / "examples" / "agents" / "crm_solver.py")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["init", "crm", "--template", "crm"]).exit_code == 0
    ran = runner.invoke(app, ["run", "--env", "crm", "--task", "TASK-001", "--agent", solver])
    assert ran.exit_code == 0, ran.output
    assert "Run saved   .silo/runs/" in ran.stdout
    run_id = next((tmp_path / ".silo" / "runs").iterdir()).name
    shown = runner.invoke(app, ["runs", "show", run_id])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert "Run dir     .silo/runs/" + run_id in lines  # an old run: not "Run saved"
    start = lines.index("State diff")
    assert lines[start + 1 :][:4] == [
        "  accounts: 1 added (ACC-013)",
        "  contacts: 1 added (CON-021)",
        "  leads: 1 changed (LEAD-001)",
        '    LEAD-001.status  "qualified" -> "converted"',
    ]
    as_json = runner.invoke(app, ["runs", "show", run_id, "--json"])
    fields = json.loads(as_json.stdout)["stateDiff"]["collections"]["leads"]["fields"]
    assert fields["LEAD-001"][0] == {"path": "status", "from": "qualified", "to": "converted"}
