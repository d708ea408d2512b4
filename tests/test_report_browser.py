"""report.html in headless Chromium: filters, the chart, the drill-down, and 10,000 rollouts."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.eval import EvalSummary, evaluate, read_summary

from .browser import browser, needs_chromium, open_report, run_async
from .report_support import synthetic_eval
from .test_eval_support import (
    bad_agent,
    big_agent,
    crashing_agent,
    faulty_agent,
    good_agent,
    make_env,
)

__all__ = ["browser"]  # the fixture, shared with pytest

pytestmark = needs_chromium


async def thinker(ctx: silo.AgentContext) -> str:
    message = {"role": "assistant", "content": "Reading A first.", "toolCalls": []}
    ctx.record_model_step(model="m1", input_tokens=120, output_tokens=8, message=message)
    await ctx.call_tool("get_item", {"itemId": "A"})
    ctx.record_model_step(model="m1", input_tokens=300, output_tokens=20, stop_reason="tool_use")
    await ctx.call_tool("complete_item", {"itemId": "A"})
    return "Completed A."


AGENTS: dict[str, Any] = {
    "good": good_agent,
    "bad": bad_agent,
    "faulty": faulty_agent,
    "crash": crashing_agent,
    "big": big_agent,
    "thinker": thinker,
}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[EvalSummary, Path]:
    out = tmp_path_factory.mktemp("report") / "ev"
    summary = run_async(lambda: evaluate(make_env(), None, AGENTS, runs=3, out_dir=out))
    return summary, out


def texts(page: Any, selector: str) -> list[str]:
    return [str(t).strip() for t in page.locator(selector).all_inner_texts()]


def agent_rows(page: Any) -> list[str]:
    return [str(a) for a in page.locator("#agents tr[data-agent]").evaluate_all(
        "rows => rows.map(r => r.dataset.agent)")]  # fmt: skip


def test_filters_change_every_table(browser: Any, report: tuple[EvalSummary, Path]) -> None:
    summary, out = report
    page = open_report(browser, out / "report.html")
    assert agent_rows(page) == summary.ranking
    assert page.locator("#shown").inner_text() == "showing 36 of 36 rollouts"
    page.select_option("#f-agent", label="bad")
    assert agent_rows(page) == ["bad"]
    assert texts(page, "#side-by-side th") == ["task", "bad"]
    assert page.locator("#chart rect.bar").count() == 2
    assert set(texts(page, "#rollouts tr.run td:nth-child(2)")) == {"bad"}
    page.select_option("#f-agent", value="")
    page.select_option("#f-reason", label="agent_error")
    assert agent_rows(page) == ["crash"]
    assert page.locator("#shown").inner_text() == "showing 6 of 36 rollouts"
    crash_cells = texts(page, "#side-by-side td:nth-child(5)")
    assert crash_cells == ["3/3 · 0.67 · 3 agent_error ★", "0/3 · 0.00 · 3 agent_error ★"]
    page.select_option("#f-reason", value="")
    page.select_option("#f-fault", value="yes")
    assert agent_rows(page) == ["faulty"]
    page.select_option("#f-fault", value="")
    page.select_option("#f-result", value="failed")
    assert set(texts(page, "#rollouts tr.run td:nth-child(4)")) == {"FAIL"}
    page.select_option("#f-task", label="T-2")
    assert texts(page, "#tasks summary b") == ["T-2"]
    page.close()


def test_statistics_match_summary_json(browser: Any, report: tuple[EvalSummary, Path]) -> None:
    _, out = report
    page = open_report(browser, out / "report.html")
    data = read_summary(out)
    for stats in data["agents"]:
        cells = texts(page, f"#agents tr[data-agent='{stats['agent']}'] td")
        ci = stats["passRateCI"]
        assert cells[2] == f"{stats['passes']}/{stats['valid']}"
        if stats["passRate"] is None:  # no valid rollout (faulty: its tool raises every time)
            why = f"{stats['invalid']} ({stats['invalid']} environment_fault)"
            assert (cells[3], cells[4], cells[9]) == ("—", "—", why)
            continue
        assert cells[3] == f"{stats['passRate'] * 100:.0f}% [{ci['low']:.2f}, {ci['high']:.2f}]"
        assert cells[4].startswith(f"{stats['meanReward']:.2f}")
    thinker_row = texts(page, "#agents tr[data-agent='thinker'] td")
    assert thinker_row[-1] == "420 in / 28 out, 2,688 total"  # tokens, mean and total
    page.close()


def test_the_chart_shows_pass_rate_and_interval_per_task_and_agent(
    browser: Any, report: tuple[EvalSummary, Path]
) -> None:
    summary, out = report
    page = open_report(browser, out / "report.html")
    bars = page.locator("#chart svg rect.bar")
    data = read_summary(out)
    rated = [c for t in data["tasks"] for c in t["agents"].values() if c["passRate"] is not None]
    assert bars.count() == len(rated) < len(summary.tasks) * len(summary.agents)  # no "faulty"
    for bar in bars.all():
        task, agent = bar.get_attribute("data-task"), bar.get_attribute("data-agent")
        cell = next(t for t in data["tasks"] if t["task"]["id"] == task)["agents"][agent]
        assert float(str(bar.get_attribute("data-rate"))) == pytest.approx(cell["passRate"])
        assert float(str(bar.get_attribute("width"))) > 0
    assert page.locator("#chart svg line.whisker").count() == 3 * bars.count()
    box = page.locator("#chart svg").bounding_box()
    assert box is not None and box["width"] > 500 and box["height"] > 100
    page.close()


def test_a_shared_link_opens_the_rollout_with_its_field_diff(
    browser: Any, report: tuple[EvalSummary, Path]
) -> None:
    summary, out = report
    good = next(r for r in summary.records if r.agent == "good" and r.task_id == "T-1")
    page = open_report(browser, out / "report.html", f"run={good.run_id}")
    page.wait_for_selector("#run[data-loaded='1']")
    assert page.locator("#run h3").inner_text() == f"Rollout {good.run_id}"
    assert page.locator("#run a").get_attribute("href") == f"#run={good.run_id}"
    assert "items: 1 changed (A)" in page.locator("#run .diff").inner_text()
    diff_rows = [row.split("\t") for row in texts(page, "#run .diff table tr")]
    assert ["A.done", "false", "true"] in diff_rows
    assert ["closed", "0", "1"] in diff_rows
    page.close()


def test_clicking_a_rollout_shows_its_model_turns_between_its_tool_calls(
    browser: Any, report: tuple[EvalSummary, Path]
) -> None:
    _, out = report
    page = open_report(browser, out / "report.html")
    page.select_option("#f-agent", label="thinker")
    page.locator("#rollouts tr.run").first.click()
    page.wait_for_selector("#run[data-loaded='1']")
    steps = page.locator("#run table.timeline tr").all()[1:]
    kinds = [s.get_attribute("class") or "" for s in steps]
    assert kinds == ["step-model", "", "step-model", ""]
    first = steps[0].inner_text()
    assert "model m1" in first and "Reading A first." in first and "120 in ⁄ 8 out" in first
    assert "get_item" in steps[1].inner_text()
    assert "Trace (2 tool calls, 2 model turns)" in page.locator("#run").inner_text()
    page.close()


def test_long_outputs_expand_on_a_click(browser: Any, report: tuple[EvalSummary, Path]) -> None:
    summary, out = report
    big = next(r for r in summary.records if r.agent == "big")
    page = open_report(browser, out / "report.html", f"run={big.run_id}")
    page.wait_for_selector("#run[data-loaded='1']")
    output = page.locator("#run h4:text('Agent output') + div")
    assert len(output.locator("pre").inner_text()) == 401  # 400 characters and an ellipsis
    output.locator("button.more").click()
    full = output.locator("pre").inner_text()
    assert full.startswith("y" * 1000) and len(full) > 16_000
    assert output.locator("button.more").inner_text() == "show less"
    page.close()


def test_a_partial_report_compares_equal_work(browser: Any, tmp_path: Path) -> None:
    from .test_eval_partial import cancelled_eval

    out = tmp_path / "ev"
    run_async(lambda: cancelled_eval(out))
    page = open_report(browser, out / "report.html")
    assert "Comparisons use only the work" in page.locator("#partial").inner_text()
    assert page.locator("#f-equal").is_checked()
    assert [c.split("\t")[2] for c in texts(page, "#agents tr[data-agent]")] == ["3/3", "3/3"]
    page.uncheck("#f-equal")
    passed = {c.split("\t")[1]: c.split("\t")[2] for c in texts(page, "#agents tr[data-agent]")}
    assert passed == {"a": "6/6", "b": "3/3"}
    cut = texts(page, "#rollouts tr.run td:nth-child(7)")  # termination
    assert cut.count("cancelled") == 2  # listed, never counted
    page.close()


def test_ten_thousand_rollouts_open_fast_and_drill_down(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "big"
    out.mkdir()
    start = time.perf_counter()
    summary = synthetic_eval(out)
    written = time.perf_counter() - start
    assert summary.finished == 10_010
    size = (out / "report.html").stat().st_size
    page = open_report(browser, out / "report.html")
    ready_ms = page.evaluate("window.siloReadyMs")
    last = summary.records[-1]
    page.evaluate(f"location.hash = 'run={last.run_id}'")
    page.wait_for_selector("#run[data-loaded='1']")
    assert "Booked OPP-004 (rollout 10009)." in page.locator("#run").inner_text()
    assert page.locator("#rollouts tr.run").count() == 100  # paged
    assert "show 100 more of 9910" in page.locator("#rollouts button.more").inner_text()
    print(json.dumps({"rollouts": 10_010, "report_mb": size / 1e6, "ready_ms": ready_ms,
                      "write_s": written}))  # fmt: skip
    assert size < 6_000_000  # every rollout's own details embedded
    assert ready_ms < 10_000  # about 0.5 s here: only a pathological page takes 10 s
    page.close()
