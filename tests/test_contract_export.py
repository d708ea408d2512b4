"""Conformance to DESIGN.md section 12 (trajectories: ``runs export`` and the TRL environment).

As a reader of DESIGN.md alone would check it: an eval of a fresh ``init --template crm``
project with a scripted agent, a crashing one and a real model agent (``openai_chat`` against
``ScriptedModelServer``), exported with the CLI; and a code-first world handed to
``silo_async.integrations.trl`` exactly as TRL would use it (no TRL needed).
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall
from tests.test_contract import ENV

from .cli_support import cli
from .peers import require_extra

KEYS = {
    "runId",
    "environment",
    "task",
    "tools",
    "messages",
    "output",
    "reward",
    "rewardValid",  # DESIGN section 14
    "passed",
    "terminationReason",
    "usage",
}

SCRIPTED = """
async def agent(ctx):
    await ctx.call_tool("get_current_time", {})
    await ctx.call_tool("search_leads", {"query": "Tomasz"})
    await ctx.call_tool("get_user", {"userID": "USR-001"})  # rejected: invalid_input
    return "All done."
"""

CRASHING = """
async def agent(ctx):
    await ctx.call_tool("get_current_time", {})
    raise RuntimeError("the agent broke")
"""


def model(request: ModelRequest) -> Reply:
    """Two calls in the first reply, one in the second, then an answer."""
    if request.turn == 0:
        calls = [ToolCall("get_current_time", {}), ToolCall("list_users", {"limit": 2})]
        return Reply(text="Looking around.", tool_calls=calls, input_tokens=50, output_tokens=9)
    if request.turn == 1:
        call = ToolCall("get_user", {"userId": "USR-001"})
        return Reply(tool_calls=[call], input_tokens=80, output_tokens=4)
    return Reply(text="USR-001 is here.", input_tokens=90, output_tokens=6)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One eval: 2 tasks x (scripted, crashing, model) agents, exported as one JSON line each."""
    require_extra("openai")
    project = tmp_path_factory.mktemp("export")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project)
        patch.setattr(sys, "path", list(sys.path))
        for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
            patch.delenv(var, raising=False)
        assert cli("init", "sales", "--template", "crm").exit_code == 0
        (project / "scripted.py").write_text(SCRIPTED)
        (project / "crashing.py").write_text(CRASHING)
        with ScriptedModelServer(model) as server:
            done = cli(
                "eval", "--env", "sales", "--task", "TASK-002", "--task", "TASK-001",
                "--agent", "scripted.py", "--agent", "crashing.py", "--model", "m=openai/x",
                "--base-url", server.base_url, "--json",
            )  # fmt: skip
        assert done.exit_code == 0, done.output
        eval_id = json.loads(done.stdout)["evalId"]
        exported = cli("runs", "export", "--eval", eval_id)
        assert exported.exit_code == 0, exported.output
        yield {
            "project": project,
            "eval_id": eval_id,
            "lines": [json.loads(line) for line in exported.stdout.splitlines()],
            "stdout": exported.stdout,
            "requests": server.requests,
        }


def run_dir(evaluated: dict[str, Any], run_id: str) -> Path:
    found = list((evaluated["project"] / ".silo").rglob(run_id))
    assert len(found) == 1, found
    return Path(found[0])


