"""``make demo``: a CRM world, every task, a solver and a do-nothing agent, in a few seconds.

What it does, through the public SDK only:

1. scaffolds environment ``demo`` from the ``crm`` template into a scratch project (a temporary
   directory, removed at the end; ``--keep DIR`` keeps it so you can look at the runs);
2. runs a scripted solver and an agent that does nothing on every task, all concurrently in
   one event loop (``handle.run_many``);
3. meanwhile runs a model agent (``agents.openai_chat``, the real OpenAI SDK) on TASK-001 against
   ``ScriptedModelServer`` playing a model (``examples/agents/crm_model.py``) that makes one
   invalid call and corrects it;
4. prints a summary table, the model run with its token figures, and how to plug in your own
   agent.

Run it: ``make demo`` or ``.venv/bin/python examples/demo.py [--keep DIR] [--plain]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

import silo_async as silo
from silo_async import agents
from silo_async.project import EnvironmentHandle, Project
from silo_async.testing import ScriptedModelServer

AGENTS = Path(__file__).resolve().parent / "agents"
TEMPLATE = "crm"
ENV_NAME = "demo"


@dataclass(frozen=True)
class Row:
    """One task's line in the summary: the task and both agents' results."""

    task: silo.Task
    solver: silo.RunResult
    noop: silo.RunResult


@dataclass(frozen=True)
class Demo:
    """Everything the demo prints."""

    project_dir: Path
    tool_count: int
    rows: list[Row]
    seconds: float
    model: silo.RunResult | None = None
    model_skipped: str | None = None


def load_module(name: str) -> Any:
    """``examples/agents/<name>.py``, imported by path."""
    spec = importlib.util.spec_from_file_location(f"_demo_agent_{name}", AGENTS / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"Cannot import {AGENTS / name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_agent(name: str) -> Any:
    """The ``agent`` function of ``examples/agents/<name>.py``."""
    return load_module(name).agent


async def run_model(handle: EnvironmentHandle) -> tuple[silo.RunResult | None, str | None]:
    """The OpenAI adapter on TASK-001, against a scripted model; (result, why it was skipped)."""
    model = load_module("crm_model")
    async with ScriptedModelServer(model.play) as server:
        try:
            agent = agents.openai_chat("scripted-crm-model", base_url=server.base_url)
        except silo.SiloError as exc:  # the openai extra is not installed
            return None, exc.message
        return await handle.run(model.TASK_ID, agent, agent_name="openai_chat"), None


async def run_demo(project_dir: Path) -> Demo:
    """Scaffold ``demo`` from ``crm`` in ``project_dir`` and run both agents on every task."""
    started = time.perf_counter()
    project = await Project.open(project_dir)
    handle = await project.environments.create(ENV_NAME, template=TEMPLATE)
    env = await handle.load()
    task_ids = [task.id for task in env.tasks]
    results: dict[str, list[silo.RunResult]] = {}
    modelled: list[tuple[silo.RunResult | None, str | None]] = []

    async def run_agent(label: str, agent_file: str) -> None:
        # Each task gets a fresh world; results come back in task order.
        results[label] = await handle.run_many(task_ids, load_agent(agent_file), agent_name=label)

    async def run_model_agent() -> None:
        modelled.append(await run_model(handle))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_agent, "solver", f"{TEMPLATE}_solver")
        tg.start_soon(run_agent, "noop", "noop")
        tg.start_soon(run_model_agent)
    rows = [
        Row(task, solver, noop)
        for task, solver, noop in zip(env.tasks, results["solver"], results["noop"], strict=True)
    ]
    tool_count = len(env.bind_tools(env.create_state()))
    seconds = time.perf_counter() - started
    ((model, skipped),) = modelled
    return Demo(project_dir, tool_count, rows, seconds, model, skipped)


# --- rendering ---------------------------------------------------------------------------------

HEADERS = ("Task", "Difficulty", "Title", "Solver", "Do-nothing", "Tool calls")


def verdict(result: silo.RunResult) -> str:
    """``PASS 1.00`` / ``FAIL 0.43``: pass/fail and reward."""
    return f"{'PASS' if result.passed else 'FAIL'} {result.reward:.2f}"


def cells(row: Row) -> tuple[str, ...]:
    """The table cells of one row, as plain text."""
    return (
        row.task.id,
        row.task.difficulty,
        row.task.title,
        verdict(row.solver),
        verdict(row.noop),
        str(row.solver.tool_calls),
    )


def totals(demo: Demo) -> str:
    """One line: how each agent did overall, and how long it took."""
    n = len(demo.rows)
    solved = sum(r.solver.passed for r in demo.rows)
    idle = sum(r.noop.passed for r in demo.rows)
    mean = sum(r.noop.reward for r in demo.rows) / n
    return (
        f"solver passed {solved}/{n} · do-nothing passed {idle}/{n} (mean partial reward "
        f"{mean:.2f}) · {2 * n} rollouts in {demo.seconds:.1f}s"
    )


def model_steps(result: silo.RunResult) -> list[str]:
    """One line per model response: its tokens, then what its tool calls got back."""
    lines: list[str] = []
    for event in result.trace:
        if event["type"] == "model_step":
            usage = event["usage"]
            text = event["message"]["content"]
            said = f"  says {text!r}" if text and not event["message"]["toolCalls"] else ""
            tokens = f"{usage['inputTokens']:>6,} in {usage['outputTokens']:>4,} out"
            lines.append(f"  step {len(lines) + 1}  {tokens}{said}")
        elif event["type"] == "tool_result":
            output = event["output"]
            got = f"{output['code']}: {output['message']}" if event.get("isError") else "ok"
            lines[-1] += f"  {event['tool']} -> {got}"
    return lines


def model_section(demo: Demo) -> str:
    """The model run: verdict, effort, tokens, and its responses one by one."""
    title = "Model in the loop: agents.openai_chat (the OpenAI SDK) on TASK-001"
    if demo.model is None:
        return f"\n{title}: skipped ({demo.model_skipped})"
    r = demo.model
    summary = (
        f"  {verdict(r)} · {r.model_steps} model steps · {r.tool_calls} tool calls "
        f"({r.tool_errors} rejected, then corrected) · tokens {r.input_tokens:,} in · "
        f"{r.output_tokens:,} out"
    )
    served = "  served by ScriptedModelServer playing examples/agents/crm_model.py"
    return "\n".join(["", title, served, summary, *model_steps(r)])


def plain_table(demo: Demo) -> str:
    """The summary table as aligned plain text."""
    rows = [HEADERS, *(cells(r) for r in demo.rows)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def footer(demo: Demo, kept: bool) -> str:
    """What the user just saw, and what to type next."""
    where = (
        f"Runs are kept in {demo.project_dir}/.silo/runs/ (one directory per rollout:\n"
        "  trace.jsonl, result.json, state-diff.json, run.json)."
        if kept
        else "The scratch project was removed; rerun with --keep DIR to keep its runs."
    )
    world = f"A CRM world ({demo.tool_count} tools, {len(demo.rows)} tasks)"
    return f"""
