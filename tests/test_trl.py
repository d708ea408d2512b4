"""silo_async.integrations.trl: a world as TRL's environment_factory class, and its reward.

The trainer is not installed here: the tests play its part (one instance per rollout, every
public method but ``reset`` a tool, the instances handed to the reward function), as the facts
in the reference notes describe it.
"""

from __future__ import annotations

import functools
import inspect
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Optional, Union

import anyio
import pytest

import silo_async as silo
import silo_async.templates.crm as crm
from silo_async.integrations.trl import environment_factory, reward

from .template_support import load_agent, template_environment
from .worlds import ENV, TASKS

CRM = template_environment("crm", crm)

ODD_SCHEMA = {
    "type": "object",
    "properties": {
        "from": {"type": "string", "description": "Start date,\n  as YYYY-MM-DD."},
        "max-count": {"type": "integer"},
        "kind": {"type": "string", "enum": ["a", "b"], "description": "Which kind."},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "filter": {"type": "object"},
        "note": {"type": ["string", "null"]},
    },
    "required": ["from", "kind"],
    "additionalProperties": False,
}


@silo.tool(name="crm.find-users", description="Find users.\n\nPaged.", input_schema=ODD_SCHEMA)
def find_users(state: Any, args: dict[str, Any]) -> Any:
    return {"got": args}


@silo.tool(name="reset", description="A tool that happens to be called reset.")
def reset_tool(state: Any, args: dict[str, Any]) -> Any:
    return ["reset", "done"]


@silo.tool(name="get_reward", description="A tool that happens to be called get_reward.")
def get_reward_tool(state: Any, args: dict[str, Any]) -> Any:
    return 7


ODD = silo.Environment(
    name="odd-world",
    create_state=dict,
    tools=[find_users, reset_tool, get_reward_tool],
    verifiers=ENV.verifiers,
    tasks=TASKS,
)


def task_of(run_dir: Path) -> str:
    return str(json.loads((run_dir / "run.json").read_text())["taskId"])


def public(obj: Any) -> list[str]:
    return sorted(name for name in dir(obj) if not name.startswith("_"))


def test_the_class_has_reset_and_one_method_per_tool_and_nothing_else() -> None:
    shop = environment_factory(ENV)()
    assert public(shop) == ["block_customer", "explode", "get_customer", "reset", "slow"]
    methods = [n for n, _ in inspect.getmembers(shop, inspect.ismethod) if not n.startswith("_")]
    assert methods == public(shop)  # what TRL offers the model: all of these but reset
    odd = environment_factory(ODD)()
    assert type(odd).__name__ == "OddWorldEnvironment"
    # Names that are not identifiers, or that TRL reserves, get safe method names.
    assert public(odd) == ["crm_find_users", "get_reward_", "reset", "reset_"]
    assert odd.crm_find_users.__name__ == "crm_find_users"  # TRL looks tools up by __name__


def test_reset_opens_an_episode_and_returns_the_instruction() -> None:
    shop = environment_factory(ENV)()
    assert shop.reset(task="TASK-BLOCK", prompt=[{"role": "user", "content": ""}]) == (
        "Block customer CUS-001."
    )
    served = environment_factory(ENV, tasks=["TASK-ANSWER", "TASK-BLOCK"])
    first, second = served(), served()
    # Without a task in the row: the served tasks in order, round robin over the instances.
    assert [first.reset(), second.reset(), first.reset()] == [
        "How many customers are there?",
        "Block customer CUS-001.",
        "How many customers are there?",
    ]
    with pytest.raises(silo.SiloError) as unknown:
        first.reset(task="TASK-RAISES")  # exists, but not served
    assert unknown.value.code == "task_not_found"
    with pytest.raises(silo.SiloError):
        environment_factory(ENV, tasks=["TASK-NOPE"])
    with pytest.raises(RuntimeError, match="reset"):
        environment_factory(ENV)().get_customer(customerId="CUS-001")


