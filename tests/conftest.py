"""Shared fixtures: every async test runs on asyncio and on trio."""

from __future__ import annotations

from typing import Any

import pytest


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


# The harness tests' shared plays (one per harness per session; tests/harness_players.py).
from .harness_players import chat_plays as chat_plays  # noqa: E402
from .harness_players import plays as plays  # noqa: E402
