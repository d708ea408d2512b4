"""The public surface: one ``__all__``, every name in it importable and documented."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import silo_async as silo


def _reexported() -> set[str]:
    tree = ast.parse(Path(silo.__file__).read_text())
    return {
        alias.asname
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname is not None
    }


def test_all_lists_exactly_the_reexports_once() -> None:
    # Its order is ruff's (RUF022: constants, classes, then functions, each sorted).
    assert len(set(silo.__all__)) == len(silo.__all__)
    assert set(silo.__all__) == _reexported() | {"__version__"}


def test_every_public_name_is_importable_and_documented() -> None:
    for name in silo.__all__:
        value = getattr(silo, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"silo_async.{name} has no docstring"


def test_the_core_imports_no_integration() -> None:
    import subprocess
    import sys

    code = (
        "import sys, silo_async\n"
        "heavy = {'mcp', 'openai', 'anthropic', 'ray', 'rich', 'httpx2', 'uvicorn', 'starlette'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