def test_methods_carry_the_schemas_parameters_types_and_docstring() -> None:
    shop = environment_factory(ENV)()
    sig = inspect.signature(shop.get_customer)
    (param,) = sig.parameters.values()
    assert (param.name, param.kind, param.annotation) == (
        "customerId",
        inspect.Parameter.KEYWORD_ONLY,
        str,
    )
    assert param.default is inspect.Parameter.empty  # required
    assert shop.get_customer.__doc__.startswith("Read a customer.\n\nArgs:\n    customerId: ")
    slow = inspect.signature(shop.slow).parameters["seconds"]
    assert slow.default is None and slow.annotation == Optional[float]  # noqa: UP045

    odd = environment_factory(ODD)()
    params = inspect.signature(odd.crm_find_users).parameters
    assert {n: (p.annotation, p.default) for n, p in params.items()} == {
        "from_": (str, inspect.Parameter.empty),
        "max_count": (Optional[int], None),  # noqa: UP045
        "kind": (str, inspect.Parameter.empty),
        "ids": (Optional[list[int]], None),  # noqa: UP045
        "filter": (Optional[dict[str, Any]], None),  # noqa: UP045
        "note": (Union[str, None], None),  # noqa: UP007
    }
    doc = inspect.getdoc(odd.crm_find_users)
    assert doc is not None
    assert doc.startswith("Find users.\n\nPaged.\n\nArgs:\n")
    assert "    from_: Start date, as YYYY-MM-DD.\n" in doc  # one line per parameter
    assert '    kind: Which kind. (choices: ["a", "b"])\n' in doc
    assert "    max_count: The max-count.\n" in doc
    # Python names are mapped back to the schema's; optionals left at None are not sent.
    odd.reset(task="TASK-BLOCK")
    assert odd.crm_find_users(from_="2026-01-01", kind="a", max_count=3, note=None) == {
        "got": {"from": "2026-01-01", "kind": "a", "max-count": 3}
    }
    assert odd.reset_() == '["reset","done"]' and odd.get_reward_() == "7"


def test_calls_change_the_episodes_world_and_rejections_are_messages() -> None:
    shop_class = environment_factory(ENV)
    shop, other = shop_class(), shop_class()
    shop.reset(task="TASK-BLOCK")
    other.reset(task="TASK-BLOCK")
    assert shop.get_customer(customerId="CUS-001")["status"] == "active"
    blocked = shop.block_customer(customerId="CUS-001")
    assert blocked["status"] == "blocked"
    assert str(blocked) == '{"id":"CUS-001","status":"blocked","tags":["vip"]}'  # what TRL shows
    assert shop.get_customer(customerId="CUS-001")["status"] == "blocked"
    assert other.get_customer(customerId="CUS-001")["status"] == "active"  # its own world
    assert shop.get_customer(customerId="CUS-404") == 'Customer "CUS-404" was not found.'
    refused = shop.get_customer(customerId=4)
    assert isinstance(refused, str) and '"customerId" must be string' in refused
    assert "not a parameter" in shop.get_customer(customerId="CUS-001", extra=1)
    assert shop.explode().startswith('Tool "explode" failed')  # a fault, as the agent sees it
    # the fault makes shop's reward no evidence: None, which TRL leaves out (DESIGN section 14)
    assert reward(["done"], [shop]) == [None]
    assert reward(["done"], [other]) == [0.5]  # only the optional check passes
    assert shop.get_customer(customerId="CUS-001") == "The episode has ended (completed)."


def test_the_reward_is_a_silo_run_of_the_same_calls(tmp_path: Path) -> None:
    """Every crm task: the solver's calls replayed through the methods grade byte-identically."""
    solver = load_agent("crm_solver")
    cls = environment_factory(CRM, runs_dir=tmp_path / "trl")
    for task in CRM.tasks:
        ran = anyio.run(functools.partial(silo.run, CRM, task.id, solver, runs_dir=tmp_path / "r"))
        assert ran.passed and ran.run_dir is not None
        instance = cls()
        assert instance.reset(task=task.id) == task.instruction
        for event in ran.trace:
            if event["type"] == "tool_call":
                getattr(instance, event["tool"])(**event["input"])
        completion = [{"role": "assistant", "content": ran.agent_output}]
        assert reward([completion], [instance]) == [ran.reward] == [1.0]
        (trl_dir,) = [d for d in (tmp_path / "trl").iterdir() if task_of(d) == task.id]
        for name in ("result.json", "state-diff.json"):
            assert (trl_dir / name).read_bytes() == (ran.run_dir / name).read_bytes(), name


