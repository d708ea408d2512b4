"""Run pytest as a core-only install would, inside the full one.

``python tests/core_only/run.py [PYTEST ARGS]``: the installed packages that
``pip install -e .`` plus the test tools (pytest, trio, hypothesis, pytest-timeout) would not
bring are hidden from pytest and from every process its tests start (``sitecustomize.py``
beside this file), and pytest loads only the plugins of what is left, so a test that needs an
optional extra skips, naming it, as in a venv holding only the core. What the core holds is read
from the installed metadata: silo_async's dependencies without extras, the test tools', and
theirs, all the way down.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement  # pytest's own dependency

#: What a core-only test run installs besides ``pip install -e .``.
TEST_TOOLS = ("pytest", "trio", "hypothesis", "pytest-timeout")
#: Top-level names of this checkout, never hidden.
OURS = frozenset({"silo_async", "silo_async_verifiers", "tests", "sitecustomize"})
HERE = Path(__file__).resolve().parent


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def core_distributions() -> set[str]:
    """The distributions a core-only install holds (normalised names)."""
    todo, seen = ["silo_async", *TEST_TOOLS], set()
    while todo:
        name = _key(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return seen


def hidden_modules(core: set[str]) -> list[str]:
    """Installed top-level modules that no distribution of ``core`` brings."""
    return sorted(
        module
        for module, dists in metadata.packages_distributions().items()
        if module not in OURS
        and module not in sys.stdlib_module_names
        and not any(_key(dist) in core for dist in dists)
    )


def plugin_flags(core: set[str]) -> list[str]:
    """``-p MODULE`` for each installed pytest plugin that a distribution of ``core`` brings."""
    flags = []
    for entry in metadata.entry_points(group="pytest11"):
        if entry.dist is not None and _key(entry.dist.name) in core:
            flags += ["-p", entry.value]
    return flags


def core_only_env(core: set[str]) -> dict[str, str]:
    """This process's environment, with ``core``'s view for every interpreter it starts."""
    path = os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH", "")) if p)
    return {
        **os.environ,
        "PYTHONPATH": path,
        "SILO_CORE_ONLY_HIDE": ",".join(hidden_modules(core)),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # the plugins of what is hidden would not load
    }


def main(args: list[str]) -> int:
    """Run pytest with ``args`` as a core-only install would; its exit code."""
    core = core_distributions()
    command = [sys.executable, "-m", "pytest", *plugin_flags(core), *args]
    return subprocess.run(command, env=core_only_env(core), check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
