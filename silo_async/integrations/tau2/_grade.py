"""Grading as tau2's evaluator grades: one required check per component of the reward basis.

tau2's reward is the product of the components its task's ``reward_basis`` names; each is 1.0
or 0.0. So each named component is one required check, labelled ``db``, ``env_assertions``,
``communicate``, ``action`` or ``nl_assertions``, and ``passed`` (every required check passed)
is true exactly when tau2 gives the trajectory 1.0 — the flaws of tau2's criteria included (a
task an agent passes by doing nothing passes here too; the audit is what flags it).

* ``db``: the final databases (the agent's and the user's) against the gold world's — the
  task's initial state plus its gold actions, built once per task. tau2 compares the SHA-256
  of each database's JSON; the records either world touched are compared here, which gives the
  same verdict (see :func:`~._world.db_differences`) and names what differs.
* ``env_assertions``: tau2's own ``run_env_assertion`` on the final world.
* ``communicate`` and ``action``: tau2's own evaluators, on the trajectory rebuilt as tau2
  messages: what the agent told the user (every ``message_user`` text, then its final answer
  — its last message to the user) and every tool call made, the user's included.
* ``nl_assertions``: judged by a model only when one is given; otherwise optional and labelled
  ``not graded``.

tau2 gives 0 to a simulation that did not end with the agent or the user stopping: a rollout
that a limit or a crash ended (any termination reason but ``completed``) fails every component.
A gold action that raises is an environment fault, whatever the reward basis: the verifier
raises, the rollout's reward is not valid evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._verify import Check, VerifierContext, check, optional
from ._domain import Domain
from ._world import World, db_differences

__all__ = ["COMPONENTS", "Verdicts", "grade", "needs_judge", "trajectory"]

#: tau2's reward types and the labels of their checks.
COMPONENTS = {
    "DB": "db",
    "ENV_ASSERTION": "env_assertions",
    "COMMUNICATE": "communicate",
    "ACTION": "action",
    "NL_ASSERTION": "nl_assertions",
}

#: A judge model's verdicts on a task's natural-language assertions: ``(assertion, met,
#: reasoning)`` each, as tau2's own evaluator read them.
Verdicts = Sequence[tuple[str, bool, str]]


def trajectory(domain: Domain, task: Any, world: World, ctx: VerifierContext) -> list[Any]:
    """The rollout as the tau2 messages its evaluator reads (text turns and tool calls).

    The task's own message history first (else tau2's greeting); then every tool call (the
    agent's as an assistant message, the user's as a user message) and every ``message_user``
    text with the user's reply; the agent's final answer, when not empty, closes it as the
    agent's last message to the user. The order of calls against texts is not kept, and the
    user's first message is not in it (tau2's evaluators of tool calls and of what the agent
    said never look at either; its judge of natural-language assertions reads the texts).
    """
    from tau2.data_model.message import AssistantMessage, UserMessage

    state = task.initial_state
    messages: list[Any] = list(state.message_history or []) if state is not None else []
    if not messages:  # tau2's orchestrator opens every other conversation with its greeting
        from tau2.orchestrator.orchestrator import DEFAULT_FIRST_AGENT_MESSAGE

        messages.append(DEFAULT_FIRST_AGENT_MESSAGE.model_copy())
    for number, (requestor, name, arguments) in enumerate(world.calls, start=1):
        made = domain.tool_call(
            id=f"call_{number}",
            name=name,
            arguments=arguments if isinstance(arguments, dict) else {},
            requestor=requestor,
        )
        if requestor == "assistant":
            messages.append(AssistantMessage(role="assistant", tool_calls=[made]))
        else:
            messages.append(UserMessage(role="user", tool_calls=[made]))
    for turn in ctx.conversation:
        messages.append(AssistantMessage(role="assistant", content=turn["agentText"]))
        if turn.get("reply"):
            messages.append(UserMessage(role="user", content=turn["reply"]))
    if ctx.agent_output:
        messages.append(AssistantMessage(role="assistant", content=ctx.agent_output))
    return messages


def needs_judge(task: Any, ctx: VerifierContext) -> bool:
    """Whether grading this rollout asks a judge about natural-language assertions."""
    criteria = task.evaluation_criteria
    if criteria is None or not criteria.nl_assertions or ctx.termination_reason != "completed":
        return False
    return any(r.value == "NL_ASSERTION" for r in criteria.reward_basis)


def grade(
    domain: Domain,
    task: Any,
    final: World,
    ctx: VerifierContext,
    verdicts: Verdicts | None = None,
) -> list[Check]:
    """tau2's verdict on the rollout, one required check per reward-basis component.

    ``verdicts`` are the judge's, when there is one (see :func:`needs_judge`).

    Raises:
        GoldActionError: the task's gold actions raise (an environment fault).
    """
    criteria = task.evaluation_criteria
    basis = [] if criteria is None else list(dict.fromkeys(r.value for r in criteria.reward_basis))
    if not basis:
        note = "no evaluation criteria" if criteria is None else "an empty reward basis"
        return [check("tau2", True, f"tau2 gives 1.0 to a task with {note}.")]
    if criteria.actions:
        # tau2 replays the gold actions whatever the basis and grades on when one raises: a
        # task graded on its actions or assertions alone would then pass an agent that repeats
        # the broken step. Building the gold world (once per task) raises here instead, for
        # every play of the task, cut short or not.
        domain.gold(task)
    if ctx.termination_reason != "completed":
        detail = (
            f"The rollout ended early ({ctx.termination_reason}): tau2 gives 0 to a simulation "
            "that did not end with the agent or the user stopping."
        )
        return [check(COMPONENTS[part], False, detail) for part in basis]
    messages = trajectory(domain, task, final, ctx)
    graders = {
        "DB": lambda: _db(domain, task, final),
        "ENV_ASSERTION": lambda: _env_assertions(task, final),
        "COMMUNICATE": lambda: _communicate(task, messages),
        "ACTION": lambda: _action(task, messages),
        "NL_ASSERTION": lambda: _nl_assertions(task, verdicts),
    }
    checks = [graders[part]() for part in basis]
    if not any(c.required for c in checks):
        raise ValueError(
            f"tau2 task {task.id} is graded by assertions in natural language alone: give a "
            "judge model (--judge-model PROVIDER/MODEL) to grade it."
        )
    return checks


def _env_untouched(task: Any) -> bool:
    """tau2's environment evaluator gives 1.0 outright without actions and assertions."""
    criteria = task.evaluation_criteria
    return criteria.actions is None and criteria.env_assertions is None