def test_reward_takes_the_last_assistant_text_and_checks_its_arguments() -> None:
    cls = environment_factory(ENV, tasks=["TASK-ANSWER"])
    text, chat, parts, silent = cls(), cls(), cls(), cls()
    for instance in (text, chat, parts, silent):
        instance.reset()
    completions: list[Any] = [
        "2",
        [
            {"role": "assistant", "content": "Let me count.", "tool_calls": []},
            {"role": "tool", "name": "get_customer", "content": "{}"},
            {"role": "assistant", "content": "2"},
        ],
        [{"role": "assistant", "content": [{"type": "text", "text": "2"}]}],
        [{"role": "assistant", "content": None}],
    ]
    environments = [text, chat, parts, silent]
    assert reward(completions, environments, prompts=["p"] * 4) == [1.0, 1.0, 1.0, 0.0]
    assert reward(completions, environments) == [1.0, 1.0, 1.0, 0.0]  # finished once
    with pytest.raises(ValueError, match="completions"):
        reward(["2"], [])
    with pytest.raises(TypeError, match="environment_factory"):
        reward(["2"], [object()])
    with pytest.raises(RuntimeError, match="reset"):
        reward(["2"], [cls()])


def test_reset_finishes_the_previous_episode_and_timeout_applies(tmp_path: Path) -> None:
    # Whole seconds: TRL's episodes run on their own event loop in real time, and the second
    # episode must be answered before its deadline on a loaded machine.
    cls = environment_factory(ENV, runs_dir=tmp_path, timeout=1.0)
    shop = cls()
    shop.reset(task="TASK-BLOCK")
    time.sleep(1.1)  # past the deadline (it started before reset returned): the episode ended
    assert shop.get_customer(customerId="CUS-001") == "The episode has ended (timeout)."
    shop.reset(task="TASK-ANSWER")
    assert reward(["2"], [shop]) == [1.0]
    reasons = sorted(
        json.loads((d / "result.json").read_text())["terminationReason"] for d in tmp_path.iterdir()
    )
    assert reasons == ["completed", "timeout"]
    untimed = environment_factory(ENV)()
    untimed.reset(task="TASK-BLOCK")
    time.sleep(0.1)
    assert untimed.get_customer(customerId="CUS-001")["id"] == "CUS-001"  # no limit by default
    with pytest.raises(ValueError, match="timeout"):
        environment_factory(ENV, timeout=-1)


def test_many_instances_from_many_threads(tmp_path: Path) -> None:
    cls = environment_factory(ENV, runs_dir=tmp_path)

    def rollout(n: int) -> float | None:
        instance = cls()
        instance.reset(task="TASK-BLOCK")
        if n % 2 == 0:
            instance.get_customer(customerId="CUS-001")
            instance.block_customer(customerId="CUS-001")
        return reward(["done"], [instance])[0]

    with ThreadPoolExecutor(max_workers=16) as pool:
        rewards = list(pool.map(rollout, range(64)))
    assert rewards == [1.0 if n % 2 == 0 else 0.5 for n in range(64)]
    assert len(list(tmp_path.iterdir())) == 64


