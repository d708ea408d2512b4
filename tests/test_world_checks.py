"""silo_async.world.every: "all of these happened", with how far the agent got as detail."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w


def test_every_passes_when_all_expected_is_done() -> None:
    check = w.every("every late item moved", ["WI-1", "WI-2"], ["WI-1", "WI-2"], "moved")
    assert check == silo.check("every late item moved", True, "2 of 2 moved")
    assert check.required


def test_every_fails_on_what_is_missing_and_can_list_it() -> None:
    check = w.every("moved", {"WI-2"}, ["WI-1", "WI-2", "WI-3"], "moved", listed=True)
    assert (check.passed, check.detail) == (False, "1 of 3 moved (WI-1, WI-2, WI-3)")
    assert w.every("moved", [], ["WI-1"]).detail == "0 of 1"


def test_nothing_expected_fails_unless_allowed() -> None:
    assert not w.every("the seed has work", [], []).passed
    assert w.every("nothing was lost", [], [], "kept", allow_empty=True).passed


def test_every_can_be_optional() -> None:
    check = w.every("bonus", [], ["A"], required=False)
    assert check == silo.optional("bonus", False, "0 of 1")
