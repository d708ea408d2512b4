"""``python -m tests.gates [--update] [TEMPLATE ...]``: run or re-record the template gates.

Prints one line per task (``ok``, ``DRIFT``, ``MISSING``, ``FAIL``, ``STALE``, or what was
re-recorded) and a final line per template; exits 1 when any gate fails.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import anyio

from ._harness import run_gate
from ._report import GateReport
from ._spec import GATES


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tests.gates",
        description="Gate the shipped templates against tests/baselines/.",
    )
    parser.add_argument("--update", action="store_true", help="re-record the baselines")
    parser.add_argument(
        "templates",
        nargs="*",
        metavar="TEMPLATE",
        help=f"templates to gate: {', '.join(GATES)} (default: all)",
    )
    return parser


async def _run_all(templates: Sequence[str], update: bool) -> list[GateReport]:
    reports: dict[str, GateReport] = {}

    async def one(template: str) -> None:
        reports[template] = await run_gate(GATES[template], update=update)

    # Templates are independent: gate them side by side, print them in the order asked.
    async with anyio.create_task_group() as tg:
        for template in templates:
            tg.start_soon(one, template)
    return [reports[t] for t in templates]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the gates named in ``argv`` (default: all); return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    unknown = [t for t in args.templates if t not in GATES]
    if unknown:
        parser.error(f"no gate for {', '.join(unknown)}; choose from {', '.join(GATES)}")
    templates = list(dict.fromkeys(args.templates)) or list(GATES)
    reports = anyio.run(_run_all, templates, args.update)
    for report in reports:
        print(f"== {report.template} gate ({report.tasks} tasks, {report.artifacts} artifacts)")
        for line in report.lines:
            print(line)
        print(report.final_line)
    return 0 if all(r.ok for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
