"""Layers that never point up, and no import cycle (issue 21, docs/architecture.md).

Every import in the package is read from the source with ``ast`` (``tests/layers_support.py``):
at module level, inside functions (lazy imports run later, but they are dependencies all the
same) and under ``if TYPE_CHECKING:`` (naming another module's type is knowing about it). Each
module belongs to one layer of :data:`LAYERS`; a module may import from its own layer and the
layers below, never from a layer above, and nothing inside the package imports the facade
(``silo_async/__init__.py``: ``import silo_async``, ``from .. import X``). No module imports
itself back through others (a cycle), counting top-level, lazy and ``TYPE_CHECKING`` imports:
a type named both ways is two modules that must be read together, even if no import-time
error could come of it. The same holds one level up: no two units (a root module or a
subpackage) import each other, even through different modules.

The template worlds (``silo_async/templates/<id>/``) are not layered: ``init`` copies them into
users' projects, where they are user code. They may import only the public API, as a user does.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

import silo_async
from tests.docs_support import page
from tests.layers_support import Import, cycles, find_modules, read_imports, template_worlds

PACKAGE = "silo_async"
ROOT = Path(silo_async.__file__).resolve().parent

#: The layers, bottom to top, each with its units: a root module (``_tools``) or a subpackage
#: (``eval``); ``__init__`` is the facade. docs/architecture.md says what each one holds.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "foundations",
        (
            "_errors",
            "_version",
            "_deprecation",
            "_install",
            "_jsonfast",
            "_jsonutil",
            "_limits",
            "_faults",
            "_runid",
            "_origin",
            "_modelstep",
            "_flood",
        ),
    ),
    (
        "definitions",
        (
            "_input",
            "_strict",
            "_schema",
            "_tools",
            "_taskuser",
            "_task",
            "_user",
            "_options",
            "_verify",
            "_diff_fields",
            "_diff",
            "_family",
            "_goldmatch",
            "_play",
            "_instance",
            "_trace",
            "_result",
            "_environment",
        ),
    ),
    ("runs", ("runs",)),
    (
        "rollout core",
        (
            "_telemetry",
            "_fastpath",
            "_end",
            "_setup",
            "_ledger",
            "_grading",
            "_conversation",
            "_rollout",
            "_context",
            "_episode",
            "_runner",
            "_many",
            "_checks",
            "_checks_users",
        ),
    ),
    ("world", ("world",)),
    ("agents, testing, users", ("agents", "testing", "users")),
    ("project", ("project",)),
    # The template worlds are data that imports the public API; the package's own module
    # only re-exports the registry, whose home is the project layer.
    ("templates", ("templates",)),
    ("eval, export", ("eval", "export")),
    ("audit", ("auditing",)),
    ("integrations, serve", ("integrations", "serve")),
    ("cli", ("cli", "__main__")),
    ("facade", ("__init__",)),
)

#: Layers that may import fewer layers than all those below them: the world toolkit builds
#: on definitions only (it knows nothing of rollouts or run directories), and the templates
#: package only names the registry of the project layer.
ONLY_FROM: Mapping[str, frozenset[str]] = {
    "world": frozenset({"foundations", "definitions", "world"}),
    "templates": frozenset({"project", "templates"}),
}

_RANK = {unit: rank for rank, (_, units) in enumerate(LAYERS) for unit in units}
_NAME = {unit: name for name, units in LAYERS for unit in units}


def unit_of(module: str) -> str:
    """``silo_async._tools`` -> ``_tools``; ``silo_async.eval._recorded._runs`` -> ``eval``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_of(module: str) -> str:
    """The name of the layer ``module`` belongs to."""
    return _NAME[unit_of(module)]


def package_imports(root: Path) -> list[Import]:
    """Every import between modules of the package in ``root`` (template worlds left out)."""
    modules = find_modules(root, PACKAGE, skip=template_worlds(root, PACKAGE))
    return [imp for name, path in modules.items() for imp in read_imports(name, path, modules)]


def unplaced(root: Path) -> list[str]:
    """Units of the package that no layer names (a new module must be placed on purpose)."""
    modules = find_modules(root, PACKAGE, skip=template_worlds(root, PACKAGE))
    return sorted({unit_of(m) for m in modules} - set(_RANK))


def upward(imports: Iterable[Import]) -> list[str]:
    """The imports from a lower layer to a higher one, or outside what a layer may use."""
    found = []
    for imp in imports:
        source, target = unit_of(imp.source), unit_of(imp.target)
        if source not in _RANK or target not in _RANK:
            continue  # test_every_unit_has_a_layer names it
        if _RANK[target] > _RANK[source]:
            found.append(f"{imp}: {_NAME[source]} imports {_NAME[target]}, a layer above")
        elif _NAME[source] in ONLY_FROM and _NAME[target] not in ONLY_FROM[_NAME[source]]:
            found.append(f"{imp}: {_NAME[source]} may not import {_NAME[target]}")
    return found


