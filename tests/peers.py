"""Peer harnesses the harness tests drive: where their virtualenvs are, and skipping without them.

``make test`` builds every peer (``make peers``) and sets ``SILO_REQUIRE_PEERS=1``, so there a
missing peer (or extra) fails its tests instead of skipping them; a bare ``pytest`` skips what is
absent, so a core-only install (``pip install -e .`` and the test tools) runs the core tests.
Peers whose dependencies clash with ours live in their own virtualenvs under ``.peers/``
(OpenEnv: fastmcp needs mcp<2; verifiers: mcp==2.0.0 and openai<3; NeMo Gym: Python 3.13);
MCP's conformance suite is an npm package, installed with its Node under ``.peers/``.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / ".peers"
REQUIRED = os.environ.get("SILO_REQUIRE_PEERS") == "1"


def _missing(what: str, fix: str = "run `make peers`") -> None:
    message = f"{what} is not installed here: {fix} (make test does)."
    if REQUIRED:
        pytest.fail(message, pytrace=False)
    pytest.skip(message, allow_module_level=True)


def require_module(name: str) -> None:
    """Skip (or, under ``make test``, fail) unless ``name`` imports in this interpreter."""
    if importlib.util.find_spec(name) is None:
        _missing(f"The {name} package")


#: What each optional extra of pyproject.toml installs that its tests import.
EXTRAS: Mapping[str, tuple[str, ...]] = {
    "anthropic": ("anthropic",),
    "docs": ("mkdocs",),
    "harness-servers": ("starlette", "uvicorn", "websockets"),
    "inspect": ("inspect_ai",),
    "mcp": ("mcp", "httpx2", "httptools"),
    "openai": ("openai",),
    "otel": ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"),
    "ray": ("ray",),
    "rich": ("rich",),
    "test": ("playwright",),  # the test extra's browser driver (the rest are the test tools)
}

#: The pytest mark of a test that needs an extra (tests/conftest.py checks it before the test).
extra = pytest.mark.extra


def by_extra(*names: str) -> list[Any]:
    """Parameters ``names`` (each an extra's name, as model providers are), each needing it."""
    return [pytest.param(name, id=name, marks=extra(name)) for name in names]


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a dotted name whose parent is missing
        return False


def has_extra(extra: str) -> bool:
    """Whether the optional ``extra`` is installed here."""
    return all(_importable(name) for name in EXTRAS[extra])


def require_extra(extra: str) -> None:
    """Skip (or, under ``make test``, fail) unless the optional ``extra`` is installed here.

    At the top of a test module, before it imports what the extra installs, it turns the
    module into one skip naming the extra and its install line, so a core-only install
    (``pip install -e .`` and the test tools) collects every module; a test (or a fixture,
    or ``@pytest.mark.extra(NAME)``) that needs an extra only at run time calls it the same.
    """
    missing = [name for name in EXTRAS[extra] if not _importable(name)]
    if missing:
        _missing(f"The {extra} extra ({', '.join(missing)})", f"pip install -e '.[{extra}]'")


def peer_dir(name: str) -> Path:
    """Peer install ``.peers/<name>`` (a virtualenv, or an npm prefix); skip (or fail) when
    absent."""
    unavailable = PEERS / name / ".unavailable"
    if unavailable.exists():  # the machine lacks what the peer needs (see the Makefile)
        pytest.skip(unavailable.read_text(encoding="utf-8").strip())
    if not (PEERS / name / ".installed").exists():
        _missing(f"The {name} peer ({PEERS / name})")
    return PEERS / name


def peer_python(name: str) -> Path:
    """The interpreter of peer virtualenv ``.peers/<name>``; skip (or fail) when absent."""
    python = peer_dir(name) / "bin" / "python"
    if not python.exists():
        _missing(f"The {name} peer virtualenv ({PEERS / name})")
    return python
