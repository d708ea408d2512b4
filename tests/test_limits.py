"""silo.Limits: one value for a rollout's budgets, and how limits= meets the keyword form."""

from __future__ import annotations

import math

import pytest

import silo_async as silo
from silo_async._limits import resolve_limits


def test_limits_is_a_checked_frozen_value() -> None:
    limits = silo.Limits(max_tool_calls=7, timeout=2.5, token_limit=100)
    assert limits.config() == {"maxToolCalls": 7, "timeoutMs": 2500, "tokenLimit": 100}
    assert silo.Limits(timeout=None).seconds == math.inf
    with pytest.raises(ValueError, match="max_tool_calls"):
        silo.Limits(max_tool_calls=-1)
    with pytest.raises(ValueError, match="timeout"):
        silo.Limits(timeout=0)
    with pytest.raises(AttributeError):
        limits.timeout = 3  # type: ignore[misc]


def test_limits_or_keywords_but_not_both() -> None:
    assert resolve_limits(None, 5, None, 9) == silo.Limits(5, None, 9)
    given = silo.Limits(3)
    assert resolve_limits(given) is given
    with pytest.raises(TypeError, match=r"not both \(got limits= and max_tool_calls=, timeout=\)"):
        resolve_limits(given, 5, 10.0)
    with pytest.raises(TypeError, match=r"silo\.Limits"):
        resolve_limits({"max_tool_calls": 3})  # type: ignore[arg-type]
