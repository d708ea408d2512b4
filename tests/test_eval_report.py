"""report.html: well-formed, self-contained (no URL at all), carries every rollout's details."""

from __future__ import annotations

import base64
import gzip
import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async.eval import EvalSummary, evaluate

from .test_eval_support import (
    bad_agent,
    big_agent,
    crashing_agent,
    faulty_agent,
    good_agent,
    make_env,
)

pytestmark = pytest.mark.anyio

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


def unpack(blob: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(gzip.decompress(base64.urlsafe_b64decode(blob.strip())))
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


async def test_report_is_well_formed_and_complete(tmp_path: Path) -> None:
    summary, html = await make_report(tmp_path)
    page = parse(html)
    assert {"agents", "side-by-side", "index", "details", "run", "task-0", "task-1"} <= page.ids
    text = "".join(page.text)
    assert "Side by side" in text and "★" in text
    index = json.loads(page.scripts["index"])
    assert index["tasks"] == ["T-1", "T-2"]
    assert [r[10] for r in index["runs"]] == [r.run_id for r in summary.records]
    details = unpack(page.scripts["details"])
    assert len(details) == summary.finished == 20
    first_good = next(i for i, r in enumerate(summary.records) if r.agent == "good")
    calls = details[first_good]["c"]
    assert [c[1] for c in calls] == ["get_item", "complete_item"]
    assert json.loads(calls[0][2]) == {"itemId": "A"}
    assert "https://example.com/a" in calls[0][3]  # data intact once decoded...
    checks = details[first_good]["k"]
    assert checks[0][:2] == ["A is done", 1]
    assert details[first_good]["d"]["collections"]["items"]["changed"] == ["A"]


async def test_report_has_no_url_at_all(tmp_path: Path) -> None:
    _, html = await make_report(tmp_path)
    for needle in ("http://", "https://", "//cdn", "//"):
        assert needle not in html  # ...but no URL-like text in the file, not even in data
    assert html.count("</script>") == 3  # recorded "</script>" text cannot close a tag


async def test_report_marks_faults_and_errors(tmp_path: Path) -> None:
    summary, html = await make_report(tmp_path)
    page = parse(html)
    details = unpack(page.scripts["details"])
    faulty = next(i for i, r in enumerate(summary.records) if r.agent == "faulty")
    fault_call = details[faulty]["c"][0]
    assert fault_call[1] == "explode" and fault_call[4] == 1
    assert fault_call[6].startswith("RuntimeError: the environment is broken")
    crash = next(i for i, r in enumerate(summary.records) if r.agent == "crash")
    assert "model returned garbage" in details[crash]["e"]


async def test_huge_outputs_are_truncated_with_a_note(tmp_path: Path) -> None:
    summary, html = await make_report(tmp_path)
    details = unpack(parse(html).scripts["details"])
    big = next(i for i, r in enumerate(summary.records) if r.agent == "big")
    output = details[big]["c"][0][3]
    assert len(output) < 600 and "truncated" in output and "more characters" in output
    assert len(details[big]["o"]) < 2000 and "truncated" in details[big]["o"]
    assert len(html) < 200_000  # 100 kB outputs are not embedded in full


CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
)


def chromium_dump(url: str, tmp_path: Path) -> list[str]:
    """Headless Chromium printing the DOM of ``url``, offline and with a throwaway profile."""
    return [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        # No network here: keep Chromium from trying to reach its services at start-up.
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        "--virtual-time-budget=5000",
        "--dump-dom",
        url,
    ]


@pytest.mark.skipif(CHROMIUM is None, reason="needs chromium (apt-get install chromium)")
async def test_report_renders_a_rollout_in_headless_chromium(tmp_path: Path) -> None:
    summary, _ = await make_report(tmp_path)
    faulty = next(r for r in summary.records if r.agent == "faulty")
    url = (tmp_path / "ev" / "report.html").as_uri() + f"#run={faulty.run_id}"
    with anyio.fail_after(120):
        done = await anyio.run_process(chromium_dump(url, tmp_path))
    dom = done.stdout.decode()
    assert f"Rollout {faulty.run_id}" in dom
    assert "Trace (3 tool calls)" in dom
    assert "FAULT RuntimeError" in dom and "A is done" in dom and "State diff" in dom


@pytest.mark.skipif(CHROMIUM is None, reason="needs chromium (apt-get install chromium)")
async def test_opening_a_task_lists_its_rollouts_in_headless_chromium(tmp_path: Path) -> None:
    summary, _ = await make_report(tmp_path)
    url = (tmp_path / "ev" / "report.html").as_uri() + "#task-1"
    with anyio.fail_after(120):
        done = await anyio.run_process(chromium_dump(url, tmp_path))
    dom = done.stdout.decode()
    for record in summary.records:
        assert (f"<td>{record.run_id}</td>" in dom) == (record.task_id == "T-2")
    assert "failed and faulted only" in dom


@pytest.mark.skipif(CHROMIUM is None, reason="needs chromium (apt-get install chromium)")
async def test_long_run_lists_are_paged_in_headless_chromium(tmp_path: Path) -> None:
    summary = await evaluate(
        make_env(), ["T-1"], {"g": good_agent}, runs=620, out_dir=tmp_path / "e"
    )
    url = (tmp_path / "e" / "report.html").as_uri() + "#task-0"
    with anyio.fail_after(120):
        done = await anyio.run_process(chromium_dump(url, tmp_path))
    dom = done.stdout.decode()
    shown = [r for r in summary.records if f"<td>{r.run_id}</td>" in dom]
    assert shown == summary.records[:500]
    assert "show 120 more of 120" in dom
