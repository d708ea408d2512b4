"""Users in the loop (DESIGN §13): tasks with a user, message_user, simulators, dual control."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async import world as silo_world
from silo_async.testing import ScriptedAgent
from silo_async.world import told

from .chat_world import ENV, ORDER_USER, SYNC_USER, TASKS, solver
from .docs_support import page

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend(fake_clock_backend: Any) -> Any:
    """Limit tests run on asyncio and on trio in virtual time."""
    return fake_clock_backend


def _files(run_dir: Path | None) -> tuple[bytes, bytes]:
    assert run_dir is not None
    return (run_dir / "result.json").read_bytes(), (run_dir / "state-diff.json").read_bytes()


def _events(result: silo.RunResult, kind: str) -> list[dict[str, Any]]:
    return [e for e in result.trace if e["type"] == kind]


def _task(user: dict[str, Any], task_id: str = "CHAT-X") -> silo.Task:
    return silo.Task(task_id, "x", "Help the customer.", "VER-ORDER", user=user)


def _env(*tasks: silo.Task) -> silo.Environment:
    return silo.Environment(
        name="bakery",
        create_state=ENV.create_state,
        tools=ENV.tools,
        verifiers=[silo.verifier(id="VER-ORDER", task_id=t.id)(lambda f, i: [silo.check("x", 1)])
                   for t in tasks[:1]],
        tasks=tasks,
    )  # fmt: skip


# -- the agent's side: ctx.task, ctx.tools, message_user -------------------------------------


async def test_the_agent_gets_the_opening_and_message_user_last() -> None:
    seen: dict[str, Any] = {}

    async def agent(ctx: silo.AgentContext) -> str:
        seen["task"], seen["tools"] = ctx.task, [t.name for t in ctx.tools]
        seen["own"] = await ctx.call_tool("set_offline_mode", {"on": False})
        return ""

    await silo.run(ENV, "CHAT-SYNC", agent)
    assert seen["task"] == (
        "Help them order 1 croissant.\n\nUser: My order won't go through, it's bo@example.com."
    )
    # The user's own tools are not the agent's; message_user comes last.
    assert seen["tools"] == ["find_customer", "place_order", "refund_order", "message_user"]
    assert seen["own"].is_error and seen["own"].output["code"] == "tool_not_found"


async def test_message_user_schema_and_a_task_without_user() -> None:
    seen: dict[str, Any] = {}

    async def agent(ctx: silo.AgentContext) -> str:
        seen["schema"] = ctx.tools[-1].to_dict()["inputSchema"]
        seen["empty"] = await ctx.call_tool("message_user", {"text": ""})
        seen["missing"] = await ctx.call_tool("message_user", {})
        return ""

    result = await silo.run(ENV, "CHAT-ORDER", agent)
    assert seen["schema"]["required"] == ["text"]
    assert seen["schema"]["properties"]["text"] == {
        "type": "string",
        "minLength": 1,
        "description": "What you say to the user.",
    }
    for key in ("empty", "missing"):
        assert seen[key].output["code"] == "invalid_input", seen[key]
    assert result.user_turns == 0 and result.tool_calls == 0 and not _events(result, "user_turn")

    from .worlds import ENV as PLAIN

    async def talker(ctx: silo.AgentContext) -> str:
        seen["tools"] = [t.name for t in ctx.tools]
        seen["call"] = await ctx.call_tool("message_user", {"text": "hello?"})
        return ""

    plain = await silo.run(PLAIN, "TASK-ANSWER", talker)
    assert "message_user" not in seen["tools"]
    assert seen["call"].output["code"] == "tool_not_found"
    assert plain.result_dict()["userTurns"] == 0 and plain.result_dict()["userToolCalls"] == 0


async def test_turns_are_not_tool_calls_and_not_limited_by_max_tool_calls() -> None:
    replies: list[Any] = []

    async def agent(ctx: silo.AgentContext) -> str:
        for text in ("hi", "your email?", "thanks"):
            replies.append((await ctx.call_tool("message_user", {"text": text})).output)
        await ctx.call_tool("find_customer", {"email": "ada@example.com"})
        return "done"

    result = await silo.run(ENV, "CHAT-ORDER", agent, max_tool_calls=1)
    assert result.termination_reason == "completed"
    assert (result.tool_calls, result.user_turns) == (1, 3)
    assert replies == [
        {"reply": "Sorry, what do you need from me?"},
        {"reply": "It's ada@example.com."},
        {"reply": "Sorry, what do you need from me?"},
    ]
    turns = _events(result, "user_turn")
    assert list(turns[0])[:6] == [
        "seq",
        "type",
        "agentText",
        "reply",
        "ended",
        "actions",
    ]
    assert [(t["agentText"], t["ended"]) for t in turns] == [
        ("hi", False),
        ("your email?", False),
        ("thanks", False),
    ]
    run_end = _events(result, "run_end")[0]
    assert (run_end["userTurns"], run_end["userToolCalls"]) == (3, 0)


async def test_the_user_ends_then_invalid_state_and_the_rollout_goes_on() -> None:
    outputs: list[Any] = []

    async def agent(ctx: silo.AgentContext) -> str:
        for text in ("ORD-1 is yours", "anything else?"):
            outputs.append((await ctx.call_tool("message_user", {"text": text})).output)
        outputs.append((await ctx.call_tool("find_customer", {"email": "bo@example.com"})).output)
        return "x"

    result = await silo.run(ENV, "CHAT-ORDER", agent)
    assert outputs[0] == {"reply": "Perfect, thank you!", "ended": True}
    assert outputs[1]["code"] == "invalid_state"
    assert "user ended the conversation" in outputs[1]["message"]
    assert outputs[2]["id"] == "CUS-2"
    assert result.user_turns == 1 and result.termination_reason == "completed"


async def test_the_turn_beyond_max_turns_is_limit_exceeded_then_invalid_state() -> None:
    task = _task({**ORDER_USER, "script": [], "maxTurns": 2})
    env = _env(task)
    codes: list[Any] = []

    async def agent(ctx: silo.AgentContext) -> str:
        for _ in range(4):
            out = (await ctx.call_tool("message_user", {"text": "hello"})).output
            codes.append(out.get("code", "reply"))
        return "x"

    result = await silo.run(env, task.id, agent)
    assert codes == ["reply", "reply", "limit_exceeded", "invalid_state"]
    assert result.user_turns == 2 and result.termination_reason == "completed"
    assert len(_events(result, "user_turn")) == 2  # nothing was said beyond the limit


# -- dual control ----------------------------------------------------------------------------


async def test_user_tools_act_on_the_same_world_and_are_traced_as_the_users() -> None:
    result = await silo.run(ENV, "CHAT-SYNC", solver)
    assert result.passed, result.failed_required
    assert (result.tool_calls, result.user_tool_calls, result.user_turns) == (1, 1, 2)
    user_events = [e for e in result.trace if e.get("actor") == "user"]
    assert [(e["type"], e["callId"], e["tool"]) for e in user_events] == [
        ("tool_call", "u1", "set_offline_mode"),
        ("tool_result", "u1", "set_offline_mode"),
    ]
    assert user_events[0]["input"] == {"on": False}
    assert user_events[1]["output"] == {"offline": False} and not user_events[1]["isError"]
    turn = _events(result, "user_turn")[0]
    assert turn["actions"] == [{"callId": "u1", "tool": "set_offline_mode", "isError": False}]
    assert result.state_diff["collections"] or result.state_diff  # the app changed
    # The agent's own counters and call ids never include the user's.
    agent_calls = [e for e in _events(result, "tool_call") if "actor" not in e]
    assert [e["callId"] for e in agent_calls] == [1]
    data = result.result_dict()
    keys = list(data)
    assert keys[keys.index("outputTokens") + 1 : keys.index("outputTokens") + 3] == [
        "userTurns",
        "userToolCalls",
    ]
    assert "userInputTokens" not in data


class Recorder:
    """A user that calls its tools as told and records each turn it saw."""

    made = 0

    def __init__(self, task: silo.Task) -> None:
        Recorder.made += 1
        self.task = task
        self.seen: list[silo.UserTurn] = []

    async def reply(self, turn: silo.UserTurn) -> silo.UserReply:
        self.seen.append(turn)
        results = [
            await turn.call_tool("app_status"),
            await turn.call_tool("set_offline_mode", {"on": "yes"}),  # invalid input
            await turn.call_tool("place_order", {"customerId": "CUS-2", "quantity": 1}),
        ]
        codes = [r.output.get("code", "ok") for r in results]
        return silo.UserReply(
            f"turn {turn.number}: {','.join(codes)}", input_tokens=7, output_tokens=3
        )


async def test_a_custom_user_gets_its_tools_only_and_its_tokens_count_apart() -> None:
    users: list[Recorder] = []

    def make(task: silo.Task) -> Recorder:
        users.append(Recorder(task))
        return users[-1]

    async def agent(ctx: silo.AgentContext) -> Any:
        ctx.record_model_step(model="m", input_tokens=5, output_tokens=5)
        first = await ctx.call_tool("message_user", {"text": "one"})
        second = await ctx.call_tool("message_user", {"text": "two"})
        return [first.output["reply"], second.output["reply"]]

    results = await silo.run_many(ENV, ["CHAT-SYNC"], agent, runs=2, user=make, token_limit=12)
    assert len(users) == 2 and users[0] is not users[1]  # a fresh user per rollout
    result = results[0]
    assert result.termination_reason == "completed"  # 20 user tokens, never the agent's limit
    assert result.agent_output == [
        "turn 1: ok,invalid_input,tool_not_found",
        "turn 2: ok,invalid_input,tool_not_found",
    ]
    assert (result.user_turns, result.user_tool_calls, result.tool_calls) == (2, 6, 0)
    assert result.tool_errors == 0  # the user's mistakes are not the agent's
    data = result.result_dict()
    keys = list(data)
    at = keys.index("outputTokens")
    assert keys[at + 1 : at + 5] == ["userTurns", "userToolCalls", "userInputTokens",
                                     "userOutputTokens"]  # fmt: skip
    assert (data["inputTokens"], data["userInputTokens"], data["userOutputTokens"]) == (5, 14, 6)
    seen = users[0].seen
    assert [t.text for t in seen] == ["one", "two"]
    assert seen[1].conversation == (
        {"agentText": "one", "reply": "turn 1: ok,invalid_input,tool_not_found", "ended": False},
    )
    assert seen[0].task.id == "CHAT-SYNC"
    turn = _events(result, "user_turn")[0]
    assert turn["usage"] == {"inputTokens": 7, "outputTokens": 3}
    assert [a["tool"] for a in turn["actions"]] == ["app_status", "set_offline_mode", "place_order"]


async def test_a_user_that_raises_is_an_environment_fault() -> None:
    class Broken:
        async def reply(self, turn: silo.UserTurn) -> silo.UserReply:
            raise RuntimeError("simulator down")

    async def agent(ctx: silo.AgentContext) -> Any:
        return (await ctx.call_tool("message_user", {"text": "hi"})).output

    result = await silo.run(ENV, "CHAT-ORDER", agent, user=lambda task: Broken())
    assert result.agent_output["code"] == "internal_error"
    assert "RuntimeError: simulator down" in result.agent_output["message"]
    assert (result.user_turns, result.tool_faults, result.tool_errors) == (0, 1, 0)
    fault = _events(result, "user_fault")[0]
    assert fault["agentText"] == "hi" and fault["error"]["type"] == "RuntimeError"


async def test_user_must_make_a_user() -> None:
    with pytest.raises(TypeError, match=r"silo\.User"):
        await silo.run(ENV, "CHAT-ORDER", solver, user=lambda task: "not a user")  # type: ignore[arg-type,return-value]


# -- the scripted user -----------------------------------------------------------------------


async def test_scripted_rules_in_order_all_keywords_once_and_otherwise() -> None:
    task = _task(
        {
            "opening": "hi",
            "script": [
                {"when": ["Refund", "ORDER"], "say": "refund+order"},
                {"when": ["refund"], "say": "first refund", "once": True},
                {"when": ["refund"], "say": "refund again"},
                {"when": [], "say": "anything", "once": True},
            ],
            "otherwise": {"say": "fallback"},
        }
    )
    user = silo.ScriptedUser.from_task(task)
    said = [
        user.match(text).say
        for text in ("a REFUND for my order", "a refund", "REFUND", "hello", "hello", "refund")
    ]
    assert said == [
        "refund+order",
        "first refund",
        "refund again",
        "anything",
        "fallback",
        "refund again",
    ]
    default = silo.ScriptedUser.from_task(_task({"opening": "hi"}))
    assert default.match("anything").say == "I don't know."
    with pytest.raises(ValueError, match="has no user"):
        silo.ScriptedUser.from_task(silo.Task("T", "t", "i", "V"))


# -- grading and the conversation ------------------------------------------------------------


async def test_verifiers_see_the_conversation_and_told() -> None:
    seen: dict[str, Any] = {}

    @silo.verifier(id="VER-ORDER", task_id="CHAT-ORDER")
    def grade(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
        seen["conversation"] = ctx.conversation
        return [silo.check("told", told(ctx, "$1,200"))]

    env = silo.Environment("bakery", ENV.create_state, ENV.tools, [grade], [TASKS[0]])

    async def agent(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("message_user", {"text": "That will be 1200 dollars. Email?"})
        return "I told them $1,200"

    result = await silo.run(env, "CHAT-ORDER", agent)
    assert seen["conversation"] == (
        {
            "agentText": "That will be 1200 dollars. Email?",
            "reply": "It's ada@example.com.",
            "ended": False,
        },
    )
    assert result.passed

    async def answer_only(ctx: silo.AgentContext) -> str:
        return "That will be $1,200."  # the final answer is not a turn

    assert not (await silo.run(env, "CHAT-ORDER", answer_only)).passed


def test_told_matching() -> None:
    class Ctx:
        conversation = (
            {"agentText": "Your refund of $1,200.50 is ORD-12", "reply": "ok", "ended": False},
        )

    assert told(Ctx, "1200.50") and told(Ctx, "1,200") and told(Ctx, "REFUND OF")
    assert told(Ctx, "€1200")
    assert silo_world.grade.told is told  # also in the grading namespace (w.grade.told)
    assert not told(Ctx, "120") and not told(Ctx, "ORD-1") and not told(Ctx, "")
    assert not told(silo.VerifierContext("", TASKS[0]), "refund")


# -- the same turns through run() and an episode ---------------------------------------------


@pytest.mark.parametrize("task_id", ["CHAT-ORDER", "CHAT-SYNC", "CHAT-REFUSE"])
async def test_run_and_episode_give_the_same_files(tmp_path: Path, task_id: str) -> None:
    ran = await silo.run(ENV, task_id, solver, runs_dir=tmp_path / "run")
    assert ran.passed, ran.failed_required
    calls = [
        (e["tool"], e["input"]) for e in ran.trace if e["type"] == "tool_call" and "actor" not in e
    ]
    turns = iter(_events(ran, "user_turn"))
    steps: list[tuple[str, Any]] = []
    calls_iter = iter(calls)
    for event in ran.trace:
        if event["type"] == "user_turn":
            steps.append(("message_user", {"text": next(turns)["agentText"]}))
        elif event["type"] == "tool_call" and "actor" not in event:
            steps.append(next(calls_iter))
    async with silo.episode(ENV, task_id, runs_dir=tmp_path / "ep") as ep:
        for name, args in steps:
            await ep.call_tool(name, args)
        played = await ep.finish(ran.agent_output)
    assert _files(played.run_dir) == _files(ran.run_dir)


async def test_an_episode_cuts_a_slow_user_turn_at_its_deadline() -> None:
    class Slow:
        async def reply(self, turn: silo.UserTurn) -> silo.UserReply:
            await anyio.sleep(3600)
            return silo.UserReply("never")

    async with silo.episode(ENV, "CHAT-ORDER", timeout=1.0, user=lambda t: Slow()) as ep:
        assert [t.name for t in ep.tools][-1] == "message_user"
        cut = await ep.call_tool("message_user", {"text": "hello"})
        assert cut.output["code"] == "limit_exceeded"
        after = await ep.call_tool("message_user", {"text": "hello?"})
        assert after.output["code"] == "invalid_state"
    assert ep.result is not None and ep.result.termination_reason == "timeout"
    assert ep.result.user_turns == 0


async def test_a_run_times_out_in_a_slow_user_turn() -> None:
    class Slow:
        async def reply(self, turn: silo.UserTurn) -> silo.UserReply:
            await anyio.sleep(3600)
            return silo.UserReply("never")

    async def agent(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("message_user", {"text": "hello"})
        return "never"

    result = await silo.run(ENV, "CHAT-ORDER", agent, timeout=1.0, user=lambda t: Slow())
    assert result.termination_reason == "timeout" and result.user_turns == 0


async def test_the_noop_fails_every_conversational_task() -> None:
    results = await silo.run_many(ENV, [t.id for t in TASKS], ScriptedAgent([], answer=""))
    assert not any(r.passed for r in results)
    assert all(r.user_turns == 0 for r in results)


# -- the task file ---------------------------------------------------------------------------


def test_task_user_round_trips_and_keeps_the_task_hashable() -> None:
    task = silo.Task.from_dict(
        {"id": "T", "title": "t", "instruction": "i", "verifierId": "V", "user": SYNC_USER}
    )
    assert task.user == SYNC_USER and task.to_dict()["user"] == SYNC_USER
    assert list(task.to_dict())[-1] == "user"
    assert silo.Task.from_dict(task.to_dict()) == task
    assert hash(task) == hash(silo.Task("T", "t", "i", "V", user=ORDER_USER))
    script = task.user_script
    assert (
        script is not None
        and script.max_turns == 5
        and script.tools
        == (
            "set_offline_mode",
            "app_status",
        )
    )
    assert "user" not in silo.Task("T", "t", "i", "V").to_dict()
    mine = dict(ORDER_USER)
    held = silo.Task("T", "t", "i", "V", user=mine)
    mine["opening"] = "changed"
    assert held.user is not None and held.user["opening"] == ORDER_USER["opening"]


def test_the_docs_task_file_is_a_valid_conversational_task() -> None:
    section = page("users").split("The same task as a file", 1)[1]
    text = section.split("```json\n", 1)[1].split("```", 1)[0]
    task = silo.Task.from_dict(json.loads(text), source="docs/users.md")
    script = task.user_script
    assert task.id == "REFUND" and task.user is not None
    assert script is not None and script.max_turns == 10 and len(script.rules) == 2


@pytest.mark.parametrize(
    ("user", "field"),
    [
        ("hello", "user"),
        ({"opening": "  "}, "user.opening"),
        ({"opening": "hi", "openin": "x"}, "user.openin"),
        ({"opening": "hi", "persona": 3}, "user.persona"),
        ({"opening": "hi", "knows": []}, "user.knows"),
        ({"opening": "hi", "script": {}}, "user.script"),
        ({"opening": "hi", "script": ["x"]}, "user.script[0]"),
        ({"opening": "hi", "script": [{"when": "pin"}]}, "user.script[0].when"),
        ({"opening": "hi", "script": [{"when": [""]}]}, "user.script[0].when[0]"),
        ({"opening": "hi", "script": [{"say": 5}]}, "user.script[0].say"),
        ({"opening": "hi", "script": [{"end": "yes"}]}, "user.script[0].end"),
        ({"opening": "hi", "script": [{"once": 1}]}, "user.script[0].once"),
        ({"opening": "hi", "script": [{"sey": "x"}]}, "user.script[0].sey"),
        ({"opening": "hi", "script": [{"do": [{"tool": "x"}]}]}, "user.script[0].do[0].tool"),
        (
            {"opening": "hi", "tools": ["x"], "script": [{"do": [{"tool": "x", "input": 1}]}]},
            "user.script[0].do[0].input",
        ),
        ({"opening": "hi", "otherwise": {"when": ["x"]}}, "user.otherwise.when"),
        ({"opening": "hi", "tools": ["message_user"]}, "user.tools[0]"),
        ({"opening": "hi", "tools": ["a", "a"]}, "user.tools[1]"),
        ({"opening": "hi", "maxTurns": 0}, "user.maxTurns"),
        ({"opening": "hi", "maxTurns": True}, "user.maxTurns"),
    ],
)
def test_a_malformed_user_is_task_invalid_naming_the_field(user: Any, field: str) -> None:
    data = {"id": "T", "title": "t", "instruction": "i", "verifierId": "V", "user": user}
    with pytest.raises(silo.SiloError) as raised:
        silo.Task.from_dict(data, source='Task file "tasks/T.json"')
    assert raised.value.code == "task_invalid"
    assert raised.value.details == {"source": 'Task file "tasks/T.json"', "field": field}
    assert f'"{field}"' in raised.value.message
    with pytest.raises(silo.SiloError) as code_first:
        silo.Task("T", "t", "i", "V", user=user)
    assert code_first.value.details["field"] == field


def test_a_misspelt_user_key_is_task_invalid() -> None:
    data = {"id": "T", "title": "t", "instruction": "i", "verifierId": "V", "User": {}}
    with pytest.raises(silo.SiloError, match='spell the key "user"'):
        silo.Task.from_dict(data)


def test_an_environment_with_its_own_message_user_is_refused() -> None:
    @silo.tool(name="message_user", description="mine")
    def mine(state: Any, args: Any) -> Any:
        return None

    with pytest.raises(silo.SiloError) as raised:
        silo.Environment("x", dict, tools=[mine])
    assert raised.value.code == "tool_name_reserved"
    bound = silo.Environment("x", dict, bind=lambda state: [mine])
    with pytest.raises(silo.SiloError, match="reserved"):
        bound.bind_tools({})


def test_result_json_of_a_task_without_user_has_zero_user_counts(tmp_path: Path) -> None:
    from .worlds import ENV as PLAIN

    async def main() -> silo.RunResult:
        return await silo.run(PLAIN, "TASK-ANSWER", ScriptedAgent([], "2"), runs_dir=tmp_path)

    result = anyio.run(main)
    written = json.loads((tmp_path / result.run_id / "result.json").read_text())
    assert (written["userTurns"], written["userToolCalls"]) == (0, 0)


async def test_a_user_turn_line_is_what_emit_writes() -> None:
    from silo_async._trace import encode_event

    async def agent(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("message_user", {"text": 'Your "email", Zoë?\n\u2028'})
        return ""

    result = await silo.run(ENV, "CHAT-ORDER", agent)
    line = next(x for x in result.trace_lines if '"user_turn"' in x)
    assert line == encode_event(json.loads(line))
    assert json.loads(line)["agentText"] == 'Your "email", Zoë?\n\u2028'
