"""report.html as Chromium's own command line captures it: drawn by the time the page loads.

``chromium --headless --screenshot`` (and ``--dump-dom``) capture a page at its load event,
waiting on nothing the page's script starts later. The report inflates its data synchronously
and draws a ``#run=`` deep link's rollout at the top without scrolling, so both show it.
"""

from __future__ import annotations

import struct
import subprocess
import zlib
from pathlib import Path

import pytest

import silo_async as silo
from silo_async.eval import EvalSummary, evaluate, read_index

from .browser import CHROMIUM, FLAGS, needs_chromium, run_async
from .test_eval_support import bad_agent, good_agent, make_env

pytestmark = needs_chromium

WIDTH, HEIGHT = 1000, 700


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[EvalSummary, Path]:
    out = tmp_path_factory.mktemp("shot") / "ev"
    agents: dict[str, silo.Agent] = {"good": good_agent, "bad": bad_agent}
    summary = run_async(lambda: evaluate(make_env(), None, agents, runs=2, out_dir=out))
    return summary, out


def _chromium(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [CHROMIUM, "--headless", *FLAGS, f"--window-size={WIDTH},{HEIGHT}", *args],
        cwd=cwd,
        capture_output=True,
        timeout=90,
        check=False,
    )


def _rows(png: bytes) -> list[bytes]:
    """The pixel rows of an 8-bit RGB or RGBA PNG, unfiltered (PNG spec, section 9)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, data, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(png):
        (length,), kind = struct.unpack(">I", png[pos : pos + 4]), png[pos + 4 : pos + 8]
        body = png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            data += body
        pos += 12 + length
    raw, stride, rows = zlib.decompress(data), width * channels, []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        method, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if method == 1:
                line[i] = (line[i] + left) & 255
            elif method == 2:
                line[i] = (line[i] + up) & 255
            elif method == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif method == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                near = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + near) & 255
        rows.append(bytes(line))
        previous = line
    return rows


def _inked_rows(png: bytes) -> int:
    """How many pixel rows hold something darker than the page's near-white background."""
    return sum(1 for line in _rows(png) if min(line) < 128)


def test_a_deep_link_screenshots_its_rollout(report: tuple[EvalSummary, Path]) -> None:
    _, out = report
    failed = next(r for r in read_index(out) if not r.passed)
    url = (out / "report.html").as_uri() + f"#run={failed.run_id}"
    shot = out.parent / "deep.png"
    done = _chromium(f"--screenshot={shot}", url, cwd=out.parent)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert _inked_rows(shot.read_bytes()) > HEIGHT // 4  # blank before: not one dark row
    dom = _chromium("--dump-dom", url, cwd=out.parent).stdout.decode()
    # drawn at load, the rollout (its checks) first on the page, above the filters
    run_at = dom.index(f'<div id="run" data-run="{failed.run_id}" data-loaded="1"')
    assert run_at < dom.index('<form id="filters"')
    assert "Checks" in dom[run_at:] and 'data-ready="1"' in dom


def test_the_page_itself_is_drawn_at_load(report: tuple[EvalSummary, Path]) -> None:
    summary, out = report
    dom = _chromium("--dump-dom", (out / "report.html").as_uri(), cwd=out.parent).stdout.decode()
    assert 'data-ready="1"' in dom
    assert f"showing {summary.finished} of {summary.finished} rollouts" in dom
    assert '<div id="run"></div>' in dom  # no link, no rollout
