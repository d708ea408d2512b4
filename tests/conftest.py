"""Shared fixtures: every async test runs on asyncio and on trio.

This file loads on a core-only install (``pip install -e .`` plus the test tools): what needs an
optional extra is imported by the tests that need it, after ``require_extra`` (tests/peers.py),
or marked ``@pytest.mark.extra(NAME)``, and skips without it (fails under ``make test``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest

from .peers import require_extra

try:  # hypothesis keeps its examples and caches in ./.hypothesis unless told otherwise
    from hypothesis import settings
    from hypothesis.configuration import set_hypothesis_home_dir
except ImportError:  # pragma: no cover - a core-only install without the test tools
    pass
else:  # no test leaves files in the checkout
    set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "silo-async-hypothesis")
    settings.register_profile("silo", database=None)
    settings.load_profile("silo")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> Any:
    """Both backends, always: a missing trio fails loudly instead of skipping."""
    return request.param


@pytest.fixture(
    params=[
        pytest.param("asyncio", id="asyncio"),
        pytest.param("trio-fakeclock", id="trio-fakeclock"),
    ]
)
def fake_clock_backend(request: pytest.FixtureRequest) -> Any:
    """For limit tests: trio in virtual time (MockClock autojump); asyncio with tiny limits."""
    if request.param == "trio-fakeclock":
        import trio.testing

        return ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})
    return "asyncio"


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``@pytest.mark.extra(NAME)`` skips (fails under make test) without NAME."""
    for mark in item.iter_markers("extra"):
        require_extra(*mark.args)


# The harness tests' shared plays (one per harness per session; tests/harness_players.py).
from .harness_players import chat_plays as chat_plays  # noqa: E402
from .harness_players import plays as plays  # noqa: E402
