"""An answer-producing environment in one file: report the total profit.

Run it: ``.venv/bin/python examples/profit.py`` — a scripted agent sums the lines and passes.
"""

from __future__ import annotations

import re
from typing import Any

import anyio

import silo_async as silo

LINES = [{"line": "Retail", "amount": 41250}, {"line": "Wholesale", "amount": 18730}]


def create_state() -> dict[str, Any]:
    """The world is just the profit lines (facts only; the total is derived)."""
    return {"profitLines": silo.clone_json(LINES)}


def total_profit(state: dict[str, Any]) -> int:
    """The one helper that defines 'total profit', shared by nothing but the verifier here."""
    return sum(int(line["amount"]) for line in state["profitLines"])


@silo.tool(name="get_profits", description="List the profit of each business line.")
def get_profits(state: dict[str, Any], args: dict[str, Any]) -> Any:
    return state["profitLines"]


def last_number(text: str) -> float | None:
    """The last number in ``text``, ignoring ``$`` and thousands separators."""
    found = re.findall(r"-?\d+(?:\.\d+)?", text.replace(",", "").replace("$", ""))
    return float(found[-1]) if found else None


@silo.verifier(id="VER-001", task_id="TASK-001", name="The reported total is right")
def total_reported(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    expected = total_profit(initial)
    answer = last_number(ctx.agent_output)
    return [
        silo.check(
            "The reported total is correct",
            answer == expected,
            f"expected {expected}, got {answer}",
        ),
        silo.optional("An answer was given", bool(ctx.agent_output.strip())),
        silo.optional("Answering left the world unchanged", final == initial),
    ]


ENV = silo.Environment(
    name="profit",
    create_state=create_state,
    tools=[get_profits],
    verifiers=[total_reported],
    tasks=[
        silo.Task(
            "TASK-001",
            "Report the total profit",
            "What is our total profit across all business lines?",
            "VER-001",
            "easy",
        )
    ],
)


async def agent(ctx: silo.AgentContext) -> str:
    """Scripted agent: read the lines, add them up, answer."""
    result = await ctx.call_tool("get_profits")
    total = sum(line["amount"] for line in result.output)
    return f"The total profit is {total}."


async def main() -> None:
    result = await silo.run(ENV, "TASK-001", agent)
    verdict = "PASS" if result.passed else "FAIL"
    print(f"{verdict} reward={result.reward:.2f} answer={result.output_text!r}")


if __name__ == "__main__":
    anyio.run(main)
