"""One error tree: every exception class silo_async defines is drawn in ``_errors.py``.

The drawing is parsed and held against the classes found in the source (``ast``, template
worlds left out: they are user code): each public class is drawn under its first base (a
second base as ``+X``) with the module that defines it, and its name ends in ``Error``; no
class is drawn that does not exist. A class named with a leading ``_`` is not drawn, and no
other module may import it.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import pickle
import re
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest

import silo_async as silo
import silo_async.eval as silo_eval
import silo_async.export as silo_export
from silo_async import _errors
from silo_async.agents._load import AgentLoadError
from silo_async.cli._errors import CliError, error_line
from tests.layers_support import find_modules, read_imports, template_worlds
from tests.worlds import ENV

PACKAGE = "silo_async"
ROOT = Path(silo.__file__).resolve().parent


@attrs.frozen
class Drawn:
    """One line of the drawing."""

    name: str
    parent: str | None
    extra: str | None  # a second base class
    module: str | None  # None for a builtin or a class of another package


@attrs.frozen
class Defined:
    """One exception class found in the source."""

    name: str
    bases: tuple[str, ...]
    module: str  # relative to the package: "_errors", "cli._errors"


_LINE = re.compile(
    r"(?P<name>[A-Za-z_][\w.]*)(?: \+(?P<extra>\w+))?(?:\s{2,}(?P<module>[\w.]+)\s{2,}\S.*)?$"
)


def drawn_tree(doc: str) -> dict[str, Drawn]:
    """The classes of the docstring's tree (the block after ``::``), by name."""
    block = doc.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    nodes: dict[str, Drawn] = {}
    path: list[str] = []  # the names from the root to the line above, by depth
    for line in block.splitlines():
        body = line[4:]
        start = next(i for i, c in enumerate(body) if c.isalpha())
        depth = start // 4
        match = _LINE.match(body[start:])
        assert match, f"a line of the tree does not read as a class: {line!r}"
        name = match["name"]
        assert name not in nodes, f"{name} is drawn twice"
        nodes[name] = Drawn(
            name, path[depth - 1] if depth else None, match["extra"], match["module"]
        )
        del path[depth:]
        path.append(name)
    return nodes


def _resolves_to_exception(dotted: str) -> bool:
    """A builtin exception, or ``module.Class`` of another package that is one."""
    if "." not in dotted:
        value = getattr(builtins, dotted, None)
    else:
        module, _, attr = dotted.rpartition(".")
        try:
            value = getattr(importlib.import_module(module), attr, None)
        except ImportError:  # a class of an extra's package built only when it is there
            return False
    return isinstance(value, type) and issubclass(value, BaseException)


def defined_exceptions(root: Path) -> dict[str, Defined]:
    """Every exception class in the package's source, by name (names are unique)."""
    classes: list[Defined] = []
    for name, path in find_modules(root, PACKAGE, skip=template_worlds(root, PACKAGE)).items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        relative = name.removeprefix(PACKAGE + ".")
        classes += [
            Defined(node.name, tuple(ast.unparse(b) for b in node.bases), relative)
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef)
        ]
    found: dict[str, Defined] = {}
    grew = True
    while grew:  # a class is an exception when a base is one: builtin, ours or another's
        grew = False
        for cls in classes:
            if cls.name not in found and any(
                b in found or _resolves_to_exception(b) for b in cls.bases
            ):
                assert cls.name not in {c.name for c in found.values()}
                found[cls.name] = cls
                grew = True
    return found


DRAWN = drawn_tree(_errors.__doc__ or "")
DEFINED = defined_exceptions(ROOT)


def test_the_walk_finds_what_it_should() -> None:
    assert {"SiloError", "OneLineUsageError", "_HttpError", "SeedError"} <= set(DEFINED)
    assert DEFINED["DefinitionError"].bases == ("SiloError", "ValueError")
    assert DRAWN["DefinitionError"] == Drawn(
        "DefinitionError", "SiloError", "ValueError", "_errors"
    )
    assert DRAWN["ValueError"] == Drawn("ValueError", "Exception", None, None)


#: Exceptions whose name DESIGN.md fixes otherwise: ``silo.NoInstance`` (section 18) is not a
#: failure but a family's word that a seed has no instance.
NAMED_BY_DESIGN = {"NoInstance"}


def test_every_public_exception_is_drawn_where_it_is() -> None:
    for cls in DEFINED.values():
        if cls.name.startswith("_"):
            continue
        assert cls.name.endswith("Error") or cls.name in NAMED_BY_DESIGN, (
            f"{cls.module}.{cls.name}: name it ...Error"
        )
        assert cls.name in DRAWN, f"{cls.module}.{cls.name} is not in _errors.py's tree"
        node = DRAWN[cls.name]
        assert (node.parent, *((node.extra,) if node.extra else ())) == cls.bases, (
            f"{cls.name}: the tree says {node.parent} +{node.extra}, the code says {cls.bases}"
        )
        assert node.module == cls.module, f"{cls.name} is defined in {cls.module}"