def _db(domain: Domain, task: Any, final: World) -> Check:
    if _env_untouched(task):
        return check("db", True, "No gold actions and no assertions: tau2 gives 1.0.")
    gold = domain.gold(task)
    differ = db_differences(final.env.tools.db, gold.env.tools.db)
    if final.env.user_tools is not None and gold.env.user_tools is not None:
        differ += [
            f"user.{name}"
            for name in db_differences(final.env.user_tools.db, gold.env.user_tools.db)
        ]
    if not differ:
        return check("db", True, "The final database is the gold one (same tau2 hash).")
    return check(
        "db",
        False,
        f"The final database differs from the gold one in {', '.join(differ[:5])} (tau2's "
        "hashes differ).",
    )


def _env_assertions(task: Any, final: World) -> Check:
    if _env_untouched(task):
        return check("env_assertions", True, "No gold actions and no assertions: tau2 gives 1.0.")
    failed = [
        assertion.message or f"{assertion.func_name}({assertion.arguments})"
        for assertion in task.evaluation_criteria.env_assertions or []
        if not final.env.run_env_assertion(assertion, raise_assertion_error=False)
    ]
    if not failed:
        return check("env_assertions", True, "Every assertion on the final world holds.")
    return check("env_assertions", False, f"Assertions that fail: {'; '.join(failed)}.")


def _communicate(task: Any, messages: list[Any]) -> Check:
    from tau2.evaluator.evaluator_communicate import CommunicateEvaluator

    wanted = task.evaluation_criteria.communicate_info
    if not wanted:
        return check("communicate", True, "Nothing to communicate: tau2 gives 1.0.")
    checks = CommunicateEvaluator.evaluate_communicate_info(messages, wanted)
    missing = [c.info for c in checks if not c.met]
    if not missing:
        return check("communicate", True, f"The agent told the user: {', '.join(wanted)}.")
    return check("communicate", False, f"The agent never told the user: {', '.join(missing)}.")


def _action(task: Any, messages: list[Any]) -> Check:
    from tau2.evaluator.evaluator_action import ActionEvaluator

    gold = task.evaluation_criteria.actions
    if not gold:
        return check("action", True, "No gold actions: tau2 gives 1.0.")
    checks = ActionEvaluator.evaluate_actions(messages, gold)
    missing = [c.action.get_func_format() for c in checks if not c.action_match]
    if not missing:
        return check("action", True, "Every gold action was made.")
    return check("action", False, f"Gold actions never made: {'; '.join(missing)}.")


def _nl_assertions(task: Any, verdicts: Verdicts | None) -> Check:
    assertions = task.evaluation_criteria.nl_assertions
    if not assertions:
        return check("nl_assertions", True, "No assertions in natural language: tau2 gives 1.0.")
    if verdicts is None:
        return optional(
            "nl_assertions",
            False,
            "not graded: these assertions need a judge model (import tau2 --judge-model "
            "PROVIDER/MODEL): " + "; ".join(assertions),
        )
    failed = [f"{assertion} ({why})" for assertion, met, why in verdicts if not met]
    if not failed:  # tau2 gives 1.0 when every verdict it read is met
        return check("nl_assertions", True, f"The judge finds met: {'; '.join(assertions)}.")
    return check("nl_assertions", False, f"The judge finds not met: {'; '.join(failed)}.")
