"""The shipped families' instances are the same in another process and on either backend.

An instance is a pure function of (environment, family, seed): for one instance of every family
of every template that ships them (crm and support with ``vary``), its instruction, params,
split, initial world, gold calls and the files of its gold agent's rollout (``result.json``,
``state-diff.json``) are compared between this process on asyncio, this process on trio, and a
fresh interpreter with another hash seed. (Ray workers: tests/test_ray_executor.py; servers and
harnesses: tests/test_families_harnesses.py.)
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

import silo_async as silo
from silo_async.testing import gold_agent

from .template_support import template_environment

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ("crm", "project", "erp", "support")
#: Each family's instance: the first one found from this seed upward.
FROM_SEED = 17


def _first_instance(env: silo.Environment, family: str) -> str:
    for seed in range(FROM_SEED, FROM_SEED + 100):
        try:
            return env.task(f"{family}#{seed}").id
        except silo.SiloError as exc:
            if exc.code != "task_not_found":
                raise
    raise AssertionError(f"{family} has no instance from seed {FROM_SEED}")


async def fingerprints(runs: Path) -> dict[str, Any]:
    """Every shipped family's instance (see the module), as JSON values, keyed by its id."""
    out: dict[str, Any] = {}
    for name in TEMPLATES:
        env = template_environment(name, importlib.import_module(f"silo_async.templates.{name}"))
        assert env.families, name
        for family in env.families:
            task_id = _first_instance(env, family.id)
            instance, task = env.instance(task_id), env.task(task_id)
            world = json.dumps(env.as_json(instance.fresh_world()), sort_keys=True)
            result = await silo.run(env, task_id, gold_agent, runs_dir=runs / name)
            assert result.run_dir is not None and result.passed, (task_id, result.error)
            out[f"{name}/{task_id}"] = {
                "task": task.to_dict(),
                "prompt": task.prompt,
                "split": silo.split_of(task),
                "world": hashlib.sha256(world.encode()).hexdigest(),
                "gold": [[c.tool, c.input] for c in instance.gold_calls()],
                "result": (result.run_dir / "result.json").read_text(encoding="utf-8"),
                "diff": (result.run_dir / "state-diff.json").read_text(encoding="utf-8"),
            }
    # As JSON values, as the other process prints them (params and inputs are read-only views).
    values: dict[str, Any] = json.loads(json.dumps(out, default=dict))
    return values


#: In a fresh interpreter with another hash seed: the same fingerprints, printed.
SCRIPT = """
import json, sys
from pathlib import Path
import anyio
from tests.test_families_determinism import fingerprints
print(json.dumps(anyio.run(fingerprints, Path(sys.argv[1]))))
"""


def test_shipped_instances_are_the_same_in_another_process_and_on_either_backend(
    tmp_path: Path,
) -> None:
    here = anyio.run(fingerprints, tmp_path / "asyncio", backend="asyncio")
    assert len(here) >= 5 + 5 + 8 + 5
    on_trio = anyio.run(fingerprints, tmp_path / "trio", backend="trio")
    assert on_trio == here
    env = {**os.environ, "PYTHONHASHSEED": "977", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "child")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    assert json.loads(done.stdout) == here
