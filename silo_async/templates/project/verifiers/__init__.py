"""Verifier registry."""

from __future__ import annotations

import silo_async as silo

verifiers: list[silo.Verifier] = []
