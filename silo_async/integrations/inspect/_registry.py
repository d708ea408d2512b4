"""Inspect's entry point (group ``inspect_ai``): importing it registers ``silo_async/silo_task``."""

from __future__ import annotations

from ._task import silo_task

__all__ = ["silo_task"]
