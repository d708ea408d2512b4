"""Templates keep only their domain: the plumbing comes from the public toolkit.

``init`` copies a template into a user's project; what it imports from silo_async must be
public (``silo_async``, ``silo_async.world``, ``silo_async.testing``), so library fixes reach
every project made from it, and no template carries its own copy of the toolkit's modules.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from silo_async.templates import list_templates, template_dir

_PRIVATE = re.compile(r"^\s*(?:from|import)\s+silo_async(?:\.\w+)*\._\w*", re.MULTILINE)
_PLUMBING = {"contract.py", "audit.py", "clock.py", "shared.py"}
TEMPLATES = [t.id for t in list_templates()]


@pytest.mark.parametrize("template", TEMPLATES)
def test_templates_import_only_public_silo_async(template: str) -> None:
    root = template_dir(template)
    private = [
        f"{path.relative_to(root)}: {match.group(0).strip()}"
        for path in sorted(root.rglob("*.py"))
        for match in _PRIVATE.finditer(path.read_text(encoding="utf-8"))
    ]
    assert private == []


@pytest.mark.parametrize("template", TEMPLATES)
def test_templates_carry_no_copy_of_the_toolkit(template: str) -> None:
    root = template_dir(template)
    copies = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if p.name in _PLUMBING)
    assert copies == []


def test_the_guard_sees_a_private_import(tmp_path: Path) -> None:
    source = "import silo_async as silo\nfrom silo_async.world._readers import invalid\n"
    assert [m.group(0) for m in _PRIVATE.finditer(source)] == ["from silo_async.world._readers"]
