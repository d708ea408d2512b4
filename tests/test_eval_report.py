"""report.html: well-formed, self-contained (no URL at all), carries every rollout's details."""

from __future__ import annotations

import base64
import gzip
import json
import os
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.eval import EvalSummary, evaluate
from silo_async.eval._report._data import COLUMNS, DetailStore, pack_details
from silo_async.eval._report._details import MAX_STEPS, MAX_TEXT, compact_details, shrink_diff

from .test_eval_support import (
    bad_agent,
    big_agent,
    crashing_agent,
    faulty_agent,
    good_agent,
    make_env,
)

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr"}


class Checker(HTMLParser):
    """Checks nesting and collects tables, scripts and text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.ids: set[str] = set()
        self.scripts: dict[str, str] = {}
        self.text: list[str] = []
        self._script: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if tag == "script":
            self._script = str(found.get("id") or f"inline{len(self.scripts)}")
            self.scripts[self._script] = ""
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack, f"stray </{tag}>"
        assert self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1]}>"
        self.stack.pop()
        if tag == "script":
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self.scripts[self._script] += data
        else:
            self.text.append(data)


def parse(html: str) -> Checker:
    checker = Checker()
    checker.feed(html)
    checker.close()
    assert checker.stack == [], f"unclosed: {checker.stack}"
    return checker


def unpack(blob: str) -> list[Any]:
    data: list[Any] = json.loads(gzip.decompress(base64.urlsafe_b64decode(blob.strip())))
    return data


async def make_report(tmp_path: Path) -> tuple[EvalSummary, str]:
    agents: dict[str, silo.Agent] = {
        "good": good_agent,
        "bad": bad_agent,
        "faulty": faulty_agent,
        "crash": crashing_agent,
        "big": big_agent,
    }
    out = tmp_path / "ev"
    summary = await evaluate(make_env(), None, agents, runs=2, out_dir=out)
    return summary, (out / "report.html").read_text(encoding="utf-8")


def col(name: str) -> int:
    return COLUMNS.index(name)


@pytest.mark.anyio
async def test_report_is_well_formed_and_complete(tmp_path: Path) -> None:
    summary, html = await make_report(tmp_path)
    page = parse(html)
    assert {"filters", "agents", "chart", "side-by-side", "tasks", "rollouts", "run"} <= page.ids
    assert {"meta", "index", "details", "f-agent", "f-task", "f-reason", "f-result"} <= page.ids
    meta = json.loads(page.scripts["meta"])
    assert [t["id"] for t in meta["tasks"]] == ["T-1", "T-2"]
    assert meta["agents"] == ["good", "bad", "faulty", "crash", "big"]
    rows = unpack(page.scripts["index"])
    assert [r[col("runId")] for r in rows] == [r.run_id for r in summary.records]
    assert all(r[col("runDir")] is None for r in rows)  # the default runs/<id> is implied
    details = unpack(page.scripts["details"])
    first_good = next(i for i, r in enumerate(summary.records) if r.agent == "good")
    entry = details[rows[first_good][col("details")]]
    calls = [s for s in entry["s"] if s[0] == 0]
    assert [c[2] for c in calls] == ["get_item", "complete_item"]
    assert json.loads(calls[0][3]) == {"itemId": "A"}
    assert "https://example.com/a" in calls[0][4]  # data intact once decoded...
    assert entry["k"][0][:2] == ["A is done", 1]
    fields = entry["d"]["collections"]["items"]["fields"]
    assert fields == {"A": [{"path": "done", "from": False, "to": True}]}


@pytest.mark.anyio
async def test_identical_rollouts_share_their_details(tmp_path: Path) -> None:
    summary, html = await make_report(tmp_path)
    page = parse(html)
    rows, details = unpack(page.scripts["index"]), unpack(page.scripts["details"])
    refs: dict[tuple[str, str], set[int]] = {(r.task_id, r.agent): set() for r in summary.records}
    for record, line in zip(summary.records, rows, strict=True):
        refs[(record.task_id, record.agent)].add(line[col("details")])
    assert all(len(ids) == 1 for ids in refs.values())  # 2 runs each, one entry
    assert len(details) == len(refs) == 10


@pytest.mark.anyio
async def test_report_has_no_url_at_all(tmp_path: Path) -> None:
    _, html = await make_report(tmp_path)
    for needle in ("http://", "https://", "//cdn", "//"):
        assert needle not in html  # ...but no URL-like text in the file, not even in data
    assert html.count("</script>") == 4  # recorded "</script>" text cannot close a tag


@pytest.mark.anyio
async def test_report_marks_faults_and_errors(tmp_path: Path) -> None:
    summary, html = await make_report(tmp_path)
    page = parse(html)
    rows, details = unpack(page.scripts["index"]), unpack(page.scripts["details"])
    faulty = next(i for i, r in enumerate(summary.records) if r.agent == "faulty")
    fault_call = details[rows[faulty][col("details")]]["s"][0]
    assert fault_call[2] == "explode" and fault_call[5] == 1
    assert fault_call[6].startswith("RuntimeError: the environment is broken")
    crash = next(i for i, r in enumerate(summary.records) if r.agent == "crash")
    entry = details[rows[crash][col("details")]]
    assert "model returned garbage" in entry["e"]
    assert "Traceback (most recent call last)" in entry["t"]
    assert [2, "agent_error", "ValueError: model returned garbage"] in entry["s"]


@pytest.mark.anyio
async def test_huge_outputs_are_kept_to_a_bound_with_a_note(tmp_path: Path) -> None:
    summary, html = await make_report(tmp_path)
    page = parse(html)
    rows, details = unpack(page.scripts["index"]), unpack(page.scripts["details"])
    big = next(i for i, r in enumerate(summary.records) if r.agent == "big")
    output = details[rows[big][col("details")]]["s"][0][4]
    assert len(output) < MAX_TEXT + 100 and "more characters]" in output
    assert "truncated" in details[rows[big][col("details")]]["o"]
    assert len(html) < 200_000  # 100 kB outputs are not embedded in full


def test_details_store_and_budget_keep_failures_first() -> None:
    store = DetailStore(budget=60)
    assert store.add({"o": "a"}) == 0 and store.add({"o": "a"}) == 0  # one entry
    assert store.add({"o": "b" * 100}) == -1 and store.dropped == 1  # over the store's budget
    assert store.add(None) == -1
    texts = [json.dumps({"o": os.urandom(60_000).hex() + chr(65 + i)}) for i in range(6)]
    records = [type("R", (), {"passed": i % 2 == 0, "env_fault": False, "reward_valid": True,
                              "termination_reason": "completed"})() for i in range(6)]  # fmt: skip
    packed, positions = pack_details(texts, records, list(range(6)), budget=1)
    kept = [i for i, p in enumerate(positions) if p >= 0]
    assert kept == [1]  # the first failed rollout gets in, nothing else fits
    assert unpack(packed)[0]["o"].endswith("B")


def test_a_large_diff_is_shrunk_with_counts() -> None:
    diff: dict[str, Any] = {
        "scalars": [],
        "collections": {
            "rows": {
                "added": [f"R{i}" for i in range(2000)],
                "removed": [],
                "changed": ["X"],
                "fields": {"X": [{"path": "v", "from": 1, "to": 2}]},
            }
        },
    }
    small = shrink_diff(diff, limit=2000)
    rows = small["collections"]["rows"]
    assert rows["fields"] == {} and rows["fieldsOmitted"] == {"records": 1, "fields": 0}
    assert len(rows["added"]) == 20 and rows["addedOmitted"] == 1980
    assert diff["collections"]["rows"]["fields"]  # the original is untouched
    assert shrink_diff({"scalars": [], "collections": {}}) == {"scalars": [], "collections": {}}


@pytest.mark.anyio
async def test_model_turns_sit_between_the_tool_calls_they_made() -> None:
    async def thinker(ctx: silo.AgentContext) -> str:
        message = {"role": "assistant", "content": "Reading A first.", "toolCalls": []}
        ctx.record_model_step(model="m1", input_tokens=12, output_tokens=4, message=message)
        await ctx.call_tool("get_item", {"itemId": "A"})
        ctx.record_model_step(model="m1", input_tokens=30, output_tokens=2, stop_reason="stop")
        return "done"

    result = await silo.run(make_env(), "T-1", thinker)
    steps = compact_details(result)["s"]
    assert [s[0] for s in steps] == [1, 0, 1]
    assert steps[0][1:6] == ["m1", 12, 4, None, "Reading A first."]
    assert steps[2][4] == "stop"


@pytest.mark.anyio
async def test_details_do_not_grow_with_the_trace(tmp_path: Path) -> None:
    async def chatty(ctx: silo.AgentContext) -> str:
        for _ in range(1_000):
            await ctx.call_tool("get_item", {"itemId": "A"})
        return "read it a thousand times"

    out = tmp_path / "ev"
    await evaluate(make_env(), ["T-1"], {"c": chatty}, max_tool_calls=2_000, out_dir=out)
    page = parse((out / "report.html").read_text(encoding="utf-8"))
    [entry] = unpack(page.scripts["details"])
    assert len(entry["s"]) == MAX_STEPS and entry["n"] == 1_000 - MAX_STEPS
    assert len(json.dumps(entry)) < 80_000  # the trace.jsonl of this rollout is ~250 kB
