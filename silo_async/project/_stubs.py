"""The text of scaffolded tool and verifier modules.

Generated stubs fail on purpose: a tool raises ``invalid_state`` and a verifier returns one
required, failing check, so nothing unimplemented can ever pass. ``validate`` recognises both
markers below and reports the stubs until they are replaced.
"""

from __future__ import annotations

import json

__all__ = ["TODO_MARKER", "VERIFIER_TODO_LABEL", "tool_stub", "verifier_stub"]

TODO_MARKER = "is not implemented yet"
VERIFIER_TODO_LABEL = "TODO: define success condition"


def _literal(text: str) -> str:
    # Quote as ruff format would: double quotes unless that needs more escapes. Both forms are
    # valid Python literals whatever the user typed.
    if '"' in text and "'" not in text:
        return repr(text)
    return json.dumps(text, ensure_ascii=False)


def tool_stub(name: str, identifier: str, description: str | None, state_type: str) -> str:
    """The module ``tools/<stem>.py`` for a new tool."""
    desc = (
        description if description and description.strip() else f"TODO: describe what {name} does."
    )
    message = f'Tool "{name}" {TODO_MARKER}.'
    return f'''"""Tool {name}: what the agent can do, with arguments matching input_schema."""

from __future__ import annotations

from typing import Any

import silo_async as silo

from ..state import {state_type}


@silo.tool(
    name={_literal(name)},
    description={_literal(desc)},
    input_schema={{
        "type": "object",
        # TODO: declare each parameter, e.g. "customerId": {{"type": "string"}}, and list the
        # mandatory ones in "required".
        "properties": {{}},
        "required": [],
        "additionalProperties": False,
    }},
)
def {identifier}(state: {state_type}, input: dict[str, Any]) -> Any:
    """Read or change the world and return what the agent should see."""
    # TODO: implement. Reject bad requests with a ToolError the agent can act on, e.g.
    #   raise silo.tool_error("not_found", f'Customer "{{input["customerId"]}}" was not found.')
    # (conventional codes: invalid_input, not_found, invalid_state, not_allowed, conflict).
    raise silo.tool_error("invalid_state", {_literal(message)})
'''


def verifier_stub(
    verifier_id: str, task_id: str, identifier: str, name: str | None, state_type: str
) -> str:
    """The module ``verifiers/<stem>.py`` for a new verifier."""
    title = name if name and name.strip() else f"TODO: name what {verifier_id} proves."
    signature = (
        f"def {identifier}(final: {state_type}, initial: {state_type}, "
        "ctx: silo.VerifierContext) -> list[silo.Check]:"
    )
    if len(signature) > 100:
        signature = (
            f"def {identifier}(\n    final: {state_type}, initial: {state_type}, "
            "ctx: silo.VerifierContext\n) -> list[silo.Check]:"
        )
    detail = f'Verifier "{verifier_id}" {TODO_MARKER}.'
    return f'''"""Verifier {verifier_id}: grades task {task_id} by inspecting the world.

Two task shapes:
* state-changing tasks: check the *final* world (the record was created, the status moved);
* answer-producing tasks: derive the expected answer from the *initial* world and compare it
  with ``ctx.agent_output``.
Derive expected values from the data instead of hardcoding them, and do not grade which tools
were called unless the process is the task. At least one check must be required.
"""

from __future__ import annotations

import silo_async as silo

from ..state import {state_type}


@silo.verifier(id={_literal(verifier_id)}, task_id={_literal(task_id)}, name={_literal(title)})
{signature}
    """Return the checks; the task passes when every required one passes."""
    # TODO: replace the failing check below with the real conditions, e.g.
    #   silo.check("order shipped", final["orders"]["ORD-1"]["status"] == "shipped"),
    #   silo.optional("answer names the total", str(total) in ctx.agent_output),
    return [
        silo.check(
            {_literal(VERIFIER_TODO_LABEL)},
            False,
            {_literal(detail)},
        )
    ]
'''
