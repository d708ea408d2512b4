"""The public surface: each public module's ``__all__`` complete, importable and documented."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

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
        "heavy = {'mcp', 'openai', 'anthropic', 'ray', 'rich', 'httpx2', 'uvicorn', 'starlette',\n"
        "         'inspect_ai', 'verifiers', 'openenv', 'nemo_gym', 'websockets', 'pydantic'}\n"
        "heavy |= {m for m in sys.modules if m.startswith('silo_async.integrations.')}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- every public subpackage (and public module below one) ------------------------------------


def _public_modules() -> list[str]:
    """``silo_async.<pkg>`` and ``silo_async.<pkg>.<module>`` whose names have no underscore.

    Templates are data that ``init`` copies, not an API, so what is inside them is left out.
    """
    names = []
    for info in pkgutil.iter_modules(silo.__path__, "silo_async."):
        leaf = info.name.rpartition(".")[2]
        if leaf.startswith("_") or not info.ispkg:
            continue
        names.append(info.name)
        if leaf == "templates":
            continue
        package = importlib.util.find_spec(info.name)
        assert package is not None and package.submodule_search_locations is not None
        for sub in pkgutil.iter_modules(package.submodule_search_locations, info.name + "."):
            if not sub.name.rpartition(".")[2].startswith("_"):
                names.append(sub.name)
    return sorted(names)


PUBLIC_MODULES = _public_modules()


#: Public modules that need a package of their own (an extra, or a peer's virtualenv).
_NEEDS = {
    "silo_async.serve": "mcp",  # the mcp extra
    "silo_async.integrations.inspect": "inspect_ai",  # the inspect extra
    "silo_async.integrations.verifiers": "verifiers",  # its own virtualenv (Makefile: peers)
}


def _import(name: str) -> ModuleType:
    if name in _NEEDS:
        pytest.importorskip(_NEEDS[name])
    return importlib.import_module(name)


def _bound_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else []
    if isinstance(node, ast.AnnAssign):
        targets = [node.target]
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _surface(module: ModuleType) -> set[str]:
    """What ``__all__`` must list: the public names the module defines at its top level and,
    for a package, the public names it takes from its own private modules (``from ._x import``).

    Names taken from elsewhere (``from .._errors import SiloError``) may be re-exported, but
    they are a choice, not a duty.
    """
    tree = ast.parse(inspect.getsource(module))
    is_package = hasattr(module, "__path__")
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if is_package and node.level == 1:
                names.update(alias.asname or alias.name for alias in node.names)
        else:
            names.update(_bound_names(node))
    return {name for name in names if not name.startswith("_")}


def test_the_public_modules_are_found() -> None:
    # A guard on the walk itself: these must be among what it covers.
    expected = {"silo_async.agents", "silo_async.integrations.trl", "silo_async.serve"}
    assert expected | {"silo_async.testing", "silo_async.world"} <= set(PUBLIC_MODULES)


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_module_has_a_complete_unique_documented_all(name: str) -> None:
    module = _import(name)
    assert inspect.getdoc(module), f"{name} has no docstring"
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list), f"{name} defines no __all__ list"
    assert len(set(exported)) == len(exported), f"{name}.__all__ repeats a name"
    missing = _surface(module) - set(exported)
    assert not missing, f"{name}.__all__ leaves out {sorted(missing)}"
    deprecated = getattr(module, "__deprecated__", {})  # name -> where it lives now
    assert not set(exported) & set(deprecated), f"{name}.__all__ lists deprecated names"
    for item in exported:
        value = getattr(module, item)  # importable: `from name import *` gives every name
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{name}.{item} has no docstring"