def facade_imports(imports: Iterable[Import]) -> list[str]:
    """Imports of the facade from inside the package: import from the defining module."""
    return [str(imp) for imp in imports if imp.target == PACKAGE and imp.source != PACKAGE]


def _graph(imports: Iterable[Import], *, units: bool = False) -> dict[str, set[str]]:
    """Who imports whom (``TYPE_CHECKING`` imports included), by module or unit."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        source, target = imp.source, imp.target
        if units:
            source, target = unit_of(source), unit_of(target)
            if source == target:
                continue  # a package's own modules import each other freely (module cycles aside)
        graph.setdefault(source, set()).add(target)
    return graph


def module_cycles(imports: Iterable[Import]) -> list[list[str]]:
    """Cycles between modules (top-level, lazy and ``TYPE_CHECKING`` imports)."""
    return cycles(_graph(imports))


def unit_cycles(imports: Iterable[Import]) -> list[list[str]]:
    """Cycles between units: root modules and subpackages, each taken as a whole."""
    return cycles(_graph(imports, units=True))


def private_imports_of_templates(root: Path) -> list[str]:
    """Imports of a private module of silo_async by a template world."""
    modules = find_modules(root, PACKAGE)
    found = []
    for world in template_worlds(root, PACKAGE):
        for name, path in modules.items():
            if name != world and not name.startswith(world + "."):
                continue
            for imp in read_imports(name, path, modules):
                inside = imp.target == world or imp.target.startswith(world + ".")
                private = any(p.startswith("_") for p in imp.target.split(".")[1:])
                if not inside and private:
                    found.append(str(imp))
    return found


# --- the package as it is ---------------------------------------------------------------------

IMPORTS = package_imports(ROOT)


def test_the_walk_sees_the_package() -> None:
    # A guard on the walk itself: lazy and TYPE_CHECKING imports are read, relative ones
    # resolved, ``from pkg import module`` taken as the module.
    seen = {(i.source, i.target, i.kind) for i in IMPORTS}
    assert ("silo_async.cli", "silo_async.cli._app", "lazy") in seen
    assert ("silo_async._trace", "silo_async._tools", "typing") in seen
    assert ("silo_async._runner", "silo_async._rollout", "top") in seen
    assert ("silo_async.world", "silo_async.world.amounts", "top") in seen
    assert len(IMPORTS) > 500


def test_every_unit_has_a_layer() -> None:
    assert unplaced(ROOT) == []
    units = {unit_of(m) for m in find_modules(ROOT, PACKAGE, skip=template_worlds(ROOT, PACKAGE))}
    assert set(_RANK) <= units, f"LAYERS names units that do not exist: {set(_RANK) - units}"


def test_no_import_points_up() -> None:
    assert upward(IMPORTS) == []


def test_nothing_inside_imports_the_facade() -> None:
    assert facade_imports(IMPORTS) == []


def test_no_import_cycle_between_modules() -> None:
    assert module_cycles(IMPORTS) == []


def test_no_import_cycle_between_units() -> None:
    assert unit_cycles(IMPORTS) == []


def test_template_worlds_use_only_the_public_api() -> None:
    assert private_imports_of_templates(ROOT) == []


def doc_layers(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The table of the Architecture page: each layer's name and units, in order."""
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| ")]
    layers = []
    for row in rows[1:]:  # after the header (the rule under it starts "|-")
        name = row[0].removeprefix("| ").replace("`", "")
        units = [u.strip(" `") for u in row[1].split(",")]
        units = [
            "__init__" if u == "silo_async/__init__.py" else u.removeprefix("silo_async.")
            for u in units
        ]
        layers.append((name, tuple(sorted(units))))
    return layers


def test_the_architecture_page_draws_the_same_layers() -> None:
    drawn = doc_layers(page("architecture"))
    assert drawn == [(name, tuple(sorted(units))) for name, units in LAYERS]


# --- the checks catch what they should -------------------------------------------------------


