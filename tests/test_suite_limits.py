"""The suite itself: every test has a time limit, and a hang is a failure with its stack."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_every_test_has_a_time_limit(pytestconfig: pytest.Config) -> None:
    assert 0 < float(pytestconfig.getini("timeout")) <= 300


def test_a_hanging_test_fails_with_its_stack(tmp_path: Path) -> None:
    (tmp_path / "test_hangs.py").write_text(
        "import threading\n\n\ndef test_waits_forever():\n    threading.Event().wait()\n",
        encoding="utf-8",
    )
    # The project's own configuration, with a one-second limit instead of its two minutes.
    command = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml")]
    command += ["--rootdir", str(tmp_path), "-o", "timeout=1", "-q", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 1, done.stdout
    assert "Timeout (>1.0s) from pytest-timeout" in done.stdout
    assert "test_hangs.py:5: \n" in done.stdout  # the stack points at where it hung
