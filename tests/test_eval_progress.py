"""The eval progress bar: drawn a few times a second from counters, never per rollout."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import anyio
import pytest

from silo_async.cli._eval import REFRESH_HZ, _Display, _run_eval
from silo_async.eval import EvalProgress, evaluate

from .peers import require_extra
from .test_eval_support import good_agent, make_env

require_extra("rich")

from rich.console import Console  # noqa: E402 - after the check

pytestmark = pytest.mark.anyio


async def test_progress_bar_is_throttled_and_ends_on_the_final_count() -> None:
    buffer = io.StringIO()
    display = _Display(True, 800, Console(file=buffer, force_terminal=True, width=120))
    start = time.perf_counter()
    summary = await _run_eval(
        lambda on_progress: evaluate(
            make_env(), None, {"g": good_agent}, runs=400, on_progress=on_progress
        ),
        display,
    )
    elapsed = time.perf_counter() - start
    assert summary is not None and summary.finished == 800
    assert display.latest is not None and display.latest.done == 800
    assert 1 <= display.draws <= elapsed * REFRESH_HZ + 3  # time-bound, not rollout-bound
    assert display.draws < 800
    assert "800/800" in buffer.getvalue() and "pass 800" in buffer.getvalue()


async def test_no_bar_when_disabled_or_without_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    off = _Display(False, 10)
    assert off.progress is None
    monkeypatch.setitem(sys.modules, "rich.progress", None)  # as if rich were not installed
    missing = _Display(True, 10)
    assert missing.progress is None
    summary = await _run_eval(
        lambda on_progress: evaluate(make_env(), None, {"g": good_agent}, on_progress=on_progress),
        missing,
    )
    assert summary is not None and summary.finished == 2
    assert missing.draws == 0
    missing.record(EvalProgress(2, 2, 2, 0, 0.1))  # recording stays a plain assignment
    assert missing.latest is not None and missing.latest.rate == pytest.approx(20.0)


async def test_a_resumed_eval_shows_what_it_kept(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    with anyio.CancelScope() as scope:

        def stop(p: EvalProgress) -> None:
            if p.done >= 6:
                scope.cancel()

        await evaluate(make_env(), None, {"g": good_agent}, runs=10, concurrency=2, out_dir=out,
                       on_progress=stop)  # fmt: skip
    buffer = io.StringIO()
    display = _Display(True, 20, Console(file=buffer, force_terminal=True, width=160))
    summary = await _run_eval(
        lambda on_progress: evaluate(
            make_env(), None, {"g": good_agent}, resume=out, on_progress=on_progress
        ),
        display,
    )
    assert summary is not None and summary.resumed is not None
    kept = summary.resumed.kept
    assert kept >= 6 and display.latest is not None
    assert (display.latest.kept, display.latest.done, display.latest.left) == (kept, 20, 0)
    assert display.latest.rate == pytest.approx((20 - kept) / display.latest.elapsed_s)
    assert f"kept {kept} · pass 20" in buffer.getvalue() and "20/20" in buffer.getvalue()
