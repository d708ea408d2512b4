"""The examples the documentation shows run and pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .docs_support import page
from .peers import extra

EXAMPLES = Path(__file__).parent.parent / "examples"


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("customer.py", "PASS reward=1.00 calls=2"),
        ("profit.py", "PASS reward=1.00 answer='The total profit is 59980.'"),
        ("quickstart.py", "True 1.0 completed"),
        # the crm world played over MCP (stdio)
        pytest.param("mcp_crm.py", "PASS reward=1.00 calls=2", marks=extra("mcp")),
    ],
)
def test_example_runs_and_passes(script: str, expected: str) -> None:
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / script)], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == expected


@pytest.mark.parametrize("name", ["README", "getting-started"])
def test_the_docs_quote_the_quickstart_verbatim(name: str) -> None:
    body = (EXAMPLES / "quickstart.py").read_text().split('"""\n\n', 1)[1]
    assert body.strip() in page(name)
