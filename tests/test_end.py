"""How a rollout ends: settle() is a pure function of what happened, tested as a table."""

from __future__ import annotations

import math
from typing import Any, get_args

import pytest

import silo_async as silo
from silo_async._end import End, Stop, error_text, settle
from silo_async._result import TerminationReason

DEADLINE = 100.0
TOKENS = Stop("max_tokens", "Token limit reached (120 of 100 tokens).")
CALLS = Stop("max_tool_calls", "Tool call limit exceeded (3).")
TIME = "Time limit exceeded (5 s)."

# (what happened, how it ended): each row is one rollout's facts.
CASES: list[tuple[str, dict[str, Any], End]] = [
    ("returned in time", {"ended_at": 50.0}, End("completed")),
    ("no time limit", {"ended_at": 1e9, "deadline": math.inf}, End("completed")),
    ("crashed", {"ended_at": 50.0, "crash": "KeyError: 'x'"}, End("agent_error", "KeyError: 'x'")),
    (
        "raised while its own scope was cancelled",
        {"ended_at": 50.0, "crash": "RuntimeError: stop", "scope_cancelled": True},
        End("completed", "RuntimeError: stop"),
    ),
    ("the token limit", {"ended_at": 50.0, "stop": TOKENS}, End("max_tokens", TOKENS.message)),
    ("the call limit", {"ended_at": 50.0, "stop": CALLS}, End("max_tool_calls", CALLS.message)),
    (
        "a limit, then a crash: the crash's message is kept",
        {"ended_at": 50.0, "stop": CALLS, "crash": "ValueError: boom"},
        End("max_tool_calls", "ValueError: boom"),
    ),
    (
        "a limit beats a late end",
        {"ended_at": 150.0, "stop": TOKENS},
        End("max_tokens", TOKENS.message),
    ),
    ("cancelled at the deadline", {"ended_at": DEADLINE}, End("timeout", TIME)),
    ("a hair late", {"ended_at": DEADLINE + 0.05}, End("timeout", TIME)),
    (
        "the loop held past the deadline",
        {"ended_at": DEADLINE + 0.25},
        End(
            "timeout",
            TIME + " The event loop was held 0.25 s past the deadline.",
            held_ms=250.0,
        ),
    ),
    (
        "a crash past the deadline is a timeout that keeps the crash's message",
        {"ended_at": DEADLINE + 1.0, "crash": "KeyError: 'x'"},
        End("timeout", "KeyError: 'x'", held_ms=1000.0),
    ),
    (
        "outer cancellation beats everything",
        {"ended_at": 150.0, "stop": CALLS, "crash": "E", "cancelled": "Run cancelled."},
        End("cancelled", "Run cancelled."),
    ),
    (
        "a failure of the driver",
        {"ended_at": 50.0, "stop": CALLS, "failure": "KeyboardInterrupt"},
        End("agent_error", "KeyboardInterrupt"),
    ),
]


@pytest.mark.parametrize(("facts", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_settle_decides_the_end_from_the_facts(facts: dict[str, Any], expected: End) -> None:
    facts = {"deadline": DEADLINE, "timeout_s": 5.0, **facts}
    assert settle(**facts) == expected


def test_an_unwritable_output_turns_completed_into_an_agent_error() -> None:
    problem = "The agent's output cannot be written as JSON (circular); kept as its str()."
    assert End("completed").with_output_problem(problem) == End("agent_error", problem)
    assert End("timeout", "late").with_output_problem(problem) == End("timeout", f"late; {problem}")


def test_only_a_timeout_discards_the_answer() -> None:
    assert [End(r).keeps_answer for r in get_args(TerminationReason)] == [
        r != "timeout" for r in silo.TERMINATION_REASONS
    ]


def test_error_text_names_the_first_leaf_of_a_group() -> None:
    group = ExceptionGroup("g", [ConnectionError("down"), ValueError("x")])
    assert error_text(group) == "ConnectionError: down"
    assert error_text(KeyError()) == "KeyError"


def test_the_reasons_are_the_literal_the_end_carries() -> None:
    assert get_args(TerminationReason) == silo.TERMINATION_REASONS