def test_transformers_reads_every_crm_method() -> None:
    utils = pytest.importorskip("transformers.utils")
    instance = environment_factory(CRM)()
    methods = [
        (n, m)
        for n, m in inspect.getmembers(instance, inspect.ismethod)
        if not n.startswith("_") and n != "reset"
    ]
    specs = {s.name: s for s in (t.spec for t in CRM.bind_tools(CRM.create_state()))}
    assert len(methods) == len(specs)
    for name, method in methods:
        schema = utils.get_json_schema(method)["function"]
        spec = specs[name]
        assert schema["name"] == name and schema["description"] == spec.description
        props = spec.input_schema["properties"]
        assert list(schema["parameters"]["properties"]) == list(props)
        assert sorted(schema["parameters"].get("required", [])) == sorted(
            spec.input_schema.get("required", [])
        )
        for prop, sub in schema["parameters"]["properties"].items():
            if "enum" in props[prop]:
                assert sub["enum"] == props[prop]["enum"]


def test_the_adapter_imports_neither_trl_nor_transformers() -> None:
    code = (
        "import sys, silo_async.integrations.trl\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('trl', 'transformers', 'torch')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- pickling (TRL's async trainer pickles its environment_factory) ---------------------------

_UNPICKLE_AND_PLAY = """
import json, pickle, sys
cls = pickle.loads(sys.stdin.buffer.read())
env = cls()
env.reset(task="TASK-001")
for name, args in json.loads(sys.argv[1]):
    getattr(env, name)(**args)
from silo_async.integrations.trl import reward
print(json.dumps({"reward": reward([sys.argv[2]], [env])[0], "name": cls.__name__}))
"""


def test_the_class_pickles_by_value_and_plays_where_it_was_never_built(tmp_path: Path) -> None:
    import pickle

    from .harness_support import ANSWER, CALLS, make_crm_project, new_run, run_ids

    project = make_crm_project(tmp_path / "project")
    cls = environment_factory("crm", cwd=project, runs_dir=project / ".silo" / "runs")
    blob = pickle.dumps(cls)
    assert pickle.loads(blob) is cls  # in this process, the very class
    calls = [(name, args) for name, args in CALLS if name != "search_leads" or "query" in args]
    before = run_ids(project)
    elsewhere = tmp_path / "elsewhere"  # another working directory: the project path travels
    elsewhere.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _UNPICKLE_AND_PLAY, json.dumps(calls), ANSWER],
        input=blob,
        cwd=elsewhere,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    played = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert played == {"reward": 1.0, "name": cls.__name__}
    run = new_run(project, before)  # the runs_dir it was built with, not the child's cwd
    assert run["result"]["reward"] == 1.0
    assert not (elsewhere / ".silo").exists()


def test_a_code_first_class_that_cannot_travel_says_how_to_make_one_that_can() -> None:
    import pickle

    cls = environment_factory(CRM, tasks=["TASK-001"])
    with pytest.raises(pickle.PicklingError, match=r"environment_factory\(NAME, cwd=PROJECT\)"):
        pickle.dumps(cls)


def test_reward_keeps_the_token_ids_trl_sampled(tmp_path: Path) -> None:
    """TRL's completion_ids are kept with the rollout, and export as they came."""
    from silo_async.export import trajectories

    cls = environment_factory(ENV, runs_dir=tmp_path / "trl")
    shop, plain = cls(), cls()
    shop.reset(task="TASK-BLOCK")
    plain.reset(task="TASK-BLOCK")
    shop.block_customer(customerId="CUS-001")
    plain.block_customer(customerId="CUS-001")
    completions = [[{"role": "assistant", "content": "Blocked."}]] * 2
    ids = [[151644, 77, 12, 151645], [9, 9]]
    assert reward(completions, [shop, plain], completion_ids=ids) == [1.0, 1.0]
    assert reward(completions, [shop, plain], completion_ids=ids) == [1.0, 1.0]  # once
    lines = {
        line["runId"]: line
        for line in trajectories(
            [str(d) for d in (tmp_path / "trl").iterdir()], environment=ENV, cwd=tmp_path
        )
    }
    tokens = sorted(
        m["tokenIds"]
        for line in lines.values()
        for m in line["messages"]
        if m["role"] == "assistant" and "tokenIds" in m
    )
    assert tokens == [[9, 9], [151644, 77, 12, 151645]]
    assert all(line["usage"]["modelSteps"] == 1 for line in lines.values())
