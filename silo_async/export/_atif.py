"""One rollout as an ATIF v1.7 trajectory (``runs export --format atif``).

The Agent Trajectory Interchange Format (Harbor's; NeMo Gym, OpenEnv and slime read it) is one
JSON object per trajectory: ``schema_version``, ``session_id``, ``agent``, ``steps``,
``final_metrics``, ``extra``. Steps are ATIF's own: the task's instruction (with a user's
opening) is the first ``user`` step; each model response is an ``agent`` step holding the tool
calls it made and, as its ``observation``, what they returned; each turn of a conversational
task's user is a ``user`` step after the agent step that spoke to it. A call no model response
announced (a scripted agent's) is an agent step of its own with ``llm_call_count: 0`` (ATIF's
deterministic dispatch), and so is a final answer no response said. The pairing of calls with
the responses that made them is the chat export's (:func:`~._chat.assistant_turns`): both
formats tell the same story.

A step's ``metrics`` hold its tokens (``prompt_tokens``, ``completion_tokens``) and, when the
model step recorded them, its exact token ids and logprobs. silo's grade is the trajectory's
``extra``: ``reward``, ``passed``, ``rewardValid``, ``checks`` (``result.json``'s),
``stateDiff`` (``state-diff.json``), ``terminationReason``, ``family`` and ``seed`` (null for a
hand-written task).
"""

from __future__ import annotations

import json
from typing import Any

from .._jsonutil import output_text
from .._taskuser import MESSAGE_USER
from .._version import __version__
from ._chat import AssistantTurn, CallKey, arguments_text, assistant_turns

__all__ = ["ATIF_VERSION", "atif_trajectory"]

#: The ATIF version the export writes.
ATIF_VERSION = "ATIF-v1.7"

#: The agent system named in every trajectory's ``agent``.
AGENT_SYSTEM = "silo_async"

#: A model step's fields kept in its agent step's ``extra`` (ATIF has no place of its own).
_STEP_EXTRA = ("stopReason", "durationMs", "attempts", "policyVersion", "replayed")


def atif_trajectory(
    run: dict[str, Any],
    result: dict[str, Any],
    events: list[dict[str, Any]],
    instruction: str,
    tools: list[dict[str, Any]],
    state_diff: dict[str, Any],
) -> dict[str, Any]:
    """The ATIF trajectory of one recorded rollout.

    Args:
        run: its ``run.json``.
        result: its ``result.json``.
        events: its trace events, in order.
        instruction: what the agent was given (the instruction, a user's opening after it).
        tools: the tools the agent saw, in OpenAI's function format.
        state_diff: its ``state-diff.json``.

    Returns:
        The trajectory as a JSON-ready dict (what Harbor's validator accepts).
    """
    turns, outputs = assistant_turns(events)
    started = events[0].get("at") if events else None
    steps: list[dict[str, Any]] = [_user_step(instruction, started)]
    for turn in turns:
        steps.append(_agent_step(turn, outputs))
        steps += [
            _user_turn(outputs[key], turn.at)
            for _, tool, _, key in turn.calls
            if tool == MESSAGE_USER and key in outputs
        ]
    answer = output_text(result.get("agentOutput"))
    last = steps[-1]
    if answer and not (last["source"] == "agent" and last["message"] == answer):
        end = next((e.get("at") for e in reversed(events) if e.get("type") == "agent_output"), None)
        steps.append(_dispatch({"message": answer}, end))
    for number, step in enumerate(steps, start=1):
        step["step_id"] = number
    models = [t.step.get("model") for t in turns if t.step is not None and t.step.get("model")]
    trajectory: dict[str, Any] = {
        "schema_version": ATIF_VERSION,
        "session_id": str(run["runId"]),
        "trajectory_id": str(run["runId"]),
        "agent": _agent(run, tools, models[0] if models else None),
        "steps": steps,
        "final_metrics": _final_metrics(result, len(steps)),
        "extra": grade(run, result, state_diff),
    }
    return trajectory