def trace(evaluated: dict[str, Any], run_id: str) -> list[dict[str, Any]]:
    text = (run_dir(evaluated, run_id) / "trace.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def result_json(evaluated: dict[str, Any], run_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir(evaluated, run_id) / "result.json").read_text())
    return data


def by_agent(evaluated: dict[str, Any], agent: str) -> list[dict[str, Any]]:
    agents = {}
    for line in evaluated["lines"]:
        run = json.loads((run_dir(evaluated, line["runId"]) / "run.json").read_text())
        agents[line["runId"]] = run["agent"]
    return [line for line in evaluated["lines"] if agents[line["runId"]] == agent]


def text_of(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, separators=(",", ":"))


def pairs(messages: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each tool call with the tool message answering it (checked: same id, right after)."""
    found = []
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        answers = messages[i + 1 : i + 1 + len(message.get("tool_calls") or [])]
        for call, answer in zip(message.get("tool_calls") or [], answers, strict=True):
            assert answer["role"] == "tool" and answer["tool_call_id"] == call["id"]
            found.append((call, answer))
    return found


# --- runs export ------------------------------------------------------------------------------


def test_section12_one_line_per_rollout_with_exactly_the_keys(evaluated: dict[str, Any]) -> None:
    lines = evaluated["lines"]
    assert len(lines) == 6
    for line in lines:
        assert set(line) == KEYS
        assert line["environment"] == "sales"
        assert line["task"] in ("TASK-001", "TASK-002")  # the task id
        assert set(line["usage"]) == {"inputTokens", "outputTokens", "modelSteps"}
    assert evaluated["stdout"].count("\n") == 6  # JSON lines


def test_section12_lines_follow_the_evals_plan_order(evaluated: dict[str, Any]) -> None:
    plan = [
        (json.loads((run_dir(evaluated, line["runId"]) / "run.json").read_text())["agent"], line)
        for line in evaluated["lines"]
    ]
    assert [(line["task"], agent) for agent, line in plan] == [
        ("TASK-002", "scripted"),
        ("TASK-002", "crashing"),
        ("TASK-002", "m"),
        ("TASK-001", "scripted"),
        ("TASK-001", "crashing"),
        ("TASK-001", "m"),
    ]


def test_section12_output_reward_passed_reason_and_usage_are_the_rollouts(
    evaluated: dict[str, Any],
) -> None:
    for line in evaluated["lines"]:
        result = result_json(evaluated, line["runId"])
        assert line["output"] == result["agentOutput"]
        assert (line["reward"], line["passed"]) == (result["reward"], result["passed"])
        assert line["terminationReason"] == result["terminationReason"]
        assert line["usage"] == {
            "inputTokens": result["inputTokens"],
            "outputTokens": result["outputTokens"],
            "modelSteps": result["modelSteps"],
        }


def test_section12_tools_are_in_openai_tool_format(evaluated: dict[str, Any]) -> None:
    listed = cli("tool", "list", "--env", "sales", "--json")
    assert listed.exit_code == 0, listed.output
    specs = json.loads(listed.stdout)
    expected = [
        {
            "type": "function",
            "function": {
                "name": s["name"],
                "description": s["description"],
                "parameters": s["inputSchema"],
            },
        }
        for s in specs
    ]
    for line in evaluated["lines"]:
        assert line["tools"] == expected


def test_section12_messages_start_with_the_task_as_the_user_message(
    evaluated: dict[str, Any],
) -> None:
    project = evaluated["project"]
    for line in evaluated["lines"]:
        task = project / ".silo" / "environments" / "sales" / "tasks" / f"{line['task']}.json"
        instruction = json.loads(task.read_text())["instruction"]
        assert line["messages"][0] == {"role": "user", "content": instruction}


def test_section12_a_scripted_agents_calls_become_assistant_tool_calls(
    evaluated: dict[str, Any],
) -> None:
    for line in by_agent(evaluated, "scripted"):
        messages = line["messages"]
        events = trace(evaluated, line["runId"])
        calls = [e for e in events if e["type"] == "tool_call"]
        results = [e for e in events if e["type"] == "tool_result"]
        assistants = [m for m in messages if m["role"] == "assistant" and m.get("tool_calls")]
        assert len(assistants) == len(calls) == 3  # one assistant message per call
        assert all(len(m["tool_calls"]) == 1 for m in assistants)
        paired = pairs(messages)
        assert len({call["id"] for call, _ in paired}) == 3
        for (call, answer), event, outcome in zip(paired, calls, results, strict=True):
            assert call["type"] == "function"
            assert call["function"]["name"] == event["tool"]
            assert json.loads(call["function"]["arguments"]) == event["input"]
            assert answer["content"] == text_of(outcome["output"])  # str as-is, else compact JSON
        assert messages[-1] == {"role": "assistant", "content": "All done."}  # the output text


def test_section12_a_crashed_run_is_exported_without_a_final_answer(
    evaluated: dict[str, Any],
) -> None:
    for line in by_agent(evaluated, "crashing"):
        assert line["terminationReason"] == "agent_error" and line["passed"] is False
        roles = [m["role"] for m in line["messages"]]
        assert roles == ["user", "assistant", "tool"]  # no final assistant text: no output
        assert len(pairs(line["messages"])) == 1


def test_section12_a_model_agents_messages_are_its_replies_rebuilt_from_the_trace(
    evaluated: dict[str, Any],
) -> None:
    for line in by_agent(evaluated, "m"):
        messages = line["messages"]
        steps = [e for e in trace(evaluated, line["runId"]) if e["type"] == "model_step"]
        assistants = [m for m in messages if m["role"] == "assistant"]
        assert len(assistants) == len(steps) == line["usage"]["modelSteps"] == 3  # one per reply
        for message, step in zip(assistants, steps, strict=True):
            recorded = step["message"]
            assert message.get("content") == recorded["content"]
            ids = [c["id"] for c in message.get("tool_calls") or []]
            assert ids == [c["id"] for c in recorded["toolCalls"]]
        assert [len(m.get("tool_calls") or []) for m in assistants] == [2, 1, 0]
        assert len(pairs(messages)) == 3
        assert messages[-1]["content"] == line["output"] == "USR-001 is here."
        assert line["usage"] == {"inputTokens": 220, "outputTokens": 19, "modelSteps": 3}


def test_section12_a_model_agents_export_is_the_conversation_it_sent(
    evaluated: dict[str, Any],
) -> None:
    line = by_agent(evaluated, "m")[0]
    sent = [r for r in evaluated["requests"] if r.task == line["messages"][0]["content"]]
    last = sent[-1].body  # the last request held the whole conversation but the final reply

    def parsed(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Arguments compared as JSON: DESIGN fixes no spacing for their text."""
        out = json.loads(json.dumps(messages))
        for message in out:
            for call in message.get("tool_calls") or []:
                call["function"]["arguments"] = json.loads(call["function"]["arguments"])
        return out  # type: ignore[no-any-return]

    assert parsed(line["messages"][:-1]) == parsed(last["messages"])
    assert line["tools"] == last["tools"]


def test_section12_run_ids_in_the_order_given_and_out_file(
    evaluated: dict[str, Any], tmp_path: Path
) -> None:
    first, second = evaluated["lines"][0]["runId"], evaluated["lines"][4]["runId"]
    out = tmp_path / "train.jsonl"
    done = cli("runs", "export", second, first, "--format", "chat", "--out", str(out))
    assert done.exit_code == 0, done.output
    assert "runId" not in done.stdout  # the lines went to the file
    assert [json.loads(x)["runId"] for x in out.read_text().splitlines()] == [second, first]


def test_section12_unknown_ids_are_eval_not_found_and_run_not_found(
    evaluated: dict[str, Any],
) -> None:
    for args, code in (
        (["--eval", "eval_20000101T000000_000000"], "eval_not_found"),
        (["run_20000101T000000000_000001_0000000000"], "run_not_found"),
    ):
        done = cli("runs", "export", *args)
        assert done.exit_code == 1, done.output
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {code}: "), done.stderr


def test_section12_format_is_chat(evaluated: dict[str, Any]) -> None:
    assert cli("runs", "export", "--eval", evaluated["eval_id"], "--format", "xml").exit_code == 2


# --- the TRL environment ----------------------------------------------------------------------

trl = pytest.importorskip("silo_async.integrations.trl")


def public(cls: type[Any]) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


def test_section12_trl_factory_signature_and_class_shape() -> None:
    params = inspect.signature(trl.environment_factory).parameters
    assert list(params)[:2] == ["env", "tasks"] and params["tasks"].default is None
    cls = trl.environment_factory(ENV)
    assert isinstance(cls, type)
    assert public(cls) == {"reset", *(t.name for t in ENV.tools)}  # nothing else public
    cls()  # TRL makes instances without arguments


def test_section12_trl_reset_opens_an_episode_and_returns_the_instruction() -> None:
    cls = trl.environment_factory(ENV, tasks=["TASK-COUNT"])
    instance = cls()
    assert instance.reset(task="TASK-COUNT", prompt="ignored") == ENV.task("TASK-COUNT").instruction
    with pytest.raises(Exception):  # noqa: B017 - DESIGN names no type: only not served
        instance.reset(task="TASK-OPT")
    trl.reward(["done"], [instance])


def test_section12_trl_methods_are_typed_from_the_schema_with_an_args_docstring() -> None:
    cls = trl.environment_factory(ENV)
    method = cls.get_opportunity
    params = inspect.signature(method).parameters
    assert [n for n in params if n != "self"] == ["opportunityId"]
    assert params["opportunityId"].annotation in (str, "str")
    assert params["opportunityId"].default is inspect.Parameter.empty  # required
    doc = inspect.getdoc(method) or ""
    assert doc.startswith("Read one opportunity.")
    assert "Args:" in doc and "opportunityId" in doc.split("Args:")[1]


def test_section12_trl_rejected_calls_are_observations_not_exceptions() -> None:
    instance = trl.environment_factory(ENV)()
    instance.reset(task="TASK-COUNT")
    found = instance.get_opportunity(opportunityId="OPP-004")
    missing = instance.get_opportunity(opportunityId="OPP-999")
    conflict = instance.reject()
    trl.reward(["x"], [instance])
    assert found == {"id": "OPP-004", "stage": "open"}
    assert missing == "no such opportunity"  # the error message
    assert conflict == "not now"


def test_section12_trl_reward_equals_a_silo_run_of_the_same_calls(tmp_path: Path) -> None:
    cls = trl.environment_factory(ENV)
    played, idle = cls(), cls()
    for instance in (played, idle):
        instance.reset(task="TASK-COUNT")
    assert played.bump() in (1, "1")  # calling a method changes the episode's world
    assert played.bump() in (2, "2")
    rewards = trl.reward(["ok", [{"role": "assistant", "content": "ok"}]], [played, idle])

    async def same(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("bump", {})
        await ctx.call_tool("bump", {})
        return "ok"

    async def nothing(ctx: silo.AgentContext) -> str:
        return "ok"

    expected = [anyio.run(silo.run, ENV, "TASK-COUNT", agent) for agent in (same, nothing)]
    assert rewards == [r.reward for r in expected] == [0.75, 0.5]
    assert all(isinstance(r, float) for r in rewards)


def test_section12_trl_non_identifier_tool_names_get_safe_method_names() -> None:
    @silo.tool(name="look-up.item", description="Look an item up.")
    def look_up(state: Any, args: dict[str, Any]) -> Any:
        return "found"

    @silo.verifier(id="VER-X", task_id="TASK-X")
    def anything(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
        return [silo.check("answered", ctx.agent_output == "found")]

    env = silo.Environment(
        name="odd names",
        create_state=dict,
        tools=[look_up],
        verifiers=[anything],
        tasks=[silo.Task("TASK-X", "X", "Look it up.", "VER-X")],
    )
    cls = trl.environment_factory(env)
    (name,) = public(cls) - {"reset"}
    assert name.isidentifier()
    instance = cls()
    instance.reset(task="TASK-X")
    assert getattr(instance, name)() == "found"
    assert trl.reward(["found"], [instance]) == [1.0]


def test_section12_trl_episodes_have_no_time_limit_unless_given() -> None:
    endless, limited = trl.environment_factory(ENV)(), trl.environment_factory(ENV, timeout=0.05)()
    for instance in (endless, limited):
        instance.reset(task="TASK-COUNT")
    time.sleep(0.3)  # the factory is a sync facade: a short real wait, past the 0.05 s limit
    assert endless.bump() in (1, "1")
    late = limited.bump()
    assert isinstance(late, str) and "ended" in late
    trl.reward(["ok", "ok"], [endless, limited])


def test_section12_trl_imports_neither_trl_nor_transformers() -> None:
    code = (
        "import sys, silo_async.integrations.trl\n"
        "print(sorted(m for m in ('trl', 'transformers') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
