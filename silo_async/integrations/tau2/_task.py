"""tau2's tasks as silo tasks, and tau2's user simulator as the way a model plays their user.

A tau2 task becomes ``TASK-NNN`` (1-based, in the order of the split); ``to_dict()`` (what
``task show`` prints) names tau2's own id. The user has no opening: tau2's user speaks first,
after the agent's greeting, so the user writes its first message when the rollout starts. Its
``user_play`` is tau2's user simulator: tau2's guidelines and the task's scenario as the system
prompt, the conversation after tau2's greeting, and tau2's stop words ending it — played on any
model through ``--user-model`` (:func:`silo_async.users.model_user`).
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from ..._task import Task
from ..._user import UserTurn

__all__ = ["INSTRUCTION", "MAX_TURNS", "Tau2Play", "Tau2Task", "task_id"]

#: What the agent is told before the user's first message (tau2's policy is ``ctx.policy``).
INSTRUCTION = "Help the customer who contacts you, following the policy."

#: The user's turns (tau2 ends a simulation at 200 messages, tool calls and results included).
MAX_TURNS = 100


def task_id(number: int) -> str:
    """``TASK-001`` for the first task of the split."""
    return f"TASK-{number:03d}"


class Tau2Play:
    """tau2's user simulator, as :class:`~silo_async.users.UserPlay` for a model user.

    Args:
        scenario: the task's user scenario as tau2 writes it for its simulator.
        with_tools: the user has tools of their own (tau2 then gives its guidelines for tools).
    """

    def __init__(self, scenario: str, with_tools: bool) -> None:
        self.scenario = scenario
        self.with_tools = with_tools
        self._system: str | None = None
        self._greeting: str | None = None

    @property
    def system(self) -> str:
        """tau2's system prompt for its user simulator: its guidelines, then the scenario."""
        if self._system is None:
            from tau2.user.user_simulator import UserSimulator  # imports LiteLLM: only here

            simulator = UserSimulator(tools=[] if self.with_tools else None,
                                      instructions=self.scenario)  # fmt: skip
            self._system = str(simulator.system_prompt)
        return self._system

    def greeting(self) -> str:
        """The agent's first message in every tau2 simulation, which the user answers."""
        if self._greeting is None:
            from tau2.orchestrator.orchestrator import DEFAULT_FIRST_AGENT_MESSAGE

            self._greeting = str(DEFAULT_FIRST_AGENT_MESSAGE.content)
        return self._greeting

    def prompt(self, turn: UserTurn, opening: str) -> str:
        """The conversation so far, from tau2's greeting on, ending with the agent's turn."""
        lines = [f"Agent: {self.greeting()}"]
        if turn.number == 0:
            return "\n".join([*lines, "", "Write your first message to the agent."])
        lines.append(f"You: {opening}")
        for past in turn.conversation:
            lines += [f"Agent: {past['agentText']}", f"You: {past['reply']}"]
        lines += [f"Agent: {turn.text}", "", "Write your next message to the agent."]
        return "\n".join(lines)

    def reply(self, text: str) -> tuple[str, bool]:
        """The reply as the model wrote it; a tau2 stop word in it ends the conversation."""
        from tau2.user.base import OUT_OF_SCOPE, STOP, TRANSFER

        return text, any(word in text for word in (STOP, TRANSFER, OUT_OF_SCOPE))


@attrs.frozen
class Tau2Task(Task):
    """A tau2 task (``TASK-NNN``), naming tau2's own id and domain in its JSON form.

    Attributes:
        tau2_id: tau2's own id of the task.
        domain: the tau2 domain.
        user_play: tau2's user simulator, for a model user.
    """

    tau2_id: str = attrs.field(default="", kw_only=True)
    domain: str = attrs.field(default="", kw_only=True)
    user_play: Tau2Play | None = attrs.field(default=None, kw_only=True, eq=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The task's JSON form, with ``tau2: {"domain", "id"}`` last."""
        return {**super().to_dict(), "tau2": {"domain": self.domain, "id": self.tau2_id}}


def _history(task: Any) -> str:
    """A task's earlier conversation (tau2's message history), as the agent is told it."""
    state = task.initial_state
    messages = (state.message_history or []) if state is not None else []
    if not messages:
        return ""
    lines = ["", "", "Earlier in this conversation:"]
    for message in messages:
        role = {"assistant": "You", "user": "User", "tool": "Tool result"}.get(message.role, "")
        for call in getattr(message, "tool_calls", None) or []:
            lines.append(f"{role} called {call.name} with {json.dumps(call.arguments)}")
        if message.content:
            lines.append(f"{role}: {message.content}")
    return "\n".join(lines)


def silo_task(number: int, domain: str, task: Any, user_tools: list[str]) -> Tau2Task:
    """The silo task for the ``number``-th tau2 ``task`` of the split."""
    scenario = task.user_scenario
    user: dict[str, Any] = {"maxTurns": MAX_TURNS}
    if scenario.persona:
        user["persona"] = scenario.persona
    if user_tools:
        user["tools"] = list(user_tools)
    identifier = task_id(number)
    return Tau2Task(
        identifier,
        f"tau2 {domain} task {task.id}",
        INSTRUCTION + _history(task),
        identifier,
        user=user,
        tau2_id=str(task.id),
        domain=domain,
        user_play=Tau2Play(str(scenario), bool(user_tools)),
    )
