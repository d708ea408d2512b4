"""Deprecated names: one helper warns for all of them, alike, and the CHANGELOG lists each one.

Every deprecated name of the package goes through ``silo_async._deprecation``: it still imports,
with a ``DeprecationWarning`` naming its replacement and the release that removes it; it is in
no ``__all__``; and the CHANGELOG's "Deprecated" section (under Unreleased) lists it with the
same replacement and release.
"""

from __future__ import annotations

import importlib
import re
import warnings
from pathlib import Path
from types import ModuleType

import pytest

import silo_async
from silo_async import _deprecation

ROOT = Path(silo_async.__file__).resolve().parent
HELPER = Path(_deprecation.__file__).resolve()


def _modules_with_deprecations() -> list[ModuleType]:
    """Every module of the package that declares deprecated names (found in its source)."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.resolve() != HELPER and "DeprecatedNames(" in path.read_text(encoding="utf-8"):
            parts = path.relative_to(ROOT.parent).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found.append(importlib.import_module(name))
    return found


MODULES = _modules_with_deprecations()


def _deprecated() -> dict[str, str]:
    """Every deprecated name, dotted in full, and its replacement."""
    return {
        f"{module.__name__}.{old}": new
        for module in MODULES
        for old, new in module.__deprecated__.items()
    }


def test_the_deprecations_are_found() -> None:
    # A guard on the walk: the renamed error class and the world's flat names are among them.
    assert {m.__name__ for m in MODULES} == {"silo_async", "silo_async.world"}
    assert _deprecated()["silo_async.ToolCallLimitExceeded"] == (
        "silo_async.ToolCallLimitExceededError"
    )
    assert len(_deprecated()) == 79


def test_only_the_helper_warns_of_a_deprecation() -> None:
    # One way to deprecate: no module raises its own DeprecationWarning.
    others = [
        str(path.relative_to(ROOT))
        for path in sorted(ROOT.rglob("*.py"))
        if path.resolve() != HELPER and "DeprecationWarning" in _code_of(path)
    ]
    assert others == []


def _code_of(path: Path) -> str:
    """The file's text without its docstrings and comments' prose (lines starting with #)."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r'""".*?"""', "", text, flags=re.DOTALL)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_a_deprecated_name_is_in_no_all(module: ModuleType) -> None:
    assert not set(module.__all__) & set(module.__deprecated__)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec(f"from {module.__name__} import *", {})  # a star import stays quiet


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_each_deprecated_name_imports_with_one_warning(module: ModuleType) -> None:
    for old, new in module.__deprecated__.items():
        with pytest.warns(DeprecationWarning) as caught:
            value = getattr(module, old)
        home, _, attr = new.rpartition(".")
        assert value is getattr(importlib.import_module(home), attr)
        assert len(caught) == 1
        assert str(caught[0].message) == (
            f"{module.__name__}.{old} is deprecated: use {new} instead; "
            f"{module.__name__}.{old} goes in silo_async {_deprecation.REMOVAL}."
        )
        assert caught[0].filename == __file__  # it points at the line that used the name
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        _ = module.no_such_name


def _changelog_deprecated() -> dict[str, tuple[str, str]]:
    """The CHANGELOG's "Deprecated" table under Unreleased: name -> (replacement, release)."""
    text = (ROOT.parent / "CHANGELOG.md").read_text(encoding="utf-8")
    unreleased = text.split("## Unreleased", 1)[1].split("\n## ", 1)[0]
    section = unreleased.split("### Deprecated", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| `([\w.]+)` \| `([\w.]+)` \| ([\d.]+) \|$", section, re.MULTILINE)
    return {old: (new, removal) for old, new, removal in rows}


def test_the_changelog_lists_each_deprecated_name_its_replacement_and_removal() -> None:
    listed = _changelog_deprecated()
    expected = {old: (new, _deprecation.REMOVAL) for old, new in _deprecated().items()}
    assert listed == expected
