"""Peer harnesses the harness tests drive: where their virtualenvs are, and skipping without them.

``make test`` builds every peer (``make peers``) and sets ``SILO_REQUIRE_PEERS=1``, so there a
missing peer fails its tests instead of skipping them; a bare ``pytest`` skips what is absent.
Peers whose dependencies clash with ours live in their own virtualenvs under ``.peers/``
(OpenEnv: fastmcp needs mcp<2; verifiers: mcp==2.0.0 and openai<3; NeMo Gym: Python 3.13);
MCP's conformance suite is an npm package, installed with its Node under ``.peers/``.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / ".peers"
REQUIRED = os.environ.get("SILO_REQUIRE_PEERS") == "1"


def _missing(what: str) -> None:
    message = f"{what} is not installed here: run `make peers` (make test does)."
    if REQUIRED:
        pytest.fail(message)
    pytest.skip(message)


def require_module(name: str) -> None:
    """Skip (or, under ``make test``, fail) unless ``name`` imports in this interpreter."""
    if importlib.util.find_spec(name) is None:
        _missing(f"The {name} package")


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
