"""The import graph of a package, read from its source with ``ast`` (nothing is imported).

Used by ``tests/test_layers.py``, which also runs it on made-up packages and on a copy of
silo_async with a planted bad import, to show that it catches what it should.

Every ``import`` statement counts, wherever it is:

* ``top``: at module level, run when the module is imported;
* ``lazy``: inside a function or method, run when that code runs — still a dependency, only a
  later one, so it obeys the same rules;
* ``typing``: under ``if TYPE_CHECKING:``, never run. It names a type of another module, which
  is knowing about that module: it must point down like any other import. It is left out of the
  cycle search only, because it cannot take part in an import-time cycle and a pair of modules
  whose types mention each other (a class and its renderer) is not circular code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal

import attrs

__all__ = ["Import", "cycles", "find_modules", "read_imports", "template_worlds"]

Kind = Literal["top", "lazy", "typing"]


@attrs.frozen
class Import:
    """One import of a module of the package by another.

    Attributes:
        source: the importing module (``silo_async.eval._recorded._replay``).
        target: the imported module; ``from pkg import name`` targets ``pkg.name`` when that
            is a module, else ``pkg`` itself.
        line: where the statement is in ``source``.
        kind: ``top``, ``lazy`` or ``typing`` (see the module docstring).
        names: what a ``from`` import takes (empty for ``import x.y``).
    """

    source: str
    target: str
    line: int
    kind: Kind
    names: tuple[str, ...] = ()

    def __str__(self) -> str:
        what = f" ({', '.join(self.names)})" if self.names else ""
        return f"{self.source}:{self.line} -> {self.target}{what} [{self.kind}]"


def find_modules(root: Path, package: str, skip: Sequence[str] = ()) -> dict[str, Path]:
    """Every module of the package in directory ``root``: dotted name -> file.

    ``skip`` names subpackages (dotted, below ``package``) whose modules are left out.
    """
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join((package, *parts))
        if not any(name == s or name.startswith(s + ".") for s in skip):
            found[name] = path
    return found


def template_worlds(root: Path, package: str) -> list[str]:
    """``<package>.templates.<id>`` for every template directory: user code shipped as data."""
    return [
        f"{package}.templates.{p.name}"
        for p in sorted((root / "templates").iterdir())
        if (p / "__init__.py").is_file()
    ]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(
    body: Iterable[ast.stmt], kind: Kind
) -> Iterator[tuple[ast.Import | ast.ImportFrom, Kind]]:
    """Every import statement in ``body`` (nested blocks included) with its kind."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, kind
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _statements(node.body, "typing" if kind == "typing" else "lazy")
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _statements(node.body, "typing")
            yield from _statements(node.orelse, kind)
        elif isinstance(node, ast.If) and (
            isinstance(node.test, ast.UnaryOp)
            and isinstance(node.test.op, ast.Not)
            and _is_type_checking(node.test.operand)
        ):
            yield from _statements(node.body, kind)
            yield from _statements(node.orelse, "typing")
        else:
            for field in ("body", "orelse", "finalbody"):
                yield from _statements(getattr(node, field, ()), kind)
            for clause in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
                yield from _statements(clause.body, kind)


def _base(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute module a relative ``from`` import starts from."""
    if level == 0:
        return name or ""
    parts = module.split(".")
    anchor = parts if is_package else parts[:-1]
    anchor = anchor[: len(anchor) - (level - 1)]
    return ".".join([*anchor, name] if name else anchor)


def _longest_known(dotted: str, known: Mapping[str, Path]) -> str | None:
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return None


def read_imports(module: str, path: Path, known: Mapping[str, Path]) -> list[Import]:
    """The imports of ``module`` (its source at ``path``) that target a module in ``known``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    found: list[Import] = []
    for node, kind in _statements(tree.body, "top"):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _longest_known(alias.name, known)
                if target is not None:
                    found.append(Import(module, target, node.lineno, kind))
            continue
        base = _base(module, is_package, node.level, node.module)
        if _longest_known(base, known) is None:
            continue
        plain = tuple(a.name for a in node.names if f"{base}.{a.name}" not in known)
        if plain:
            found.append(Import(module, base, node.lineno, kind, plain))
        for alias in node.names:
            if f"{base}.{alias.name}" in known:
                found.append(Import(module, f"{base}.{alias.name}", node.lineno, kind))
    return found


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The import cycles of ``graph`` (module -> modules it imports), as sorted module lists.

    Tarjan's strongly connected components: a component of two or more modules, or a module
    importing itself, is a cycle. Iterative, so a deep graph cannot exhaust the stack.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, ()):
                    found.append(sorted(component))
    return sorted(found)