def test_everything_drawn_exists() -> None:
    for node in DRAWN.values():
        if node.module is None:  # a builtin or another package's class the tree hangs from
            assert _resolves_to_exception(node.name), f"{node.name} is no exception class"
        else:
            assert node.name in DEFINED, f"{node.name} is drawn but not defined"


def test_private_exceptions_stay_in_their_module() -> None:
    private = {c.name: c.module for c in DEFINED.values() if c.name.startswith("_")}
    modules = find_modules(ROOT, PACKAGE)
    for name, path in modules.items():
        for imp in read_imports(name, path, modules):
            crossing = set(imp.names) & set(private)
            assert not crossing, f"{imp} takes private exception {crossing} from its module"


# --- what the tree promises ------------------------------------------------------------------


def test_one_root_for_expected_failures() -> None:
    for cls in (AgentLoadError, CliError, silo.ToolCallLimitExceededError, silo.DefinitionError):
        assert issubclass(cls, silo.SiloError)
    assert issubclass(silo.DefinitionError, ValueError)
    assert issubclass(silo_eval.RunNotFoundError, LookupError)
    assert silo_eval.RunNotFoundError is silo_export.RunNotFoundError  # one class, two homes


def test_the_cli_prints_them_as_before() -> None:
    # One SiloError branch now prints all three, each as it printed before.
    assert error_line(AgentLoadError("Not async.")) == "error: agent_invalid: Not async."
    missing = AgentLoadError("No file.", "agent_not_found")
    assert error_line(missing) == "error: agent_not_found: No file."
    assert str(missing) == "No file." and missing.args == ("No file.",)
    assert error_line(CliError("cancelled", "Stopped.", 130)) == "error: cancelled: Stopped."
    assert repr(missing) == "AgentLoadError('agent_not_found', 'No file.')"


@pytest.mark.parametrize(
    "error",
    [
        silo.SiloError("task_not_found", "No task.", {"task": "T-1"}),
        silo.DefinitionError("Bad schema.", {"tool": "t"}),
        AgentLoadError("No file.", "agent_not_found"),
        CliError("cancelled", "Stopped.", 130),
        silo.ToolCallLimitExceededError("max_tokens", "Token limit exceeded."),
        silo.ToolError("not_found", "No such customer.", {"id": "C-9"}),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_cross_processes_whole(error: Exception) -> None:
    # Ray ships exceptions between processes by pickling; SiloError and ToolError did not
    # survive it (their constructors take more than the message).
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert (str(copy), copy.args, vars(copy)) == (str(error), error.args, vars(error))


def test_the_old_name_works_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match="use silo_async.ToolCallLimitExceededError"):
        old = silo.ToolCallLimitExceeded
    assert old is silo.ToolCallLimitExceededError
    with pytest.warns(DeprecationWarning):
        from silo_async import ToolCallLimitExceeded
    assert ToolCallLimitExceeded is old
    assert silo.__deprecated__ == {"ToolCallLimitExceeded": "silo_async.ToolCallLimitExceededError"}
    assert "ToolCallLimitExceeded" not in silo.__all__  # a star import stays quiet
    with pytest.raises(AttributeError, match="no attribute 'NoSuchThing'"):
        silo.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018


@pytest.fixture
def anyio_backend(fake_clock_backend: Any) -> Any:
    """asyncio, and trio in virtual time."""
    return fake_clock_backend


@pytest.mark.anyio
async def test_a_shielded_agent_learns_which_limit_stopped_it() -> None:
    env = ENV
    caught: list[tuple[str, str]] = []

    async def over_the_count(ctx: silo.AgentContext) -> str:
        with anyio.CancelScope(shield=True):
            for _ in range(3):
                try:
                    await ctx.call_tool("get_customer", {"customerId": "CUS-001"})
                except silo.ToolCallLimitExceededError as exc:
                    caught.append((exc.code, exc.message))
                    break
        return "done"

    result = await silo.run(env, "TASK-ANSWER", over_the_count, max_tool_calls=1)
    assert result.termination_reason == "max_tool_calls"
    assert caught == [("max_tool_calls", caught[0][1])]
    assert caught[0][1].endswith("The agent's scope is cancelled.")

    caught.clear()

    async def past_the_deadline(ctx: silo.AgentContext) -> str:
        with anyio.CancelScope(shield=True):
            await anyio.sleep(0.2)  # virtual on trio; on asyncio four times the limit
            try:
                await ctx.call_tool("get_customer", {"customerId": "CUS-001"})
            except silo.ToolCallLimitExceededError as exc:
                caught.append((exc.code, exc.message))
        return "late"

    result = await silo.run(env, "TASK-ANSWER", past_the_deadline, timeout=0.05)
    assert result.termination_reason == "timeout"
    assert [code for code, _ in caught] == ["timeout"]
