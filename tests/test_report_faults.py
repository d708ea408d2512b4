"""report.html of an eval with faults, a baseline and invalid rollouts, in headless Chromium.

Invalid rollouts are counted apart (never as failures) and can be filtered on; the robustness
section draws each agent's pass rate without and with faults, with the drop and the faults it
recovered from, the same numbers as ``summary.json``'s ``baseline``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.eval import EvalSummary, evaluate, read_summary

from .browser import browser, needs_chromium, open_report, run_async
from .test_faults import patient
from .worlds import ENV, blocker

__all__ = ["browser"]  # the fixture, shared with pytest

pytestmark = needs_chromium


async def model_down(ctx: silo.AgentContext) -> str:
    raise silo.ModelError("the provider is down")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[EvalSummary, Path]:
    out = tmp_path_factory.mktemp("report-faults") / "ev"
    agents: dict[str, Any] = {"patient": patient, "hasty": blocker, "down": model_down}
    plan = silo.Faults.parse("unavailable@0.4", seed=3)
    summary = run_async(
        lambda: evaluate(
            ENV, ["TASK-BLOCK"], agents, runs=6, out_dir=out, faults=plan, baseline=True
        )
    )
    return summary, out


def cells(page: Any, selector: str) -> list[list[str]]:
    return [str(t).split("\t") for t in page.locator(selector).all_inner_texts()]


def test_the_robustness_section_is_summary_json_s_baseline(
    browser: Any, report: tuple[EvalSummary, Path]
) -> None:
    _, out = report
    page = open_report(browser, out / "report.html")
    base = {a["agent"]: a for a in read_summary(out)["baseline"]["agents"]}
    rows = {row[0]: row for row in cells(page, "#robustness tr[data-agent]")}
    assert set(rows) == {"patient", "hasty", "down"}
    for agent, row in rows.items():
        off, on = base[agent]["withoutFaults"], base[agent]["withFaults"]
        shown = "—" if on["passRate"] is None else f"{on['passRate'] * 100:.0f}%"
        assert row[2] == f"{shown} ({on['passes']}/{on['valid']})"
        assert row[4] == str(base[agent]["injectedFaults"])
        if off["passRate"] is not None:
            assert row[1].startswith(f"{off['passRate'] * 100:.0f}%")
    assert rows["patient"][1:3] == ["100% (6/6)", "100% (6/6)"]  # its retries recover all
    assert rows["hasty"][3].endswith("points") and rows["hasty"][3] != "0 points"
    assert rows["down"][1:4] == ["— (0/0)", "— (0/0)", "—"]  # never valid: no rate, no drop
    bars = page.locator("#robustness-chart rect.bar")
    kinds = sorted(str(b.get_attribute("data-kind")) for b in bars.all())
    assert kinds == ["baseline", "baseline", "faults", "faults"]  # "down" has none
    assert "unavailable@0.4" in page.locator("#robustness p").inner_text()
    page.close()


def test_invalid_rollouts_are_counted_apart_and_filtered(
    browser: Any, report: tuple[EvalSummary, Path]
) -> None:
    _, out = report
    page = open_report(browser, out / "report.html")
    down = cells(page, "#agents tr[data-agent='down']")[0]
    assert down[2:5] == ["0/0", "—", "—"] and down[8:10] == ["0", "6 (6 model_error)"]
    assert page.locator("#shown").inner_text() == "showing 36 of 36 rollouts"  # with baseline
    page.select_option("#f-valid", value="invalid")
    assert page.locator("#shown").inner_text() == "showing 12 of 36 rollouts"
    reasons = {row[5] for row in cells(page, "#rollouts tr.run")}
    assert reasons == {"no: model_error"}
    marked = [row[2] for row in cells(page, "#rollouts tr.run")]
    assert sum(r.endswith("(baseline)") for r in marked) == 6
    page.select_option("#f-valid", value="valid")
    assert [r[0] for r in cells(page, "#agents tr[data-agent]")] == ["1", "2"]
    page.close()


def test_a_rollout_shows_its_injected_faults(
    browser: Any, report: tuple[EvalSummary, Path]
) -> None:
    summary, out = report
    hit = next(r for r in summary.records if r.agent == "patient" and r.injected_faults)
    page = open_report(browser, out / "report.html", f"run={hit.run_id}")
    page.wait_for_selector("#run[data-loaded='1']")
    facts = dict(row[:2] for row in cells(page, "#run > table tr") if len(row) > 1)
    assert facts["injected faults"] == f"{hit.injected_faults} ({hit.recovered_faults} recovered)"
    assert facts["reward valid"] == "yes"
    notes = page.locator("#run table.timeline tr.step-note").all_inner_texts()
    assert len(notes) == hit.injected_faults and all("unavailable injected" in n for n in notes)
    page.close()
