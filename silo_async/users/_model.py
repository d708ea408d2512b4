"""``model_user``: a task's user played by a model, on the model agents' adapters.

Each turn runs the same loop a model agent runs (:mod:`silo_async.agents`), seen from the
user's side: the prompt is the user's persona, what they know and the conversation so far; the
tools are the user's own (``user.tools``), called through ``turn.call_tool``; the model's text
is the reply. The model ends the conversation by closing its message with :data:`END_MARK`.
Its tokens are counted apart (``userInputTokens``, ``userOutputTokens``), never against the
agent's ``token_limit``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from .._origin import remember
from .._task import Task
from .._tools import ToolResult, ToolSpec
from .._user import UserReply, UserTurn

if TYPE_CHECKING:
    from .._context import AgentContext

__all__ = ["END_MARK", "ModelUser", "UserPlay", "model_user", "user_prompt"]

#: How the model ends the conversation: its message ends with this line.
END_MARK = "[END]"

#: Said in the model's place when it answers with no text at all (an empty turn teaches the
#: agent nothing, and some agents fail on one).
SILENT_REPLY = "(The user says nothing.)"

SYSTEM_PROMPT = (
    "You play a user (a customer) talking to an AI support agent. Stay in character: write "
    "only what this person would write, in the first person, briefly. Share what you know only "
    "when the agent asks for it or needs it; never invent facts you were not given. When the "
    "agent asks you to do something on your side, do it with your tools if you have one for "
    "it, then say what happened. Never act as the agent. When your request is resolved, or "
    f"the agent cannot help you further, end your last message with {END_MARK} on its own line."
)


def user_prompt(task: Task, turn: UserTurn, opening: str = "") -> str:
    """The user's side of the conversation as the model reads it, ending with the agent's turn.

    ``opening`` is the first message the model wrote itself, for a task that gives none.
    """
    script = task.user_script
    assert script is not None
    lines = ["# Who you are", script.persona or "A customer.", ""]
    if script.knows:
        lines += ["# What you know (share it only when it helps)"]
        lines += [f"- {key}: {json.dumps(value)}" for key, value in script.knows.items()]
        lines.append("")
    if turn.number == 0:  # no opening given: the model writes the first message
        return "\n".join([*lines, "Write your first message to the agent."])
    lines.append("# The conversation so far")
    first = script.opening or opening
    if first:
        lines.append(f"You: {first}")
    for past in turn.conversation:
        lines += [f"Agent: {past['agentText']}", f"You: {past['reply']}"]
    lines += [f"Agent: {turn.text}", "", "Write your next message to the agent."]
    return "\n".join(lines)


@runtime_checkable
class UserPlay(Protocol):
    """How a model plays a task's user, when the task brings its own way (tau2's tasks do).

    A task with a ``user_play`` attribute holding one is played this way by
    :func:`model_user`: its system prompt instead of :data:`SYSTEM_PROMPT`, its rendering of
    the conversation, its way of telling that the user ended it.
    """

    @property
    def system(self) -> str:
        """The model's system prompt (who the user is and how to play them)."""
        ...

    def prompt(self, turn: UserTurn, opening: str) -> str:
        """What the model reads for ``turn`` (``opening``: the first message it wrote, if any)."""
        ...

    def reply(self, text: str) -> tuple[str, bool]:
        """The reply the agent reads for the model's ``text``, and whether it ends the talk."""
        ...


class _UserSide:
    """What a model agent's loop needs from its context, answered from the user's side."""

    __slots__ = ("_turn", "input_tokens", "output", "output_tokens", "policy", "task", "tools")

    def __init__(self, prompt: str, turn: UserTurn, policy: str | None = None) -> None:
        self.task = prompt
        self.policy = policy  # a task's own system prompt for its user (see UserPlay)
        self.tools: list[ToolSpec] = list(turn.tools)
        self._turn = turn
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.output: Any = None

    async def call_tool(self, name: str, input: dict[str, Any] | None = None) -> ToolResult:
        return await self._turn.call_tool(name, input)

    def set_output(self, value: Any) -> None:
        self.output = value

    def record_model_step(
        self, *, input_tokens: int | None = None, output_tokens: int | None = None, **_: Any
    ) -> None:
        if input_tokens is not None:
            self.input_tokens = (self.input_tokens or 0) + input_tokens
        if output_tokens is not None:
            self.output_tokens = (self.output_tokens or 0) + output_tokens


