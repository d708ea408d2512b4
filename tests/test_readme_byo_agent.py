""" "Bring your own agent" (README and Getting started): the agent file as printed fails as the
page says, and the ``log_activity`` call it describes makes it pass. The agent is read from the
page itself, so the two cannot drift apart, and the README prints the same section.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from .cli_support import cli
from .docs_support import page, section

SECTION = section(page("getting-started"), "### Bring your own agent")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "demo", "--template", "crm").exit_code == 0
    agent = re.search(r"```python\n(# my_agent\.py\n.*?)```", SECTION, re.S)
    assert agent is not None, "the page's my_agent.py block"
    (tmp_path / "my_agent.py").write_text(agent.group(1), encoding="utf-8")
    return tmp_path


def test_the_printed_agent_fails_as_the_readme_says(project: Path) -> None:
    result = cli("run", "--env", "demo", "--task", "TASK-004", "--agent", "./my_agent.py")
    assert result.exit_code == 1
    said = re.search(r"This run FAILS with reward (\d\.\d\d):", SECTION)
    assert said is not None, "the page says what the run scores"
    assert f"Reward      {said.group(1)}" in result.stdout
    assert "✗ a completed note was added to the deal" in result.stdout


def test_the_log_activity_call_it_describes_makes_it_pass(project: Path) -> None:
    hint = SECTION.split("Add a `log_activity` call (", 1)[1].split(") and it PASSES", 1)[0]
    fields = dict(re.findall(r"`(\w+): ([^`]+)`", " ".join(hint.split())))
    assert set(fields) == {"type", "subject", "relatedType", "relatedId", "actorId"}
    arguments = ", ".join(f'"{name}": {value}' for name, value in fields.items())
    agent = project / "my_agent.py"
    body = agent.read_text(encoding="utf-8")
    call = f'    await ctx.call_tool("log_activity", {{{arguments}}})\n'
    agent.write_text(body.replace("    if won.is_error:", call + "    if won.is_error:"))
    result = cli("run", "--env", "demo", "--task", "TASK-004", "--agent", "./my_agent.py")
    assert result.exit_code == 0, result.output
    assert "Result      PASS" in result.stdout and "Reward      1.00" in result.stdout


def test_the_readme_prints_the_same_first_agent() -> None:
    readme = section(page("README"), "### Bring your own agent")
    assert readme.replace("docs/", "") == SECTION