def grade(
    run: dict[str, Any], result: dict[str, Any], state_diff: dict[str, Any]
) -> dict[str, Any]:
    """Silo's grade of a rollout, as the trajectory's ``extra`` holds it."""
    return {
        "runId": run["runId"],
        "environment": run["environment"],
        "task": run["taskId"],
        "reward": float(result["reward"]),
        "passed": bool(result["passed"]),
        "rewardValid": bool(result.get("rewardValid", True)),
        "checks": result.get("checks", []),
        "stateDiff": state_diff,
        "terminationReason": result["terminationReason"],
        "family": run.get("family"),
        "seed": run.get("seed"),
    }


def _agent(run: dict[str, Any], tools: list[dict[str, Any]], model: str | None) -> dict[str, Any]:
    agent: dict[str, Any] = {
        "name": AGENT_SYSTEM,
        "version": __version__,
        "tool_definitions": tools,
        "extra": {"label": run.get("agent")},
    }
    if model is not None:
        agent["model_name"] = model
    return agent


def _user_step(message: str, at: str | None) -> dict[str, Any]:
    step: dict[str, Any] = {"source": "user", "message": message}
    if at is not None:
        step["timestamp"] = at
    return step


def _user_turn(output: Any, at: str | None) -> dict[str, Any]:
    """A user's reply to ``message_user`` as a user step (an unanswered turn: its error)."""
    said = output.get("reply") if isinstance(output, dict) else None
    step = _user_step(said if isinstance(said, str) else output_text(output), at)
    if isinstance(output, dict) and output.get("ended"):
        step["extra"] = {"ended": True}
    return step


def _dispatch(step: dict[str, Any], at: str | None) -> dict[str, Any]:
    """An agent step no model response made (ATIF v1.7: ``llm_call_count`` 0)."""
    done: dict[str, Any] = {"source": "agent", **step, "llm_call_count": 0}
    if at is not None:
        done["timestamp"] = at
    return done


def _agent_step(turn: AssistantTurn, outputs: dict[CallKey, Any]) -> dict[str, Any]:
    """A model response (or a scripted call) with its calls and what they returned."""
    body: dict[str, Any] = {"message": turn.content if isinstance(turn.content, str) else ""}
    done = [c for c in turn.calls if c[3] in outputs]
    if done:
        body["tool_calls"] = [_tool_call(cid, name, text) for cid, name, text, _ in done]
        body["observation"] = {
            "results": [
                {"source_call_id": cid, "content": arguments_text(outputs[key])}
                for cid, _, _, key in done
            ]
        }
    step = turn.step
    if step is None:
        return _dispatch(body, turn.at)
    agent: dict[str, Any] = {"source": "agent", **body, "llm_call_count": 1}
    if turn.at is not None:
        agent["timestamp"] = turn.at
    if step.get("model"):
        agent["model_name"] = str(step["model"])
    agent["metrics"] = _metrics(step)
    extra = {key: step[key] for key in _STEP_EXTRA if step.get(key) is not None}
    if extra:
        agent["extra"] = extra
    return agent


def _tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """An ATIF tool call: arguments as an object (text that is not one goes in ``extra``)."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    call: dict[str, Any] = {"tool_call_id": call_id, "function_name": name}
    if isinstance(parsed, dict):
        call["arguments"] = parsed
    else:  # the model wrote something that is no JSON object: kept, as sent
        call["arguments"] = {}
        call["extra"] = {"rawArguments": arguments}
    return call


def _metrics(step: dict[str, Any]) -> dict[str, Any]:
    """A model step's tokens: counts, and its exact ids and logprobs when recorded."""
    usage = step.get("usage") or {}
    found = {
        "prompt_tokens": usage.get("inputTokens"),
        "completion_tokens": usage.get("outputTokens"),
        "prompt_token_ids": step.get("promptTokenIds"),
        "completion_token_ids": step.get("completionTokenIds"),
        "logprobs": step.get("logprobs"),
    }
    return {key: value for key, value in found.items() if value is not None}


def _final_metrics(result: dict[str, Any], steps: int) -> dict[str, Any]:
    return {
        "total_prompt_tokens": int(result.get("inputTokens", 0)),
        "total_completion_tokens": int(result.get("outputTokens", 0)),
        "total_steps": steps,
        "extra": {
            "modelSteps": int(result.get("modelSteps", 0)),
            "toolCalls": int(result.get("toolCalls", 0)),
            "toolErrors": int(result.get("toolErrors", 0)),
            "durationMs": result.get("durationMs"),
        },
    }
