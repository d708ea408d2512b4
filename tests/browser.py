"""Headless Chromium for the report tests: Debian's /usr/bin/chromium driven by Playwright.

Playwright (the ``playwright`` package of the ``test`` extra) drives the system Chromium
through ``executable_path``; it never downloads a browser. ``make test`` installs Chromium
where it can (Debian, as root); elsewhere the browser tests are skipped, and only then.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

from .peers import require_extra

T = TypeVar("T")

CHROMIUM = os.environ.get("SILO_CHROMIUM", "/usr/bin/chromium")
#: Offline and quiet: no first-run work, no calls home (the machine has no network).
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason=f"needs Chromium at {CHROMIUM} (apt-get install chromium)"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module."""
    require_extra("test")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            yield launched
        finally:
            launched.close()


def open_report(browser: Any, path: Path, fragment: str = "") -> Any:
    """A page showing ``path`` (plus ``#fragment``), once its script has drawn everything."""
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri() + (f"#{fragment}" if fragment else ""))
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    assert errors == [], errors
    page.errors = errors
    return page


def run_async(fn: Callable[[], Awaitable[T]]) -> T:
    """``anyio.run(fn)`` on a thread of its own (Playwright's sync API holds this one's loop)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = anyio.run(fn)
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
