"""Every ```python block of the documentation (README.md, docs/*.md) runs as given, each in a
fresh interpreter.

A block is pasted into a file in an empty directory and run with the repository (and
``examples/``, which blocks may import, as the docs say) importable. Nothing a block needs
may come from outside it: no network, no model server but the ``ScriptedModelServer`` a block
starts itself. A block that is deliberately not a program (a listing of an API, a file's body
that only works inside an environment package) is marked by ``<!-- fragment -->`` on the line
right before its fence; the set of such blocks is pinned below, so a new one is a decision. A
block printed on two pages (the README's first agent is also Getting started's) runs once.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs
import pytest

from .docs_support import ROOT, doc_pages, page_name
from .peers import extra, has_extra, peer_python

FRAGMENT = "<!-- fragment -->"
# Blocks that are not programs on their own, each for a reason its page states next to it.
FRAGMENTS = {
    "agents/the-agent-contract",  # a listing of AgentContext
    "cli/walkthrough-from-an-empty-directory-to-a-passing-run-1",  # tools/block_customer.py
    "cli/walkthrough-from-an-empty-directory-to-a-passing-run-2",  # verifiers/ver_001.py
    "training/hand-the-world-to-trl",  # needs a GPU-sized model; tests/test_trl.py's adapter
    "rl-tokens/any-agent-can-record-them",  # a call inside an agent; tests/test_token_ids.py
    "harnesses/use-a-world-from-your-harness-4",  # NeMo Gym's app.py: Gym runs it, execs serve
    "harnesses/use-a-world-from-your-harness-5",  # verifiers: its own virtualenv (mcp==2.0.0)
}
#: ``<!-- peer: NAME -->`` before a fence: a client run in peer virtualenv ``.peers/NAME``,
#: against ``serve --protocol NAME`` on a crm environment, its URL as the one argument.
PEER = re.compile(r"<!-- peer: ([a-z-]+) -->")
PEER_BLOCKS = {"harnesses/use-a-world-from-your-harness-2": "openenv"}
# Generous: a block is a few imports and a few rollouts; this only stops a hung one.
TIMEOUT_S = 120


@attrs.frozen
class Block:
    """One ```python block: its test id (``page/section``), its page, first line and code."""

    id: str
    page: str
    line: int
    code: str
    fragment: bool
    peer: str | None = None


def _slug(heading: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", heading.lower().replace("`", ""))
    return words.strip("-")


def page_blocks(text: str, page: str = "readme") -> list[Block]:
    """The ```python blocks of ``text``, named ``page/section`` (``-2`` for the second)."""
    lines = text.splitlines()
    found: list[tuple[str, int, str, bool, str | None]] = []
    section, i = page, 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"#{1,6} ", line):
            section = _slug(line.lstrip("#"))
        elif line.startswith("```"):  # any fence: a "#" inside one is no heading
            end = lines.index("```", i + 1)
            if line.strip() == "```python":
                before = lines[i - 1].strip() if i > 0 else ""
                marked = PEER.fullmatch(before)
                code = "\n".join(lines[i + 1 : end]) + "\n"
                peer = marked.group(1) if marked else None
                found.append((section, i + 2, code, before == FRAGMENT, peer))
            i = end
        i += 1
    counts: dict[str, int] = {}
    for name, *_ in found:
        counts[name] = counts.get(name, 0) + 1
    seen: dict[str, int] = {}
    blocks = []
    for name, line_no, code, fragment, peer in found:
        seen[name] = seen.get(name, 0) + 1
        block_id = name if counts[name] == 1 else f"{name}-{seen[name]}"
        blocks.append(Block(f"{page}/{block_id}", page, line_no, code, fragment, peer))
    return blocks


def _all_blocks() -> list[Block]:
    blocks = []
    for path in doc_pages():
        blocks += page_blocks(path.read_text(encoding="utf-8"), page_name(path))
    return blocks


def _programs(blocks: list[Block]) -> list[Block]:
    """The blocks that are programs, each code once (its first page's copy)."""
    seen: set[str] = set()
    programs = []
    for block in blocks:
        if not block.fragment and block.peer is None and block.code not in seen:
            seen.add(block.code)
            programs.append(block)
    return programs


BLOCKS = _all_blocks()
PROGRAMS = _programs(BLOCKS)


def _environment(tmp: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.pop("RAY_ADDRESS", None)
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "examples")]),
        PYTHONDONTWRITEBYTECODE="1",  # importing examples/ must leave nothing in the checkout
        TMPDIR=tmp,
        # The docs' factories read keys from the environment when they are made; no block
        # sends a request anywhere but to its own ScriptedModelServer.
        OPENAI_API_KEY="sk-readme-snippet-not-used",
        ANTHROPIC_API_KEY="sk-ant-readme-snippet-not-used",
    )
    return env


def _run(block: Block, cwd: Path) -> subprocess.CompletedProcess[str]:
    cwd.mkdir(parents=True)
    script = cwd / "snippet.py"
    script.write_text(block.code, encoding="utf-8")
    # A short TMPDIR of its own: Ray puts its sockets there, and a unix socket's path must be
    # shorter than 108 bytes, which pytest's temporary directories are not.
    with tempfile.TemporaryDirectory(prefix="docs-", ignore_cleanup_errors=True) as tmp:
        return subprocess.run(
            [sys.executable, str(script)],
            cwd=cwd,
            env=_environment(tmp),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )


#: What in a block's code needs an optional extra: without it, the block's test skips.
NEEDS = (
    (re.compile(r"\binspect_ai\b"), "inspect"),
    (re.compile(r"openai", re.IGNORECASE), "openai"),
    (re.compile(r"agents\.anthropic\(|\banthropic/"), "anthropic"),
    (re.compile(r"\bRayExecutor\b|\bexecutor=\"ray\""), "ray"),
    (re.compile(r"\bfrom mcp\b|\bimport mcp\b|\"serve\""), "mcp"),
    (re.compile(r"\"--protocol\", \"(openenv|nemo-gym)\""), "harness-servers"),
)


def extras_of(block: Block) -> list[str]:
    """The optional extras ``block`` needs to run."""
    return sorted({name for pattern, name in NEEDS if pattern.search(block.code)})


def _selected(items: list[pytest.Item]) -> set[str]:
    """The ids of the blocks this session tests (all, or those ``-k`` or a node id picked)."""
    ids = set()
    for item in items:
        callspec = getattr(item, "callspec", None)
        block = None if callspec is None else callspec.params.get("block")
        if isinstance(block, Block):
            ids.add(block.id)
    return ids


@pytest.fixture(scope="module")
def outcomes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, subprocess.CompletedProcess[str]]:
    """Run the selected blocks two at a time (the machine has two cores); results by block id."""
    wanted = _selected(request.session.items)
    base = tmp_path_factory.mktemp("docs")
    todo = [b for b in PROGRAMS if b.id in wanted and all(map(has_extra, extras_of(b)))]
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = pool.map(lambda b: _run(b, base / b.id.replace("/", "--")), todo)
        return {b.id: outcome for b, outcome in zip(todo, done, strict=True)}


@pytest.mark.parametrize(
    "block", [pytest.param(b, id=b.id, marks=[extra(x) for x in extras_of(b)]) for b in PROGRAMS]
)
@pytest.mark.timeout(900)  # the first one waits for all of them (the module's fixture)
def test_docs_block_runs(
    block: Block, outcomes: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    out = outcomes[block.id]
    assert out.returncode == 0, (
        f"{block.page} line {block.line} ({block.id}) exited {out.returncode}:\n"
        f"{out.stdout}\n{out.stderr}"
    )


def test_fragments_are_the_pinned_few() -> None:
    assert {b.id for b in BLOCKS if b.fragment} == FRAGMENTS
    assert {b.id: b.peer for b in BLOCKS if b.peer} == PEER_BLOCKS
    assert len(PROGRAMS) >= 10  # the extractor really finds the pages' blocks
    assert {b.page for b in PROGRAMS} >= {"readme", "agents", "models", "users", "worlds"}


def test_walkthrough_fragments_are_the_files_its_test_runs() -> None:
    """The walkthrough's two file bodies are fragments here, and run by its own test."""
    from tests.test_cli_walkthrough import TOOL, VERIFIER

    by_id = {b.id: b.code for b in BLOCKS}
    walkthrough = "cli/walkthrough-from-an-empty-directory-to-a-passing-run"
    assert by_id[f"{walkthrough}-1"] in TOOL
    assert by_id[f"{walkthrough}-2"] in VERIFIER


def test_extractor_names_sections_and_honours_the_marker() -> None:
    text = (
        "## Two `words`\n```python\nprint(1)\n```\n```console\n# not a heading\n```\n"
        f"{FRAGMENT}\n```python\nx.y\n```\n### Other\n```python\npass\n```\n```console\nls\n```\n"
    )
    got = [(b.id, b.line, b.code, b.fragment) for b in page_blocks(text, "p")]
    assert got == [
        ("p/two-words-1", 3, "print(1)\n", False),
        ("p/two-words-2", 10, "x.y\n", True),
        ("p/other", 14, "pass\n", False),
    ]


def test_a_block_on_two_pages_runs_once() -> None:
    one = page_blocks("## A\n```python\nprint(1)\n```\n", "one")
    two = page_blocks("## B\n```python\nprint(1)\n```\n```python\nprint(2)\n```\n", "two")
    assert [b.id for b in _programs(one + two)] == ["one/a", "two/b-2"]


@pytest.fixture(scope="module")
def crm_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("peer-docs")
    init = [sys.executable, "-m", "silo_async", "init", "crm", "--template", "crm"]
    subprocess.run(init, cwd=project, env=_environment(str(project)), check=True, timeout=60)
    return project


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.peer], ids=lambda b: b.id)
@pytest.mark.timeout(240)
def test_peer_block_runs_against_serve(block: Block, crm_project: Path) -> None:
    """A peer's client as the page prints it, in that peer's own virtualenv, against serve."""
    assert block.peer is not None
    python = peer_python(block.peer)
    serve = [sys.executable, "-m", "silo_async", "serve", "--env", "crm", "--protocol"]
    with subprocess.Popen(
        [*serve, block.peer, "--port", "0", "--json"],
        cwd=crm_project,
        env=_environment(str(crm_project)),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as server:
        try:
            assert server.stdout is not None
            url = json.loads(server.stdout.readline())["url"]
            script = crm_project / f"{block.peer}_client.py"
            script.write_text(block.code, encoding="utf-8")
            done = subprocess.run(
                [str(python), str(script), url],
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                check=False,
            )
        finally:
            server.terminate()
    assert done.returncode == 0, f"{block.page} line {block.line}:\n{done.stdout}\n{done.stderr}"
    printed = [line.split("  # ")[1] for line in block.code.splitlines() if "print(" in line]
    assert done.stdout.splitlines() == printed  # what the comments say it prints
