"""The documentation is a site that builds strictly, the README is its front door, and nothing
users read cites a document they do not have.

``mkdocs build --strict`` turns every warning into a failure: a link to a page or an anchor that
does not exist, a page left out of ``mkdocs.yml``'s nav. It builds into a temporary directory,
never into the checkout. The README is read by people on a repository's front page, where mkdocs
does not check it, so its links are checked here.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from silo_async.cli._app import app

from .docs_support import DOCS, README, ROOT, doc_pages, page
from .peers import require_module

#: What the README must stay: a front door, not the guide.
README_MAX_LINES = 400


@pytest.mark.timeout(300)
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    require_module("mkdocs")
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (site / "index.html").exists() and (site / "getting-started" / "index.html").exists()
    assert not (ROOT / "site").exists()


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*([\w-]+\.md)\s*$", nav, re.M))
    unlisted = sorted({p.name for p in DOCS.glob("*.md")} - listed)
    assert unlisted == [], f"add these pages to mkdocs.yml's nav: {unlisted}"
    assert listed <= {p.name for p in DOCS.glob("*.md")}


def test_every_page_starts_with_its_title() -> None:
    for path in doc_pages():
        assert path.read_text(encoding="utf-8").startswith("# "), path


def test_the_readme_is_a_front_door() -> None:
    text = page("README")
    assert len(text.splitlines()) <= README_MAX_LINES
    for heading in ("## Two commands", "## Install by hand", "### Bring your own agent"):
        assert f"\n{heading}" in text
    assert "pip install -e '.[" in text and "mcp_not_installed" in text


def test_the_readme_links_resolve() -> None:
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page("README"))
    local = [t for t in targets if not t.startswith(("http://", "https://"))]
    assert local, "the README links to the docs"
    missing = [t for t in local if not (README.parent / t).exists()]
    assert missing == []
    linked = {Path(t).name for t in local if t.startswith("docs/")}
    unlisted = sorted({p.name for p in DOCS.glob("*.md")} - linked)
    assert unlisted == [], f"add these pages to the README's map of the docs: {unlisted}"


def test_the_home_page_maps_every_page() -> None:
    linked = set(re.findall(r"\]\(([\w-]+\.md)\)", page("index")))
    missing = sorted({p.name for p in DOCS.glob("*.md")} - {"index.md"} - linked)
    assert missing == [], f"link these pages from docs/index.md's map: {missing}"
    assert linked <= {p.name for p in DOCS.glob("*.md")}


def test_no_page_cites_a_document_users_do_not_have() -> None:
    for path in doc_pages():
        text = path.read_text(encoding="utf-8")
        assert "DESIGN" not in text and "§" not in text, path


def _messages(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings: what it can print or raise."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    ]


def _helps(command: click.Command) -> Iterator[str]:
    yield command.help or ""
    yield from (param.help or "" for param in command.params if isinstance(param, click.Option))
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            yield from _helps(sub)


def test_no_message_cites_a_document_users_do_not_have() -> None:
    cited = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "silo_async").rglob("*.py"))
        for line, text in _messages(path)
        if "DESIGN" in text or "§" in text
    ]
    assert cited == []
    assert not [h for h in _helps(app) if "DESIGN" in h or "§" in h]
