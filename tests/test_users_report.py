"""report.html shows a conversational rollout's conversation (DESIGN §13), in Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from silo_async.eval import evaluate

from .browser import browser, needs_chromium, open_report, run_async
from .chat_world import ENV, solver

__all__ = ["browser"]  # the fixture, shared with pytest

pytestmark = needs_chromium


def test_a_rollouts_detail_shows_its_conversation(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "ev"
    summary = run_async(lambda: evaluate(ENV, ["CHAT-SYNC"], {"solver": solver}, out_dir=out))
    record = summary.records[0]
    page = open_report(browser, out / "report.html", f"run={record.run_id}")
    page.wait_for_selector("#run[data-loaded='1']")
    box = page.locator("#run").inner_text()
    assert "Conversation (2 user turns)" in box
    said = [
        str(t).split("\t") for t in page.locator("#run table.conversation tr").all_inner_texts()
    ]
    assert [row[0].strip() for row in said] == ["user", "agent", "user", "agent", "user"]
    assert "My order won't go through" in said[0][1]
    assert "OK, I switched offline mode off. [did: set_offline_mode]" in said[2][1]
    assert "(ended the conversation)" in said[4][1]
    kinds = [s.get_attribute("class") or "" for s in page.locator("#run table.timeline tr").all()]
    assert kinds[1:] == ["step-user", "step-turn", "", "step-turn"]
    page.close()
