"""Play a crm world over MCP, end to end, with the official ``mcp`` client.

1. scaffolds environment ``sales`` from the ``crm`` template into a scratch project;
2. launches ``silo-async serve --env sales --task TASK-001 --reveal-grade`` as an MCP server over
   stdio, exactly as an IDE agent or an agent SDK would;
3. reads the task from the server (its instructions, the ``task`` prompt), lists the tools, and
   plays the task with the scripted crm solver of ``examples/agents/crm_solver.py``, every call a
   ``tools/call``;
4. submits the answer; the server grades the episode, writes the run under ``.silo/runs/`` and,
   with ``--reveal-grade``, answers the grade.

Run: ``.venv/bin/python examples/mcp_crm.py [TASK-ID]`` (needs the ``mcp`` extra).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

import silo_async as silo
from silo_async import Project

SOLVER = Path(__file__).parent / "agents" / "crm_solver.py"


class McpPlayer:
    """What the scripted solver needs from an agent context, over an MCP session."""

    def __init__(self, client: Client, task: str) -> None:
        self.client = client
        self.task = task
        self.calls = 0

    async def call_tool(self, name: str, input: dict[str, Any] | None = None) -> silo.ToolResult:
        """One ``tools/call``: the structured output when there is one, else the text."""
        self.calls += 1
        result = await self.client.call_tool(name, input or {})
        output = result.structured_content
        if output is None:
            output = "".join(b.text for b in result.content if isinstance(b, TextContent))
        return silo.ToolResult(output, is_error=result.is_error)


def load_solver() -> Any:
    spec = importlib.util.spec_from_file_location("crm_solver", SOLVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.agent


async def play(project: Path, task_id: str) -> None:
    handle = await (await Project.open(project)).environments.create("sales", template="crm")
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "silo_async", "serve", "--env", "sales", "--task", task_id, "--reveal-grade"],
        cwd=str(project),
        env=dict(os.environ),  # the child gets only HOME, PATH and a few others otherwise
    )
    async with Client(server) as client:
        prompt = await client.get_prompt("task")
        first = prompt.messages[0].content
        task = first.text if isinstance(first, TextContent) else ""
        assert task == client.session.instructions  # the same text, three ways
        tools = (await client.list_tools()).tools
        print(f"Task: {task}")
        print(f"Tools: {len(tools)} (last: {tools[-1].name})")
        player = McpPlayer(client, task)
        answer = await load_solver()(player)
        graded = await client.call_tool("submit", {"answer": answer})
        print(f"Answer: {answer}")
        print("".join(b.text for b in graded.content if isinstance(b, TextContent)))
    (run_dir,) = (handle.project.runs_dir).iterdir()
    result = json.loads((run_dir / "result.json").read_text(encoding="utf-8"))
    verdict = "PASS" if result["passed"] else "FAIL"
    print(f"{verdict} reward={result['reward']:.2f} calls={result['toolCalls']}")


def main() -> None:
    task_id = sys.argv[1] if len(sys.argv) > 1 else "TASK-001"
    with tempfile.TemporaryDirectory() as scratch:
        anyio.run(play, Path(scratch), task_id)


if __name__ == "__main__":
    main()
