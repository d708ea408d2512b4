"""Register a new tool or verifier in its registry module — the only place we edit code.

Deliberately narrow: the registry is parsed with :mod:`ast` to find the top-level
``tools = [...]`` (or ``verifiers``) list literal and its exact closing bracket (via
:mod:`tokenize`, so comments, trailing commas and multi-line entries are understood). The new
entry is appended before the closing bracket, keeping the list's trailing-comma style, and one
``from .<stem> import <identifier>`` line goes after the last top-level import. The result is
re-parsed and checked before it is returned; callers write it only after everything else is
ready, so a failure never leaves an orphan file or a corrupt registry.
"""

from __future__ import annotations

import ast
import io
import tokenize

from .._errors import SiloError

__all__ = ["register"]


def _not_found(file: str, list_name: str, identifier: str, why: str) -> SiloError:
    return SiloError(
        "registry_not_found",
        f'Could not find "{list_name} = [...]" in {file}{why}. Register {identifier} manually.',
        {"file": file, "arrayName": list_name, "identifier": identifier},
    )


def _find_list(tree: ast.Module, list_name: str) -> tuple[ast.stmt, ast.List] | None:
    """The last top-level ``<list_name> = [...]`` (the binding that wins at import time)."""
    found: tuple[ast.stmt, ast.List] | None = None
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets = [stmt.target]
        else:
            continue
        named = any(isinstance(t, ast.Name) and t.id == list_name for t in targets)
        if named and isinstance(stmt.value, ast.List):
            found = (stmt, stmt.value)
    return found


def _binds(tree: ast.Module, identifier: str) -> bool:
    """Whether ``identifier`` is already used as a name or imported in the registry."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == identifier:
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name) == identifier:
            return True
    return False


def _char_col(line: str, byte_col: int) -> int:
    # ast columns are UTF-8 byte offsets; tokenize and str slicing use characters.
    return len(line.encode("utf-8")[:byte_col].decode("utf-8"))


def _token_before_close(source: str, close: tuple[int, int]) -> tokenize.TokenInfo:
    """The last significant token (not a comment or line break) before the closing ``]``."""
    previous: tokenize.TokenInfo | None = None
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.start == close and token.string == "]":
            assert previous is not None
            return previous
        if token.type not in skip:
            previous = token
    raise ValueError("closing bracket not found")


def _eol(lines: list[str]) -> str:
    for line in lines:
        if line.endswith("\r\n"):
            return "\r\n"
        if line.endswith("\n"):
            return "\n"
    return "\n"


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _insert(lines: list[str], row: int, col: int, text: str) -> None:
    """Insert ``text`` at 1-based ``row``, character ``col``."""
    line = lines[row - 1]
    lines[row - 1] = line[:col] + text + line[col:]


def _append_entry(lines: list[str], source: str, node: ast.List, identifier: str) -> None:
    assert node.end_lineno is not None and node.end_col_offset is not None
    close_row = node.end_lineno
    close_col = _char_col(lines[close_row - 1], node.end_col_offset) - 1
    last = _token_before_close(source, (close_row, close_col))
    eol = _eol(lines)
    if not node.elts:
        # Empty list: open it up, one entry per line with a trailing comma.
        if last.start[0] == close_row:
            indent = _indent_of(lines[close_row - 1])
            _insert(lines, close_row, close_col, f"{eol}{indent}    {identifier},{eol}{indent}")
        else:
            indent = _indent_of(lines[close_row - 1])
            lines.insert(close_row - 1, f"{indent}    {identifier},{eol}")
        return
    trailing = last.string == ","
    if last.end[0] == close_row:
        # The bracket closes on the line of the last entry (e.g. a one-line list).
        entry = f" {identifier}," if trailing else f", {identifier}"
        _insert(lines, last.end[0], last.end[1], entry)
        return
    first = node.elts[-1]
    indent = _indent_of(lines[first.lineno - 1]) or "    "
    if not trailing:
        _insert(lines, last.end[0], last.end[1], ",")
    entry = f"{indent}{identifier}{',' if trailing else ''}{eol}"
    bracket_line = lines[close_row - 1]
    if bracket_line[:close_col].strip():
        # Something precedes the bracket on its line: break the line before the bracket.
        _insert(lines, close_row, close_col, f"{eol}{entry}{_indent_of(bracket_line)}")
    else:
        lines.insert(close_row - 1, entry)


def _import_row(tree: ast.Module, assignment: ast.stmt) -> tuple[int, bool]:
    """The 0-based line index to insert the import at, and whether to set it apart."""
    last_import: ast.stmt | None = None
    for stmt in tree.body:
        if stmt.lineno >= assignment.lineno:
            break
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            last_import = stmt
    if last_import is not None:
        assert last_import.end_lineno is not None
        # A relative import after absolute ones starts its own block (isort style).
        relative = isinstance(last_import, ast.ImportFrom) and last_import.level > 0
        return last_import.end_lineno, not relative
    docstring = tree.body[0] if tree.body and ast.get_docstring(tree) is not None else None
    if docstring is not None and docstring is not assignment:
        assert docstring.end_lineno is not None
        return docstring.end_lineno, True
    return 0, True


def register(source: str, file: str, list_name: str, stem: str, identifier: str) -> str:
    """Return ``source`` with ``identifier`` imported from ``.<stem>`` and appended to the list.

    Args:
        source: the registry module's text.
        file: its path relative to the environment, for messages (``tools/__init__.py``).
        list_name: ``tools`` or ``verifiers``.
        stem: the module stem of the new tool or verifier.
        identifier: the name it binds.

    Raises:
        SiloError: ``registry_not_found`` when the list cannot be found (or the file does not
            parse); ``already_registered`` when ``identifier`` is already there.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise _not_found(file, list_name, identifier, f" (it does not parse: {exc.msg})") from None
    found = _find_list(tree, list_name)
    if found is None:
        raise _not_found(file, list_name, identifier, "")
    if _binds(tree, identifier):
        raise SiloError(
            "already_registered",
            f'"{identifier}" is already registered in {file}.',
            {"file": file, "identifier": identifier},
        )
    assignment, node = found
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += _eol(lines)
    _append_entry(lines, "".join(lines), node, identifier)
    row, blank = _import_row(tree, assignment)
    eol = _eol(lines)
    import_line = f"from .{stem} import {identifier}{eol}"
    block = [import_line]
    if blank:
        # Set the import apart from a docstring above and from the code below.
        if row:
            block.insert(0, eol)
        if row >= len(lines) or lines[row].strip():
            block.append(eol)
    lines[row:row] = block
    result = "".join(lines)
    _check_result(result, file, list_name, identifier)
    return result


def _check_result(result: str, file: str, list_name: str, identifier: str) -> None:
    """Refuse to hand back a registry that lost its shape."""
    try:
        tree = ast.parse(result)
    except SyntaxError:
        raise _not_found(
            file, list_name, identifier, " in a form that can be edited safely"
        ) from None
    found = _find_list(tree, list_name)
    ok = (
        found is not None
        and bool(found[1].elts)
        and isinstance(found[1].elts[-1], ast.Name)
        and found[1].elts[-1].id == identifier
    )
    if not ok:
        raise _not_found(file, list_name, identifier, " in a form that can be edited safely")
