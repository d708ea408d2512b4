"""Registry edits: narrow, append-only, and never corrupting an existing registry."""

from __future__ import annotations

import ast

import pytest

from silo_async import SiloError
from silo_async.project._registry import register


def _register(source: str, ident: str = "new_tool") -> str:
    return register(source, "tools/__init__.py", "tools", ident, ident)


def _entries(source: str) -> list[str]:
    tree = ast.parse(source)
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and isinstance(stmt.value, ast.List):
            return [ast.unparse(e) for e in stmt.value.elts]
    raise AssertionError("no list")


def test_empty_list_opens_up_with_trailing_comma() -> None:
    out = _register("import silo_async as silo\n\ntools: list[silo.Tool] = []\n")
    assert out == (
        "import silo_async as silo\n\nfrom .new_tool import new_tool\n\n"
        "tools: list[silo.Tool] = [\n    new_tool,\n]\n"
    )


def test_multiline_with_comments_and_trailing_commas_appends_before_bracket() -> None:
    source = (
        '"""Registry."""\n'
        "from .a import a\n"
        "from .b import (\n    b,\n)\n\n"
        "tools = [\n    a,  # first ] tricky\n    b,\n    # more to come\n]\n"
    )
    out = _register(source)
    assert out == (
        '"""Registry."""\n'
        "from .a import a\n"
        "from .b import (\n    b,\n)\n"
        "from .new_tool import new_tool\n\n"
        "tools = [\n    a,  # first ] tricky\n    b,\n    # more to come\n    new_tool,\n]\n"
    )


def test_list_without_trailing_comma_keeps_that_style() -> None:
    out = _register("from .a import a\n\ntools = [\n    a\n]\n")
    assert "tools = [\n    a,\n    new_tool\n]\n" in out


def test_one_line_lists() -> None:
    assert "tools = [a, b, new_tool]\n" in _register("from .a import a, b\ntools = [a, b]\n")
    assert "tools = [a, new_tool,]\n" in _register("from .a import a\ntools = [a,]\n")


def test_multiline_entries_and_bracket_after_last_entry() -> None:
    source = 'from .a import make\ntools = [\n    make(\n        "x",\n    ),\n    make("y")]\n'
    out = _register(source)
    assert _entries(out) == ["make('x')", "make('y')", "new_tool"]


def test_empty_multiline_list_with_comment() -> None:
    out = _register("tools = [\n    # none yet\n]\n")
    assert out == "from .new_tool import new_tool\n\ntools = [\n    # none yet\n    new_tool,\n]\n"


def test_only_the_registry_list_is_touched() -> None:
    source = "from .a import a\nother = [1, 2]\ntools = [a]\nafter = [3]\n"
    out = _register(source)
    assert "other = [1, 2]\n" in out
    assert "after = [3]\n" in out
    assert _entries(out.replace("other = [1, 2]\n", "")) == ["a", "new_tool"]


def test_non_ascii_and_crlf_are_preserved() -> None:
    out = _register('# é\r\nfrom .a import a\r\ntools = [a, "é"]  # ü\r\n')
    assert out == (
        "# é\r\nfrom .a import a\r\nfrom .new_tool import new_tool\r\n"
        'tools = [a, "é", new_tool]  # ü\r\n'
    )


def test_docstring_only_registry_gets_import_after_docstring() -> None:
    out = _register('"""Registry."""\n\ntools = []\n')
    assert out.startswith('"""Registry."""\n\nfrom .new_tool import new_tool\n\ntools = [\n')
    assert ast.get_docstring(ast.parse(out)) == "Registry."


def test_second_registration_appends_after_first() -> None:
    once = _register("import silo_async as silo\n\ntools: list[silo.Tool] = []\n", "one")
    twice = _register(once, "two")
    assert _entries(twice) == ["one", "two"]
    assert "from .one import one\nfrom .two import two\n" in twice


@pytest.mark.parametrize(
    "source",
    ["x = 1\n", "tools = list()\n", "def f():\n    tools = []\n", "tools += [a]\n"],
)
def test_missing_list_is_registry_not_found(source: str) -> None:
    with pytest.raises(SiloError) as info:
        _register(source)
    assert info.value.code == "registry_not_found"
    assert 'Could not find "tools = [...]" in tools/__init__.py' in info.value.message
    assert "Register new_tool manually" in info.value.message


def test_unparsable_registry_is_registry_not_found() -> None:
    with pytest.raises(SiloError) as info:
        _register("tools = [\n")
    assert info.value.code == "registry_not_found"
    assert "does not parse" in info.value.message


@pytest.mark.parametrize(
    "source",
    [
        "from .new_tool import new_tool\ntools = []\n",
        "from .x import y as new_tool\ntools = [new_tool]\n",
        "tools = [new_tool]\n",
    ],
)
def test_already_registered(source: str) -> None:
    with pytest.raises(SiloError) as info:
        _register(source)
    assert info.value.code == "already_registered"
    assert info.value.message == '"new_tool" is already registered in tools/__init__.py.'


def test_comment_mentioning_identifier_is_not_a_registration() -> None:
    out = _register("# new_tool comes later\ntools = []\n")
    assert _entries(out) == ["new_tool"]