def _write(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_walker_reads_every_kind_of_import(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "pkg",
        {
            "__init__.py": "from ._a import A as A\n",
            "_a.py": (
                "from typing import TYPE_CHECKING\n"
                "from . import sub\n"
                "import pkg._b\n"
                "if TYPE_CHECKING:\n"
                "    from .sub._c import C\n"
                "else:\n"
                "    from .sub import D\n"
                "class A:\n"
                "    def go(self):\n"
                "        import pkg\n"
                "        try:\n"
                "            from ._b import B\n"
                "        except ImportError:\n"
                "            pass\n"
            ),
            "_b.py": "import json\nB = 1\n",
            "sub/__init__.py": "D = 1\n",
            "sub/_c.py": "from ..sub import D\nfrom ... import outside\nC = D\n",
        },
    )
    modules = find_modules(root, "pkg")
    assert sorted(modules) == ["pkg", "pkg._a", "pkg._b", "pkg.sub", "pkg.sub._c"]
    imports = read_imports("pkg._a", modules["pkg._a"], modules)
    found = {(i.target, i.kind, i.names) for i in imports}
    assert found == {
        ("pkg.sub", "top", ()),
        ("pkg._b", "top", ()),
        ("pkg.sub._c", "typing", ("C",)),
        ("pkg.sub", "top", ("D",)),
        ("pkg", "lazy", ()),
        ("pkg._b", "lazy", ("B",)),
    }
    inner = read_imports("pkg.sub._c", modules["pkg.sub._c"], modules)
    assert [(i.target, i.names) for i in inner] == [("pkg.sub", ("D",))]


def test_tarjan_finds_each_cycle_once() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"f"}}
    assert cycles(graph) == [["a", "b", "c"], ["d", "e"], ["f"]]
    assert cycles({"a": {"b"}, "b": {"c"}}) == []
    chain = {str(i): {str(i + 1)} for i in range(5000)}  # deep, not recursive
    chain["4999"] = {"0"}
    assert [len(c) for c in cycles(chain)] == [5000]


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of silo_async's source to plant bad imports in (nothing is imported from it)."""
    target = tmp_path / PACKAGE
    shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    return target


def _plant(path: Path, line: str, *, lazy: bool = False) -> None:
    text = path.read_text(encoding="utf-8")
    if lazy:
        text += f"\n\ndef _planted() -> None:\n    {line}\n"
    else:
        head, sep, rest = text.partition("from __future__ import annotations\n")
        text = head + sep + line + "\n" + rest
    path.write_text(text, encoding="utf-8")


def test_an_upward_import_is_caught(copy: Path) -> None:
    assert upward(package_imports(copy)) == []
    _plant(copy / "_tools.py", "from .cli._errors import fail", lazy=True)
    [found] = upward(package_imports(copy))
    assert "silo_async._tools" in found and "definitions imports cli, a layer above" in found


def test_a_type_checking_import_must_point_down_too(copy: Path) -> None:
    _plant(copy / "runs" / "_events.py", "if TYPE_CHECKING:\n    from ..eval import EvalSummary")
    _plant(copy / "runs" / "_events.py", "from typing import TYPE_CHECKING")
    [found] = upward(package_imports(copy))
    assert "[typing]" in found and "runs imports eval" in found


def test_the_world_may_not_reach_the_rollout_core(copy: Path) -> None:
    _plant(copy / "world" / "_audit.py", "from .._runner import run")
    [found] = upward(package_imports(copy))
    assert "world may not import rollout core" in found


def test_a_facade_import_is_caught(copy: Path) -> None:
    _plant(copy / "serve" / "_wire.py", "from .. import Episode")
    assert len(facade_imports(package_imports(copy))) == 1


def test_a_cycle_is_caught_even_when_lazy(copy: Path) -> None:
    # _jsonutil imports _jsonfast at its top; _jsonfast importing _jsonutil back, even inside
    # a function, is a cycle (both are foundations, so no layer rule is broken).
    _plant(copy / "_jsonfast.py", "from ._jsonutil import MAX_DEPTH", lazy=True)
    imports = package_imports(copy)
    assert upward(imports) == []
    assert module_cycles(imports) == [["silo_async._jsonfast", "silo_async._jsonutil"]]


def test_a_cycle_of_type_only_imports_is_caught(copy: Path) -> None:
    # _trace names _tools' types under TYPE_CHECKING; _tools naming a _trace type back, even
    # only for the type checker, makes the two modules one to read.
    _plant(copy / "_tools.py", "if TYPE_CHECKING:\n    from ._trace import TraceRecorder")
    _plant(copy / "_tools.py", "from typing import TYPE_CHECKING")
    imports = package_imports(copy)
    assert upward(imports) == []
    assert module_cycles(imports) == [["silo_async._tools", "silo_async._trace"]]


def test_a_cycle_between_units_is_caught(copy: Path) -> None:
    # export reads recorded runs from eval; eval importing export back (another module) is no
    # module cycle and breaks no layer (the two share one), but the two units are circular.
    _plant(copy / "eval" / "_report" / "_compare.py", "from ...export._chat import __all__")
    imports = package_imports(copy)
    assert upward(imports) == [] and module_cycles(imports) == []
    assert unit_cycles(imports) == [["eval", "export"]]


def test_an_unplaced_module_is_caught(copy: Path) -> None:
    (copy / "_newthing.py").write_text('"""New."""\n', encoding="utf-8")
    assert unplaced(copy) == ["_newthing"]


def test_a_template_world_reaching_a_private_module_is_caught(copy: Path) -> None:
    _plant(copy / "templates" / "crm" / "state.py", "from silo_async._tools import Tool")
    [found] = private_imports_of_templates(copy)
    assert found.startswith("silo_async.templates.crm.state:")
