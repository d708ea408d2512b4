"""``eval --executor ray`` flags and errors that need no running Ray (imported on use only)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import silo_async as silo

from .cli_support import cli
from .peers import extra

ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    return tmp_path


def eval_args(*extra: str) -> list[str]:
    return ["eval", "--env", "crm", "--task", "TASK-001", "--agent", SOLVER, "--out", "ev", *extra]


def test_nothing_imports_ray_unless_asked() -> None:
    code = (
        "import sys\n"
        "import silo_async, silo_async.cli._app, silo_async.eval\n"
        "silo_async.RayExecutor(workers=2, concurrency=4)\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.stdout.strip() == "[]"


def test_without_ray_the_executor_is_unavailable_and_names_the_fix(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` sees when it is missing
    result = cli(*eval_args("--executor", "ray"))
    assert result.exit_code == 1
    assert result.stderr.startswith("error: executor_unavailable: ")
    assert "pip install 'silo_async[ray]'" in result.stderr
    assert not (project / "ev").exists()  # refused before anything was written
    local = cli(*eval_args("--json"))  # the default executor needs no Ray
    assert local.exit_code == 0, local.output


@pytest.mark.parametrize(
    ("flags", "shown"),
    [
        (["--workers", "2"], "--workers"),
        (["--worker-concurrency", "2"], "--worker-concurrency"),
        (["--ray-address", "auto"], "--ray-address"),
    ],
)
def test_ray_flags_need_the_ray_executor(project: Path, flags: list[str], shown: str) -> None:
    result = cli(*eval_args(*flags))
    assert result.exit_code == 2
    assert f"{shown} apply to --executor ray" in result.output


@pytest.mark.parametrize("address", ["nonsense", "host:notaport", "10.0.0.1:99999", ""])
def test_a_malformed_address_is_executor_invalid(project: Path, address: str) -> None:
    result = cli(*eval_args("--executor", "ray", "--ray-address", address))
    assert result.exit_code == 1
    assert result.stderr.startswith("error: executor_invalid: ")
    assert "auto or HOST:PORT" in result.stderr


@extra("ray")
def test_auto_without_ray_address_is_executor_invalid(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    result = cli(*eval_args("--executor", "ray", "--ray-address", "auto"))
    assert result.exit_code == 1
    assert result.stderr.startswith("error: executor_invalid: ")
    assert "RAY_ADDRESS is not set" in result.stderr
    assert not (project / "ev").exists()


@extra("ray")
def test_nothing_listening_is_executor_unavailable(project: Path) -> None:
    result = cli(*eval_args("--executor", "ray", "--ray-address", "127.0.0.1:1"))
    assert result.exit_code == 1
    assert result.stderr.startswith("error: executor_unavailable: No Ray cluster answers at ")
    assert "ray start --head" in result.stderr
    assert not (project / "ev").exists()


@pytest.mark.parametrize("value", [0, -1, True, 2.5])
def test_executor_sizes_are_checked(value: object) -> None:
    with pytest.raises(silo.SiloError) as info:
        silo.RayExecutor(workers=value)  # type: ignore[arg-type]
    assert info.value.code == "executor_invalid"
    with pytest.raises(silo.SiloError):
        silo.RayExecutor(concurrency=value)  # type: ignore[arg-type]
