"""One scripted play for every harness: a crm project, its calls, and the run they leave.

The same task (crm TASK-001) and the same calls — a search, a call silo must reject, and the
conversion the solver makes — are played through ``run()`` and each harness; each play writes
one run directory under the project's ``.silo/runs/``. :data:`CHAT` is the same for a
conversational task (DESIGN §13): the crm project gains ``CHAT-001``, whose user (Noor) holds
the deal's amount and date and looks herself up with a tool of her own (dual control).
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

ENV_NAME = "crm"
TASK_ID = "TASK-001"
ANSWER = "Converted LEAD-001 into a customer with a $48,000 opportunity."
#: (tool, input) in order: the middle call is refused by silo's validation (a typo'd name).
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search_leads", {"query": "Tomasz Wierzbicki"}),
    ("search_leads", {"qury": "Tomasz"}),
    (
        "convert_lead",
        {
            "leadId": "LEAD-001",
            "amount": 48000.0,
            "expectedCloseDate": "2026-12-15",
            "opportunityName": "Harrowgate Soil Labs soil LIMS",
            "actorId": "USR-003",
        },
    ),
]


@attrs.frozen
class Script:
    """What every harness plays: the task, the tool calls in order, and the final answer."""

    task: str
    calls: list[tuple[str, dict[str, Any]]]
    answer: str


SCRIPT = Script(TASK_ID, CALLS, ANSWER)

CHAT_TASK_ID = "CHAT-001"
#: CHAT-001's user: ``get_user`` is hers (dual control), so the agent's call to it is refused.
CHAT_USER: dict[str, Any] = {
    "opening": "Hi, Noor here (USR-003). Tomasz Wierzbicki of Harrowgate Soil Labs is ready.",
    "knows": {"amount": 48000, "closeDate": "2026-12-15"},
    "script": [
        {
            "when": ["amount"],
            "say": "$48,000, closing 2026-12-15.",
            "do": [{"tool": "get_user", "input": {"userId": "USR-003"}}],
            "once": True,
        },
        {"when": ["converted"], "say": "Perfect, thanks!", "end": True},
    ],
    "otherwise": {"say": "Sorry, what do you need?"},
    "tools": ["get_user"],
}
CHAT = Script(
    CHAT_TASK_ID,
    [
        ("message_user", {"text": "What amount and close date should the deal have?"}),
        ("search_leads", {"query": "Tomasz Wierzbicki"}),
        ("get_user", {"userId": "USR-003"}),  # the user's tool: tool_not_found for the agent
        CALLS[2],
        ("message_user", {"text": "Converted: LEAD-001 is now a customer."}),
    ],
    ANSWER,
)


def make_chat_project(root: Path) -> Path:
    """A crm project (:func:`make_crm_project`) with CHAT-001 added through ``task add``."""
    make_crm_project(root)
    command = [sys.executable, "-m", "silo_async", "task", "add", CHAT_TASK_ID]
    command += ["--env", ENV_NAME, "--title", "Convert the lead Noor asks about"]
    command += [
        "--verifier",
        "VER-001",
        "--instruction",
        "Help Noor turn her lead into a customer.",
    ]
    command += ["--user", json.dumps(CHAT_USER)]
    done = subprocess.run(
        command,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return root


def make_crm_project(root: Path) -> Path:
    """A project at ``root`` with the crm template as environment ``crm``."""
    root.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "silo_async", "init", ENV_NAME, "--template", "crm"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return root


def run_ids(project: Path) -> set[str]:
    """The run directories the project holds."""
    runs = project / ".silo" / "runs"
    return {p.name for p in runs.iterdir()} if runs.is_dir() else set()


def new_run(project: Path, before: set[str]) -> dict[str, Any]:
    """The one run written since ``before``: its result, state diff bytes and trace."""
    (run_id,) = run_ids(project) - before
    return read_run(project, run_id)


def read_run(project: Path, run_id: str) -> dict[str, Any]:
    """Run ``run_id`` of the project: its result, state diff bytes and calls."""
    run_dir = project / ".silo" / "runs" / run_id
    events = [json.loads(line) for line in (run_dir / "trace.jsonl").read_text().splitlines()]
    calls = [e for e in events if e["type"] == "tool_call"]
    return {
        "runId": run_id,
        "result": json.loads((run_dir / "result.json").read_text(encoding="utf-8")),
        "diff": (run_dir / "state-diff.json").read_bytes(),
        "calls": [(e["tool"], e["input"]) for e in calls if "actor" not in e],
        # A task's user: what it did with its own tools, and each turn (times left out).
        "userCalls": [(e["actor"], e["tool"], e["input"]) for e in calls if "actor" in e],
        "turns": [
            {k: e[k] for k in ("agentText", "reply", "ended", "actions")}
            for e in events
            if e["type"] == "user_turn"
        ],
    }


@contextlib.contextmanager
def serving(project: Path, protocol: str, *args: str) -> Iterator[dict[str, Any]]:
    """``silo-async serve --env crm --protocol P --port 0 --json`` in the project; its startup info.

    Stopped with SIGINT on the way out (open episodes end ``cancelled``, written).
    """
    command = [sys.executable, "-m", "silo_async", "serve", "--env", ENV_NAME]
    command += ["--protocol", protocol, "--port", "0", "--json", *args]
    with subprocess.Popen(
        command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as child:
        try:
            assert child.stdout is not None and child.stderr is not None
            line = child.stdout.readline()
            assert line, child.stderr.read()
            yield {**json.loads(line), "pid": child.pid}
        finally:
            child.send_signal(signal.SIGINT)
            try:
                child.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.communicate()


def run_peer(
    python: Path, script: str, *args: str, cwd: Path, timeout: float = 180
) -> dict[str, Any]:
    """Run ``tests/peer_scripts/<script>`` in a peer's interpreter, in ``cwd`` (peers write
    logs where they run: never the checkout); its last JSON line."""
    path = Path(__file__).parent / "peer_scripts" / script
    done = subprocess.run(
        [str(python), str(path), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-4000:])
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
