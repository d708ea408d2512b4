"""A scripted "model" for the crm template's TASK-001, served by ScriptedModelServer.

It plays what a model does with the task, reading only what the conversation tells it: it
searches for the lead, converts it with the amount written as text (``"$48,000"``), reads the
``invalid_input`` error it gets back, corrects the amount, then reports. Any agent loop that
speaks Chat Completions or Messages can be pointed at it; ``make demo`` points
``agents.openai_chat`` at it.

Token usage is estimated as the JSON size of the request (and of the reply) over four, about
four characters per token: the figures grow with the conversation, as a real model's do. They
depend on the conversation alone: each tool call gets an id of its own turn (``call_t1_0``),
not the server's running count of requests, so the same conversation costs the same tokens
whatever else the server answered before (two identical evals bill identically).
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from silo_async.testing import ModelRequest, Reply, ToolCall

TASK_ID = "TASK-001"
LEAD = "Tomasz Wierzbicki"


def _reply(request: ModelRequest, text: str | None, *calls: ToolCall) -> Reply:
    # Ids of this conversation's own turn: the server's default ids count every request it
    # answered, so they (and the next request's size) would differ from one eval to the next.
    calls = tuple(
        attrs.evolve(call, id=f"call_t{request.turn}_{i}") for i, call in enumerate(calls)
    )
    size = len(json.dumps(request.body))
    out = len(text or "") + sum(len(json.dumps(c.input)) + len(c.name) for c in calls)
    return Reply(text=text, tool_calls=calls, input_tokens=size // 4, output_tokens=out // 4 + 8)


def _last_output(request: ModelRequest) -> Any:
    content = request.last_results[-1].content
    # Some harnesses (Inspect) show a tool's error to the model as "Error: <its text>".
    return json.loads(content.removeprefix("Error: "))


def _convert(lead_id: str, amount: Any) -> ToolCall:
    args = {
        "leadId": lead_id,
        "amount": amount,
        "expectedCloseDate": "2026-12-15",
        "opportunityName": "Harrowgate Soil Labs soil LIMS",
        "actorId": "USR-003",
    }
    return ToolCall("convert_lead", args)


def play(request: ModelRequest) -> Reply:
    """The next reply of the conversation in ``request`` (any number of them at once)."""
    if request.turn == 0:
        return _reply(request, "Let me find the lead.", ToolCall("search_leads", {"query": LEAD}))
    first = json.loads(request.tool_results[0].content)
    lead_id = first["results"][0]["id"]
    if request.turn == 1:  # a model's classic slip: the amount as it reads in the task
        return _reply(request, None, _convert(lead_id, "$48,000"))
    last = _last_output(request)
    if last.get("code") == "invalid_input":
        return _reply(request, "The amount must be a number; retrying.", _convert(lead_id, 48000))
    opportunity = last["opportunity"]["id"]
    return _reply(request, f"Converted {lead_id} into opportunity {opportunity} ($48,000).")
