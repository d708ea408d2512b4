"""Fault plans (DESIGN section 14): the SPEC grammar, the JSON-file form, and their errors."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

import silo_async as silo
from silo_async._faults import FaultRule


def test_the_inline_grammar() -> None:
    plan = silo.Faults.parse(
        "latency=200ms@0.2, unavailable@0.05,rate_limited=2000ms@0.05,search_*:timeout=3000ms@0.3"
    )
    assert plan.seed == 0
    assert plan.rules == (
        FaultRule("latency", 0.2, (), 200),
        FaultRule("unavailable", 0.05, (), None),
        FaultRule("rate_limited", 0.05, (), 2000),
        FaultRule("timeout", 0.3, ("search_*",), 3000),
    )
    # rate_limited's retryAfterMs defaults to 1000; P may be 0 or 1; globs take ? and [...]
    other = silo.Faults.parse("rate_limited@1,get_?ustomer:unavailable@0,[ab]*:latency=0ms@1", 7)
    assert [r.ms for r in other.rules] == [1000, None, 0]
    assert other.seed == 7 and other.rules[1].tools == ("get_?ustomer",)


def test_globs_choose_the_tools_a_rule_strikes() -> None:
    plan = silo.Faults.parse("search_*:unavailable@1,get_?ustomer:latency=5ms@1,timeout=9ms@1")
    assert [i for i, _ in plan.matching("search_leads")] == [0, 2]
    assert [i for i, _ in plan.matching("get_customer")] == [1, 2]
    assert [i for i, _ in plan.matching("research")] == [2]


def test_the_json_file_form_relative_to_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    rules = [
        {"kind": "latency", "p": 0.2, "ms": 200},
        {"kind": "timeout", "p": 0.3, "tools": ["search_*", "get_*"], "ms": 3000},
        {"kind": "rate_limited", "p": 1},
    ]
    Path("faults.json").write_text(json.dumps({"faults": rules}))
    plan = silo.Faults.parse("faults.json", seed=3)
    assert plan.seed == 3
    assert plan.rules[1].tools == ("search_*", "get_*") and plan.rules[2].ms == 1000
    assert plan.spec == (
        "latency=200ms@0.2,search_*:timeout=3000ms@0.3,get_*:timeout=3000ms@0.3,"
        "rate_limited=1000ms@1"
    )
    assert silo.Faults.from_config(plan.config()) == plan  # what run.json records reads back


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("", "the plan is empty"),
        ("latency@0.2", 'fault entry 1 "latency@0.2": latency needs a duration'),
        ("unavailable@0.1,crash@0.2", "fault entry 2 \"crash@0.2\": unknown kind 'crash'; the"),
        ("unavailble@0.1", "unknown kind 'unavailble' (did you mean 'unavailable'?)"),
        ("unavailable@1.5", "from 0 to 1, got 1.5"),
        ("unavailable@often", "got 'often'"),
        ("unavailable@nan", "from 0 to 1"),
        ("unavailable@\uff11", "got '\uff11'"),  # a fullwidth 1: float() would take it
        ("unavailable@0.0_1", "got '0.0_1'"),
        ("unavailable@inf", "got 'inf'"),
        ("latency=2s@0.1", "must be whole milliseconds, e.g. 200ms"),
        ("unavailable=10ms@0.1", "unavailable takes no duration"),
        ("unavailable", "write [GLOB:]KIND[=Nms]@P"),
        ("unavailable@0.1,", 'fault entry 2 "": the entry is empty'),
        ("a/b:unavailable@0.1", "is not a tool name or glob"),
        ("latency=99999999999ms@0.1", "from 0 to 86400000"),
    ],
)
def test_a_malformed_spec_names_the_bad_entry(spec: str, named: str) -> None:
    with pytest.raises(silo.SiloError) as caught:
        silo.Faults.parse(spec)
    assert caught.value.code == "faults_invalid"
    assert named in caught.value.message


@pytest.mark.parametrize(
    ("document", "named"),
    [
        ("[1, 2]", 'write {"faults"'),
        ('{"faults": [], "seed": 1}', 'write {"faults"'),
        ('{"faults": [{"kind": "latency", "p": 0.1}]}', "rule 1: latency needs a duration"),
        ('{"faults": [{"kind": "unavailable", "p": 0.1, "when": 1}]}', "unknown keys ['when']"),
        ('{"faults": [{"kind": "unavailable", "p": true}]}', "a number from 0 to 1"),
        ('{"faults": [{"kind": "unavailable", "p": 1, "tools": "x"}]}', "a list of tool-name"),
        ('{"faults": [{"kind": "latency", "p": 1, "ms": 1.5}]}', "whole milliseconds"),
        ("{not json", "it is not JSON"),
        ('{"faults": []}', "the plan has no rule"),  # as an empty inline plan is refused
        ('{"faults": [{"kind": "unavailable", "p": 0.1, "p": 1}]}', "the key 'p' appears twice"),
        ('{"faults": [], "faults": [{"kind": "unavailable", "p": 1}]}', "'faults' appears twice"),
        ('{"faults": ' + "[" * 100_000 + "]" * 100_000 + "}", "it nests too deeply"),
    ],
)
def test_a_malformed_file_names_the_file_and_the_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, document: str, named: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("plan.json").write_text(document)
    with pytest.raises(silo.SiloError) as caught:
        silo.Faults.parse("plan.json")
    assert caught.value.code == "faults_invalid"
    assert 'fault file "plan.json"' in caught.value.message and named in caught.value.message


def test_seeds_are_whole_numbers() -> None:
    with pytest.raises(ValueError, match="seed"):
        silo.Faults.parse("unavailable@0.1", seed=-1)
    with pytest.raises(ValueError, match="seed"):
        silo.Faults.parse("unavailable@0.1", seed=True)


def test_a_plan_travels_by_value() -> None:
    plan = silo.Faults.parse("search_*:unavailable@0.5,latency=3ms@0.5", seed=9)
    plan.matching("search_leads")  # a warm cache travels too, and changes nothing
    copy = pickle.loads(pickle.dumps(plan))
    assert copy == plan
    mine, theirs = plan.schedule("T", 2), copy.schedule("T", 2)
    assert mine is not None and theirs is not None
    draws = [(mine.draw(c, "search_leads"), theirs.draw(c, "search_leads")) for c in range(50)]
    assert all(a == b for a, b in draws)


def test_the_draws_follow_the_probabilities_and_never_read_global_random() -> None:
    import random

    plan = silo.Faults.parse("unavailable@0.3,latency=5ms@0.5,rate_limited@0.2")
    schedule = plan.schedule("TASK-001", 1)
    assert schedule is not None
    random.seed(1)
    first = [schedule.draw(c, "x") for c in range(1, 4001)]
    random.seed(2)
    assert [schedule.draw(c, "x") for c in range(1, 4001)] == first
    kinds = [tuple(k for k, _ in d.events) if d else () for d in first]
    share = {k: sum(k in e for e in kinds) / len(kinds) for k in ("unavailable", "latency")}
    assert 0.27 < share["unavailable"] < 0.33 and 0.47 < share["latency"] < 0.53
    # the first error drawn wins: rate_limited only where unavailable was not drawn
    assert not any("unavailable" in e and "rate_limited" in e for e in kinds)
    both = [d for d in first if d is not None and d.error and d.error["code"] == "rate_limited"]
    assert both and all(d.error and d.error["details"] == {"retryAfterMs": 1000} for d in both)
