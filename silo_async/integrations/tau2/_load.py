"""Loading an imported tau2 environment: digests first, then the user's tau2, then the pieces.

The environment directory written by ``silo-async import tau2`` holds ``tau2.json`` (what was
imported) and an entrypoint that calls :func:`load`. Each load checks every recorded digest
before anything of tau2 runs (``environment_stale`` names a changed file), imports tau2 from
where it was imported, and builds the environment's pieces. The parsed domain (:class:`Domain`)
is kept for the process: loading the same import again (every command, every Ray worker, every
``load_environment``) costs the digests only.
"""

from __future__ import annotations

import functools
import json
import threading
from pathlib import Path
from typing import Any

import attrs

from ..._errors import SiloError, ToolError
from ..._tools import BoundTool, Tool, bind_tools, tool
from ..._verify import Check, Verifier, VerifierContext
from ._domain import Domain
from ._grade import grade, needs_judge, trajectory
from ._judge import ModelJudge
from ._source import activate, check_digests
from ._task import Tau2Task, silo_task
from ._world import Tau2ToolError, World

__all__ = ["RECORD_FILE", "Loaded", "keep_domain", "load", "loaded_domain", "require_record"]

#: What ``import tau2`` records, beside the entrypoint.
RECORD_FILE = "tau2.json"

_DOMAINS: dict[tuple[str, str, str | None], Domain] = {}
_LOCK = threading.Lock()


@attrs.frozen(eq=False)
class Loaded:
    """What an imported environment's entrypoint exports (the loader's contract)."""

    domain: Domain
    tools: tuple[Tool, ...]
    tasks: tuple[Tau2Task, ...]
    verifiers: tuple[Verifier, ...]
    by_id: dict[str, Any]

    def create_state(self) -> World:
        """A fresh world: tau2's environment over copy-on-read databases."""
        return self.domain.world()

    def bind_tools(self, world: World) -> list[BoundTool]:
        """The tools, bound to ``world``."""
        return bind_tools(world, self.tools)

    def setup(self, world: World, task: Any) -> None:
        """The task's initial state, by tau2's own ``set_state``."""
        self.domain.setup(world, self.by_id[task.id])

    def snapshot(self, world: World) -> dict[str, Any]:
        """The world as JSON: each database field, the user's prefixed ``user_``."""
        return self.domain.snapshot(world)

    @property
    def policy(self) -> str:
        """tau2's policy for the domain."""
        return self.domain.policy


def loaded_domain(root: Path, domain: str, split: str | None) -> Domain:
    """The process's :class:`Domain` for tau2 at ``root`` (parsed on first use)."""
    key = (str(root), domain, split)
    with _LOCK:
        found = _DOMAINS.get(key)
        if found is None:
            activate(root)
            found = _DOMAINS[key] = Domain(domain, split)
        return found


def keep_domain(root: Path, domain: str, split: str | None, parsed: Domain) -> None:
    """Keep ``parsed`` as the process's :class:`Domain` for tau2 at ``root``."""
    with _LOCK:
        _DOMAINS.setdefault((str(root), domain, split), parsed)


def load(env_dir: Path) -> Loaded:
    """Load the tau2 environment imported into ``env_dir``.

    Raises:
        SiloError: ``environment_stale`` naming a data file that changed since the import;
            ``tau2_unavailable`` when tau2 cannot be imported from where it was;
            ``runtime_contract_invalid`` when ``tau2.json`` cannot be read.
    """
    record = require_record(env_dir)
    root = Path(record["root"])
    check_digests(Path(record["base"]), record["digests"], env_dir.name)
    domain = loaded_domain(root, record["domain"], record.get("split"))
    wanted = record.get("judge")
    judge = None if not wanted else ModelJudge(wanted["model"], wanted.get("baseUrl"))
    user_tools = [name for name, _, _ in domain.user_tools]
    tasks = tuple(
        silo_task(number, domain.name, task, user_tools)
        for number, task in enumerate(domain.tasks, start=1)
    )
    by_id = {silo.id: task for silo, task in zip(tasks, domain.tasks, strict=True)}
    verifiers = tuple(
        Verifier(
            id=silo.id,
            task_id=silo.id,
            fn=(
                functools.partial(_verify, domain, by_id[silo.id])
                if judge is None
                else functools.partial(_verify_judged, domain, by_id[silo.id], judge)
            ),
            name=f"tau2's evaluator on {domain.name} task {silo.tau2_id}",
        )
        for silo in tasks
    )
    tools = (
        *(_tool(name, text, schema, "assistant") for name, text, schema in domain.agent_tools),
        *(_tool(name, text, schema, "user") for name, text, schema in domain.user_tools),
    )
    return Loaded(domain, tools, tasks, verifiers, by_id)


def _verify(
    domain: Domain, task: Any, final: World, initial: Any, ctx: VerifierContext
) -> list[Check]:
    return grade(domain, task, final, ctx)


async def _verify_judged(
    domain: Domain,
    task: Any,
    judge: ModelJudge,
    final: World,
    initial: Any,
    ctx: VerifierContext,
) -> list[Check]:
    """As :func:`_verify`, asking the judge about natural-language assertions first."""
    verdicts = None
    if needs_judge(task, ctx):
        messages = trajectory(domain, task, final, ctx)
        verdicts = await judge.verdicts(messages, task.evaluation_criteria.nl_assertions)
    return grade(domain, task, final, ctx, verdicts)


def _tool(name: str, description: str, schema: dict[str, Any], requestor: str) -> Tool:
    """A tau2 tool as tau2 publishes it; tau2 judges its own input, as in its orchestrator."""

    def body(world: World, args: Any) -> str:
        try:
            return world.call(requestor, name, args)
        except Tau2ToolError as exc:
            raise ToolError("tool_error", str(exc)) from None

    return tool(name=name, description=description, input_schema=schema, check_input=False)(body)


def require_record(env_dir: Path) -> dict[str, Any]:
    """The import record of ``env_dir``.

    Raises:
        SiloError: ``runtime_contract_invalid`` when ``tau2.json`` is missing or unreadable.
    """
    try:
        data = json.loads((env_dir / RECORD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SiloError(
            "runtime_contract_invalid",
            f"{env_dir / RECORD_FILE} cannot be read ({exc}): import the environment again.",
            {"environment": env_dir.name},
        ) from exc
    if not isinstance(data, dict):
        raise SiloError(
            "runtime_contract_invalid",
            f"{env_dir / RECORD_FILE} is not a JSON object: import the environment again.",
            {"environment": env_dir.name},
        )
    return data