What you just saw
  {world} was scaffolded from the '{TEMPLATE}' template.
  Every task ran twice, concurrently in one event loop, each rollout on a fresh world:
  a scripted solver that works only through the tools, and an agent that does nothing.
  Verifiers graded the final world, not the transcript: the solver passes every task; doing
  nothing passes none (its partial reward comes from checks that the untouched world meets).
  Meanwhile a model agent (agents.openai_chat) worked TASK-001 over HTTP against a scripted
  model: each response is a model_step in the trace with its tokens, and the call it got wrong
  came back as an invalid_input value it could read and correct.
  {where}

Try it yourself (first `source .venv/bin/activate`, or call .venv/bin/silo-async)
  silo-async init {ENV_NAME} --template {TEMPLATE}
  silo-async run --env {ENV_NAME} --task TASK-004 --agent ./my_agent.py
  where my_agent.py defines `async def agent(ctx)`: read ctx.task, call ctx.call_tool(name, args),
  return your answer (see docs/getting-started.md, "Bring your own agent"). A model instead
  (docs/models.md): silo-async run --env {ENV_NAME} --task TASK-004 --model openai/gpt-4.1-mini
"""


def print_rich(demo: Demo) -> None:
    """The summary as a rich table (colours on a terminal)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:
        # Piped or captured: rich would assume 80 columns and wrap every title.
        console = Console(width=120)
    table = Table(
        title=f"silo_async demo: the '{TEMPLATE}' template, solver vs do-nothing",
        box=box.SIMPLE_HEAVY,
    )
    for header in HEADERS:
        table.add_column(header, justify="right" if header == "Tool calls" else "left")
    for row in demo.rows:
        values = list(cells(row))
        values[3:5] = [
            f"[{'green' if r.passed else 'red'}]{verdict(r)}[/]" for r in (row.solver, row.noop)
        ]
        table.add_row(*values)
    console.print(table)


def render(demo: Demo, *, kept: bool, plain: bool) -> None:
    """Print the table (rich when available and wanted), the totals and the footer."""
    try:
        if plain:
            raise ImportError("plain output requested")
        print_rich(demo)
    except ImportError:
        print(plain_table(demo))
    print(totals(demo))
    print(model_section(demo))
    print(footer(demo, kept), end="")


# --- entry point -------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """``--keep DIR`` and ``--plain``."""
    parser = argparse.ArgumentParser(prog="examples/demo.py", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--keep", metavar="DIR", type=Path, help="create the project in DIR and keep it"
    )
    parser.add_argument("--plain", action="store_true", help="plain text, even if rich is there")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo; return the exit status (1 if the solver or the model missed its task)."""
    args = parse_args(argv)
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        print(f"Project: {args.keep.resolve()}")
        demo = anyio.run(run_demo, args.keep.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="silo-demo-") as tmp:
            print(f"Scratch project: {tmp} (removed at exit; --keep DIR keeps it)")
            demo = anyio.run(run_demo, Path(tmp))
    render(demo, kept=args.keep is not None, plain=args.plain)
    model_ok = demo.model is None or demo.model.passed
    return 0 if model_ok and all(r.solver.passed for r in demo.rows) else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except silo.SiloError as exc:
        print(f"error: {exc.code}: {exc.message}", file=sys.stderr)
        sys.exit(1)
