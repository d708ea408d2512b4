"""Examples shown at the end of each command's ``--help``, kept together in one table.

One table rather than an epilog per decorator: the wording stays consistent, and a test parses
every example against the real options so none of them can drift out of date.
"""

from __future__ import annotations

import click

__all__ = ["EXAMPLES", "attach_examples"]

#: Command path (below ``silo-async``) -> example command lines.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "init": (
        "silo-async init demo",
        "silo-async init sales --template crm",
        "silo-async init --list-templates",
    ),
    "env list": ("silo-async env list --json",),
    "env validate": (
        "silo-async env validate --env demo",
        "silo-async env validate --env demo --json",
    ),
    "data list": ("silo-async data list --env demo",),
    "data show": ("silo-async data show customers --env demo",),
    "data add": (
        "silo-async data add customers --env demo --file customers.json",
        'silo-async data add customers --env demo --data \'{"CUS-001": {"status": "active"}}\'',
    ),
    "data update": ("silo-async data update customers --env demo --file customers.json",),
    "data remove": ("silo-async data remove customers --env demo",),
    "task list": (
        "silo-async task list --env demo",
        "silo-async task list --env crm --families --json",
    ),
    "task show": (
        "silo-async task show TASK-001 --env demo",
        "silo-async task show --env crm --task hand-over-account#17 --json",
    ),
    "task sample": (
        "silo-async task sample --env crm --family hand-over-account --count 5",
        "silo-async task sample --env crm --family hand-over-account --split train --start 100 "
        "--json",
    ),
    "task add": (
        'silo-async task add TASK-001 --env demo --title "Block a customer" '
        '--instruction "Customer CUS-001 failed a fraud review. Block them." '
        "--verifier VER-001 --difficulty easy",
    ),
    "task update": ("silo-async task update TASK-001 --env demo --difficulty medium",),
    "task remove": ("silo-async task remove TASK-001 --env demo",),
    "tool list": ("silo-async tool list --env demo --json",),
    "tool add": (
        'silo-async tool add block_customer --env demo --description "Block a customer by id."',
    ),
    "verifier list": ("silo-async verifier list --env demo",),
    "verifier add": (
        'silo-async verifier add VER-001 --env demo --task TASK-001 --name "CUS-001 is blocked"',
    ),
    "run": (
        "silo-async run --env demo --task TASK-001",
        "silo-async run --env demo --task TASK-001 --agent agents/mine.py --runs 5",
        "silo-async run --env demo --task TASK-001 --agent agents/mine.py:solve --json",
    ),
    "eval": (
        "silo-async eval --env demo --agent agents/mine.py --runs 10",
        "silo-async eval --env demo --agent new=agents/mine.py --agent old=agents/base.py "
        "--task TASK-001 --task TASK-002 --runs 5",
        "silo-async eval --env crm --family hand-over-account --count 100 --agent agents/mine.py",
    ),
    "audit": (
        "silo-async audit --env demo",
        "silo-async audit --env demo --solver agents/solver.py --fail-on loose",
        "silo-async audit --env demo --task TASK-001 --probes noop,explorer --json",
        "silo-async audit --env demo --family hand-over-account --count 200",
    ),
    "import tau2": (
        "silo-async import tau2 --domain airline",
        "silo-async import tau2 ../tau2-bench --domain telecom --name telecom-full --split full",
        "silo-async import tau2 --domain retail --judge-model openai/gpt-4.1-mini --json",
    ),
    "evals list": ("silo-async evals list", "silo-async evals list --json"),
    "report": (
        "silo-async report",
        "silo-async report eval_20261130T012730_a1b2c3",
        "silo-async report out/my-eval --open",
    ),
    "runs list": (
        "silo-async runs list",
        "silo-async runs list --env demo --json",
    ),
    "runs show": (
        "silo-async runs show run_20261130T014342995_000001_ee2add7023",
        "silo-async runs show ee2add7023",
    ),
    "runs export": (
        "silo-async runs export --eval eval_20261130T014342_1a2b3c --min-reward 1 "
        "--out train.jsonl",
        "silo-async runs export ee2add7023 --passed-only",
    ),
    "replay": ("silo-async replay ee2add7023",),
    "serve": (
        "silo-async serve --env demo --task TASK-001",
        "silo-async serve --env demo --task TASK-001 --transport http --port 0 --json",
    ),
    "scripted-model": (
        "silo-async scripted-model model_script.py",
        "silo-async scripted-model examples/agents/crm_model.py:play --port 8766",
    ),
}


#: Example lines longer than this continue on the next line (shell ``\\`` continuation).
WIDTH = 88


def _wrap(line: str) -> list[str]:
    """Break a long example before its options, never inside a quoted value."""
    parts = line.split(" --")
    out = [parts[0]]
    for part in parts[1:]:
        if len(out[-1]) + len(part) + 3 > WIDTH:
            out[-1] += " \\"
            out.append(f"    --{part}")
        else:
            out[-1] += f" --{part}"
    return out


def _epilog(lines: tuple[str, ...]) -> str:
    # "\b" keeps click from re-wrapping the block (and from joining the continued lines).
    wrapped = [row for line in lines for row in _wrap(line)]
    return "\b\nExamples:\n" + "\n".join(f"  {row}" for row in wrapped)


def attach_examples(root: click.Group) -> None:
    """Set the ``--help`` epilog of every command listed in :data:`EXAMPLES`.

    Raises:
        KeyError: an entry names no command (the tests parse every example).
    """
    for path, lines in EXAMPLES.items():
        command: click.Command = root
        for part in path.split():
            if not isinstance(command, click.Group):
                raise KeyError(path)
            command = command.commands[part]
        command.epilog = _epilog(lines)