class ModelUser:
    """One rollout's model user (made by :func:`model_user`'s factory).

    Args:
        task: the task whose user it plays.
        agent: the model loop (a model agent of :mod:`silo_async.agents`).
    """

    def __init__(
        self, task: Task, agent: Callable[[AgentContext], Any], play: UserPlay | None = None
    ) -> None:
        self.task = task
        self._agent = agent
        self._play = play
        self._opening = ""

    async def reply(self, turn: UserTurn) -> UserReply:
        """Run the model on the user's side of the conversation; its text is the reply.

        Turn 0 (a task that gives no ``opening``) asks the model for its first message.
        """
        play = self._play
        if play is None:
            side = _UserSide(user_prompt(self.task, turn, self._opening), turn)
        else:
            side = _UserSide(play.prompt(turn, self._opening), turn, play.system)
        said = await self._agent(cast("AgentContext", side))
        if not isinstance(said, str):  # the loop ran out of turns: its last text, if any
            said = side.output if isinstance(side.output, str) else ""
        text = said.strip()
        if play is not None:
            text, ended = play.reply(text)
        else:
            ended = text.endswith(END_MARK)
            if ended:
                text = text[: -len(END_MARK)].strip()
        if turn.number == 0:
            self._opening = text
        return UserReply(
            text or SILENT_REPLY,
            ended,
            input_tokens=side.input_tokens,
            output_tokens=side.output_tokens,
        )


def model_user(
    spec: str,
    base_url: str | None = None,
    *,
    api_key: str | None = None,
    client: Any = None,
    system: str | None = None,
    max_turns: int = 10,
    max_output_tokens: int | None = None,
    temperature: float | None = None,
    max_retries: int = 2,
    request_timeout: float = 120.0,
) -> Callable[[Task], ModelUser]:
    """Users played by a model: pass the result as ``user=`` to run, run_many, evaluate, episode.

    The model reads the task's persona, what the user knows and the conversation so far; it
    may call the user's own tools (``user.tools``); its text is the reply, and ending it with
    :data:`END_MARK` ends the conversation. Its tokens are counted apart from the agent's. A
    task whose ``user_play`` is a :class:`UserPlay` (tau2's tasks) is played its own way
    instead: its system prompt, its rendering of the conversation, its end of the talk.

    Example::

        user = silo_async.users.model_user("openai/gpt-4.1-mini")
        result = await silo.run(env, "TASK-001", agent, user=user)

    Args:
        spec: ``PROVIDER/MODEL`` (``openai`` — any OpenAI-compatible server with ``base_url``
            —, ``openai-responses`` or ``anthropic``), as ``--user-model`` takes it.
        base_url: the model server (``--user-base-url``).
        api_key: the key (default: the SDK's variable; a ``base_url`` server needs none).
        client: an SDK client to use as-is.
        system: the user's system prompt (default: :data:`SYSTEM_PROMPT`).
        max_turns: model responses per user turn (tool calls included) before it must reply.
        max_output_tokens: the per-response output cap.
        temperature: sampling temperature, if any.
        max_retries: the SDK's own retries of a failed request.
        request_timeout: seconds per HTTP request.

    Returns:
        A function of the task returning a fresh :class:`ModelUser`.

    Raises:
        SiloError: ``model_invalid`` for a malformed spec, an unknown provider, a missing SDK
            or key.
        ValueError: an invalid keyword value.
    """
    from ..agents import from_spec  # the adapters import an SDK: only when a model user is made

    settings: dict[str, Any] = {
        "api_key": api_key,
        "client": client,
        "system": system,
        "max_turns": max_turns,
        "max_output_tokens": max_output_tokens,
        "temperature": temperature,
        "max_retries": max_retries,
        "request_timeout": request_timeout,
    }
    agent = from_spec(spec, **{**settings, "base_url": base_url, "system": system or SYSTEM_PROMPT})
    # A task that brings its own play (UserPlay) sends its own system prompt: no silo prompt.
    own = from_spec(spec, **{**settings, "base_url": base_url, "system": None})

    def make(task: Task) -> ModelUser:
        play = getattr(task, "user_play", None)
        if isinstance(play, UserPlay):
            return ModelUser(task, own, play)
        return ModelUser(task, agent)

    make.__qualname__ = f"model_user({spec})"
    # Shipped to other processes (Ray workers) as this call, not as its SDK client.
    return remember(make, model_user, spec, base_url, **settings)
