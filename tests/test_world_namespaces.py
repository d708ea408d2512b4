"""silo_async.world in namespaces: each name has one home, listed and documented there.

The flat names of before the namespaces still work for one release, with a DeprecationWarning
that names their new home; none of our own code (templates, examples, tests, the docs) uses
them any more.
"""

from __future__ import annotations

import ast
import inspect
import re
import warnings
from pathlib import Path
from types import ModuleType

import pytest

import silo_async.world as world
from silo_async.world import amounts, clock, fields, grade, records, schema, tools

from .docs_support import doc_pages

NAMESPACES: dict[str, ModuleType] = {
    "amounts": amounts,
    "clock": clock,
    "fields": fields,
    "grade": grade,
    "records": records,
    "schema": schema,
    "tools": tools,
}
ROOT = Path(__file__).resolve().parent.parent
#: Constants and type aliases: documented where they are defined, not in the namespace's text.
_UNLISTED = {"Reference", "View", "Where", "Change", "label_of", "not_found", "invalid"}


def _reexported(module: ModuleType) -> set[str]:
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    return {
        alias.asname
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname is not None
    }


@pytest.mark.parametrize("name", sorted(NAMESPACES))
def test_each_namespace_lists_and_documents_its_names(name: str) -> None:
    module = NAMESPACES[name]
    assert len(set(module.__all__)) == len(module.__all__)
    assert set(module.__all__) == _reexported(module)
    for export in module.__all__:
        value = getattr(module, export)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{name}.{export} has no docstring"
        if not export.isupper() and export not in _UNLISTED:
            assert export in (module.__doc__ or ""), f"{name}.{export} is not in its docs"


def test_every_name_has_one_home() -> None:
    homes: dict[int, list[str]] = {}
    for name, module in NAMESPACES.items():
        for export in module.__all__:
            value = getattr(module, export)
            if not isinstance(value, int | str | dict):  # constants may be equal by chance
                homes.setdefault(id(value), []).append(f"{name}.{export}")
    assert [v for v in homes.values() if len(v) > 1] == []
    # A field kind is named after the schema it builds, in its own namespace.
    assert fields.string("S.").schema == schema.string("S.")


def test_the_top_level_holds_the_namespaces_and_the_names_every_world_uses() -> None:
    assert sorted(dir(world)) == sorted(world.__all__)
    assert not set(world.__all__) & set(world.__deprecated__)  # only current names
    for name in world.__all__:
        assert name in world.__doc__, name
        assert getattr(world, name) is not None
    for name in ("every", "Collection", "Actor", "Seed", "Input", "define_tool"):
        home = [n for n, m in NAMESPACES.items() if name in m.__all__ or hasattr(m, name)]
        assert home, name  # also in its namespace
    assert world.every is grade.every and world.Input is fields.Input


def test_a_flat_name_still_works_and_says_where_it_moved() -> None:
    assert len(world._MOVED) == 78
    for name, home in world._MOVED.items():
        with pytest.warns(DeprecationWarning) as caught:
            value = getattr(world, name)
        assert value is getattr(NAMESPACES[home], name)
        assert str(caught[0].message) == (
            f"silo_async.world.{name} is deprecated: use silo_async.world.{home}.{name} "
            f"instead; silo_async.world.{name} goes in silo_async 0.2.0."
        )
        assert caught[0].filename == __file__  # the warning points at the caller
    assert world.__deprecated__["read_string"] == "silo_async.world.fields.read_string"
    assert set(world.__deprecated__) == set(world._MOVED)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = world.nothing  # type: ignore[attr-defined]


def test_a_flat_import_still_works() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec("from silo_async.world import read_string, today", {})
    assert {str(w.message).split(" is deprecated")[0] for w in caught} == {
        "silo_async.world.read_string",
        "silo_async.world.today",
    }


_FLAT_USE = re.compile(r"(?<![\w.])(?:w|world)\.(\w+)")
_FLAT_IMPORT = re.compile(r"from silo_async\.world import \(?([\w\s,]+)\)?")


def _our_files() -> list[Path]:
    found = doc_pages()
    for folder in ("silo_async", "tests", "examples", "benchmarks"):
        found += sorted((ROOT / folder).rglob("*.py"))
    # The conformance suite of DESIGN section 11 was written before the namespaces; this file
    # reaches the flat names on purpose.
    return [p for p in found if p.name not in {"test_contract_world.py", Path(__file__).name}]


def test_our_own_code_uses_no_flat_name() -> None:
    moved = set(world._MOVED)
    uses = []
    for path in _our_files():
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".md":  # its code, not the prose that names the old names
            text = "\n".join(re.findall(r"```python\n(.*?)```", text, re.DOTALL))
        if path.suffix == ".py" and "silo_async import world" not in text:
            names = []
        else:
            names = [m.group(1) for m in _FLAT_USE.finditer(text)]
        for imported in _FLAT_IMPORT.finditer(text):
            names += [n.strip() for n in imported.group(1).split(",")]
        uses += [f"{path.relative_to(ROOT)}: {n}" for n in names if n in moved]
    assert uses == []
