"""Setup shared by the tests of the shipped templates (crm, project, erp and support).

Each template is loaded straight from its package (no scaffolded copy, no runner), and the
example agents are loaded from ``examples/agents`` by file name.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import silo_async as silo

AGENTS = Path(__file__).resolve().parent.parent / "examples" / "agents"


def template_dir(package: ModuleType) -> Path:
    """The folder of a template package (where its data/ and tasks/ live)."""
    return Path(str(package.__file__)).parent


def template_environment(name: str, package: ModuleType) -> silo.Environment:
    """An Environment made of a template package's exports and its ``tasks/*.json``.

    The package's ``families`` and ``vary`` come along when it exports them.
    """
    tasks = [
        silo.Task.from_dict(json.loads(p.read_text(encoding="utf-8")))
        for p in sorted((template_dir(package) / "tasks").glob("*.json"))
    ]
    return silo.Environment(
        name=name,
        create_state=package.create_state,
        bind=package.bind_tools,
        verifiers=package.verifiers,
        tasks=tasks,
        families=getattr(package, "families", ()),
        vary=getattr(package, "vary", None),
    )


def load_agent(name: str) -> Any:
    """The ``agent`` of ``examples/agents/<name>.py``."""
    path = AGENTS / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_template_agent_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.agent


async def invoke(tool: silo.BoundTool, args: dict[str, Any]) -> silo.ToolResult:
    """Call one bound tool directly; a fault (a bug in the tool) fails the test."""
    result, fault = await tool.invoke(args)
    assert fault is None, fault
    return result


class TemplateWorld:
    """A fresh world of a template package with its tools, callable by name (no runner)."""

    def __init__(self, package: ModuleType) -> None:
        self.state: Any = package.create_state()
        self.initial = silo.clone_json(self.state)
        self.tools = {t.name: t for t in package.bind_tools(self.state)}

    async def call(self, name: str, args: dict[str, Any] | None = None) -> silo.ToolResult:
        return await invoke(self.tools[name], args or {})

    async def ok(self, name: str, args: dict[str, Any] | None = None) -> Any:
        result = await self.call(name, args)
        assert not result.is_error, result.output
        return result.output

    async def rejects(self, name: str, args: dict[str, Any], code: str, fragment: str) -> None:
        """The call is refused with ``code``, its message holds ``fragment``, nothing changed."""
        result = await self.call(name, args)
        assert result.is_error
        assert result.output["code"] == code
        assert fragment in result.output["message"], result.output["message"]
        # A rejected call changes nothing, not even the audit log or the id counters.
        assert self.state == self.initial


async def idle(ctx: silo.AgentContext) -> str:
    """An agent that does nothing (a family's instance must fail for it)."""
    return ""


def instance_params(env: silo.Environment, task_id: str) -> dict[str, Any]:
    """The params an instance ``FAMILY#SEED`` of ``env`` was sampled with."""
    return dict(env.task(task_id).params or {})


def seed_where(env: silo.Environment, family: str, predicate: Any, seeds: int = 3000) -> int:
    """The first seed of ``family`` whose params meet ``predicate`` (no-instance seeds skipped)."""
    for seed in range(seeds):
        try:
            if predicate(instance_params(env, f"{family}#{seed}")):
                return seed
        except silo.SiloError:  # NoInstance: the scan skips it
            continue
    raise AssertionError(f"no {family} instance matches")
