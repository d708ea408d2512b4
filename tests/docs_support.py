"""The user documentation as the tests read it: README.md (the front door) and docs/*.md.

Tests that check what the documentation says (its snippets run, its tables match the code) find
a page by name here, so a page that moves is changed in one place.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def doc_pages() -> list[Path]:
    """README.md, then every page of docs/ in name order."""
    return [README, *sorted(DOCS.glob("*.md"))]


def page_name(path: Path) -> str:
    """A page's short name: ``readme``, or the file's stem (``getting-started``)."""
    return "readme" if path == README else path.stem


def page(name: str) -> str:
    """The text of docs/<name>.md (``"README"``: README.md)."""
    path = README if name == "README" else DOCS / f"{name}.md"
    return path.read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """The body of the section under ``heading`` (a whole line, e.g. ``"## Two commands"``), up
    to the next heading of the same or a higher level (a ``#`` line inside a code fence is none).
    """
    level = len(heading.split(" ", 1)[0])
    lines = text.split(f"\n{heading}\n", 1)[1].split("\n")
    fenced = False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(rf"#{{1,{level}}} ", line):
            return "\n".join(lines[:i])
    return "\n".join(lines)
