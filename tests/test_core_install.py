"""A core-only install runs the core tests: extras' tests skip, naming the extra.

``tests/core_only/run.py`` runs pytest as a venv made by ``pip install -e .`` plus the test
tools would (every other installed package fails to import, in pytest and in the processes its
tests start), so these checks need no second venv. ``make test`` sets ``SILO_REQUIRE_PEERS=1``;
the runs here unset it, except where the failure it brings is what is checked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .core_only.run import core_distributions, core_only_env
from .harness_players import PLAYERS, Plays
from .harness_support import Script
from .peers import EXTRAS

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "tests" / "core_only" / "run.py"


def core_only(*args: str, require: bool = False) -> subprocess.CompletedProcess[str]:
    """``pytest ARGS`` in the checkout as a core-only install runs it."""
    env = {**os.environ, "SILO_REQUIRE_PEERS": "1" if require else "0"}
    return subprocess.run(
        [sys.executable, str(RUN), "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_core_only_run_imports_no_extra() -> None:
    code = "import importlib.util as u, sys; print([n for n in sys.argv[1:] if u.find_spec(n)])"
    names = [name.split(".")[0] for modules in EXTRAS.values() for name in modules]
    env = core_only_env(core_distributions())
    done = subprocess.run(
        [sys.executable, "-c", code, *names, "anyio", "trio", "pytest", "silo_async"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["['anyio',", "'trio',", "'pytest',", "'silo_async']"]


@pytest.mark.timeout(300)
def test_conftest_and_every_test_module_load_without_the_extras() -> None:
    done = core_only("--collect-only", "-q", "tests")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "error" not in done.stdout.lower().split("\n")[-2]  # "N tests collected in S s"


def test_a_module_that_needs_an_extra_skips_naming_it() -> None:
    done = core_only("-q", "-rs", "tests/test_serve_app.py", "tests/test_model_server.py")
    assert done.returncode == 5, done.stdout  # no test ran; nothing failed or errored
    assert "The mcp extra (mcp, httpx2, httptools) is not installed here: " in done.stdout
    assert "pip install -e '.[mcp]' (make test does)." in done.stdout
    assert "The openai extra (openai) is not installed here" in done.stdout


def test_under_make_test_a_missing_extra_fails() -> None:
    done = core_only("-q", "tests/test_serve_app.py", require=True)
    assert done.returncode not in (0, 5), done.stdout
    assert "The mcp extra (mcp, httpx2, httptools) is not installed here" in done.stdout


def _plays(tmp_path: Path) -> Plays:
    return Plays(tmp_path, Script("T", [], "done"), make_project=lambda root: root)


def test_a_play_that_skipped_skips_every_test_of_its_harness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tries = []

    def absent(project: Path, scratch: Path, script: Script) -> tuple[dict[str, str], None]:
        tries.append(scratch)
        pytest.skip("The absent peer is not installed here.")

    monkeypatch.setitem(PLAYERS, "absent", absent)
    plays = _plays(tmp_path)
    for _ in range(3):  # the second get made its scratch directory again: FileExistsError
        with pytest.raises(pytest.skip.Exception, match="absent peer"):
            plays.get("absent")
    assert tries == [tmp_path / "absent"]
