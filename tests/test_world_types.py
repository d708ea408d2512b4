"""silo_async.world's state types describe what the toolkit and every shipped world really hold."""

from __future__ import annotations

import importlib
from typing import Any, get_type_hints

import pytest

from silo_async import world as w
from silo_async.templates import list_templates

from .template_support import template_environment

_TEMPLATES = [info.id for info in list_templates() if info.id != "blank"]


def test_records_is_a_map_of_id_to_record() -> None:
    assert w.Records[int] == dict[str, int]


def test_an_audit_entry_has_exactly_the_keys_audit_writes() -> None:
    state: dict[str, Any] = {"clock": {"now": "2026-03-02T09:00:00Z"}, "auditLog": []}
    state["sequences"] = {}
    w.records.audit(state, "USR-001", "block_vendor", "vendor", "VEN-001", "Blocked.", [])
    assert set(state["auditLog"][0]) == set(get_type_hints(w.records.AuditEntry))


def test_world_state_names_the_clock_log_and_counters() -> None:
    assert set(get_type_hints(w.WorldState)) == {"clock", "auditLog", "sequences"}
    assert set(get_type_hints(w.clock.Clock)) == {"now", "timezone"}


@pytest.mark.parametrize("template_id", _TEMPLATES)
def test_every_template_world_has_the_shared_keys(template_id: str) -> None:
    package = importlib.import_module(f"silo_async.templates.{template_id}")
    state = template_environment(template_id, package).create_state()
    assert set(get_type_hints(w.WorldState)) <= set(state)
    assert set(state["clock"]) == set(get_type_hints(w.clock.Clock))
    for entry in state["auditLog"]:
        assert set(entry) == set(get_type_hints(w.records.AuditEntry))


@pytest.mark.parametrize("template_id", ["crm", "project", "support"])
def test_typed_templates_declare_every_collection_they_hold(template_id: str) -> None:
    package = importlib.import_module(f"silo_async.templates.{template_id}")
    state = template_environment(template_id, package).create_state()
    module = importlib.import_module(f"silo_async.templates.{template_id}.state")
    hints = get_type_hints(module.State)
    assert set(hints) == set(state)
