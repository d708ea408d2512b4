"""Agent resolution (DESIGN.md section 1): specs, defaults and every error message."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from silo_async.agents._load import AgentLoadError, is_async_callable, load_agent
from silo_async.cli._app import app

AGENT = "async def agent(ctx):\n    return 'ok'\n"


@pytest.fixture(autouse=True)
def _restore_sys_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # load_agent puts agent directories on sys.path; keep the test process clean.
    monkeypatch.setattr(sys, "path", list(sys.path))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_default_is_silo_agent_py_in_cwd(tmp_path: Path) -> None:
    write(tmp_path / "silo_agent.py", AGENT)
    loaded = load_agent(None, tmp_path)
    assert loaded.label == "silo_agent.py:agent"
    assert is_async_callable(loaded.fn)


def test_default_only_that_name(tmp_path: Path) -> None:
    write(tmp_path / "agent.py", AGENT)
    write(tmp_path / "silo.agent.py", AGENT)
    with pytest.raises(AgentLoadError) as info:
        load_agent(None, tmp_path)
    message = str(info.value)
    assert "No --agent given" in message
    assert "./silo_agent.py was not found" in message
    assert str(tmp_path) in message


def test_path_uses_agent_attribute(tmp_path: Path) -> None:
    write(tmp_path / "bots" / "my-bot.py", AGENT)
    loaded = load_agent("bots/my-bot.py", tmp_path)
    assert loaded.label == "bots/my-bot.py:agent"
    # Loaded under a private module name, never as "my-bot" or "bots".
    assert loaded.fn.__module__.startswith("_silo_agent_")


def test_path_with_name(tmp_path: Path) -> None:
    write(tmp_path / "bot.py", "async def solve(ctx):\n    return 1\n")
    loaded = load_agent("./bot.py:solve", tmp_path)
    assert loaded.fn.__name__ == "solve"
    assert loaded.label == "./bot.py:solve"


def test_absolute_path(tmp_path: Path) -> None:
    path = write(tmp_path / "abs_bot.py", AGENT)
    assert load_agent(str(path), tmp_path / "..").fn.__name__ == "agent"


def test_async_callable_object_is_accepted(tmp_path: Path) -> None:
    write(
        tmp_path / "obj.py",
        """
        class Bot:
            async def __call__(self, ctx):
                return "hi"

        agent = Bot()
        """,
    )
    assert load_agent("obj.py", tmp_path).label == "obj.py:agent"


def test_module_spec(tmp_path: Path) -> None:
    pkg = f"cli_agentpkg_{tmp_path.name.replace('-', '_')}"
    write(tmp_path / pkg / "__init__.py", "")
    write(tmp_path / pkg / "bots.py", "async def solve(ctx):\n    return 'x'\n" + AGENT)
    assert load_agent(f"{pkg}.bots:solve", tmp_path).label == f"{pkg}.bots:solve"
    assert load_agent(f"{pkg}.bots", tmp_path).fn.__name__ == "agent"


def test_missing_file_names_path(tmp_path: Path) -> None:
    with pytest.raises(AgentLoadError, match=r'Agent file "nope\.py" was not found'):
        load_agent("nope.py", tmp_path)


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "dir.py").mkdir()
    with pytest.raises(AgentLoadError, match="is a directory, not a file"):
        load_agent("dir.py", tmp_path)


def test_missing_module(tmp_path: Path) -> None:
    with pytest.raises(AgentLoadError, match=r'Agent module "no_such_mod_xyz" could not be'):
        load_agent("no_such_mod_xyz:agent", tmp_path)


def test_missing_attribute_names_what_was_found(tmp_path: Path) -> None:
    write(
        tmp_path / "bot.py",
        """
        import json

        async def solve(ctx):
            return 1

        async def other(ctx):
            return 2
        """,
    )
    with pytest.raises(AgentLoadError) as info:
        load_agent("bot.py", tmp_path)
    message = str(info.value)
    assert 'Agent file "bot.py" has no "agent"' in message
    assert "Async functions found: solve, other" in message
    assert "--agent bot.py:solve" in message
    assert "json" not in message


def test_no_async_callable_lists_what_is_there(tmp_path: Path) -> None:
    write(tmp_path / "bot.py", "def run(ctx):\n    return 1\n\nclass Helper:\n    pass\n")
    with pytest.raises(AgentLoadError) as info:
        load_agent("bot.py", tmp_path)
    message = str(info.value)
    assert "defines no async function" in message
    assert "run (a plain function)" in message
    assert "Helper (a class)" in message


def test_sync_function_is_rejected(tmp_path: Path) -> None:
    write(tmp_path / "silo_agent.py", "def agent(ctx):\n    return 1\n")
    with pytest.raises(AgentLoadError, match="is a plain function; an agent must be a coroutine"):
        load_agent(None, tmp_path)


def test_non_callable_attribute(tmp_path: Path) -> None:
    write(tmp_path / "bot.py", "agent = 42\n")
    with pytest.raises(AgentLoadError, match=r'"agent" in agent file "bot.py" is an int'):
        load_agent("bot.py", tmp_path)


def test_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    write(tmp_path / "bot.py", "async def agent(ctx):\n    return (\n\n")
    with pytest.raises(AgentLoadError) as info:
        load_agent("bot.py", tmp_path)
    message = str(info.value)
    assert 'Agent file "bot.py" has a syntax error' in message
    assert f"{tmp_path / 'bot.py'}:2" in message


def test_import_time_exception(tmp_path: Path) -> None:
    write(tmp_path / "bot.py", "raise RuntimeError('no model server')\n")
    with pytest.raises(AgentLoadError, match="failed to import: RuntimeError: no model server"):
        load_agent("bot.py", tmp_path)


def test_agent_file_imports_its_sibling(tmp_path: Path) -> None:
    helper = f"helper_{tmp_path.name.replace('-', '_')}"
    write(tmp_path / "agents" / f"{helper}.py", "ANSWER = 'sibling'\n")
    write(
        tmp_path / "agents" / "bot.py",
        f"from {helper} import ANSWER\n\nasync def agent(ctx):\n    return ANSWER\n",
    )
    assert load_agent("agents/bot.py", tmp_path).fn.__globals__["ANSWER"] == "sibling"


def test_trailing_colon_and_empty_spec(tmp_path: Path) -> None:
    with pytest.raises(AgentLoadError, match='ends with ":"'):
        load_agent("bot.py:", tmp_path)
    with pytest.raises(AgentLoadError, match="--agent is empty"):
        load_agent("  ", tmp_path)


def load_error(tmp_path: Path, source: str, spec: str = "bot.py") -> str:
    write(tmp_path / "bot.py", source)
    with pytest.raises(AgentLoadError) as info:
        load_agent(spec, tmp_path)
    return str(info.value)


def test_agent_without_a_parameter_is_refused_at_load(tmp_path: Path) -> None:
    message = load_error(tmp_path, "async def agent():\n    return 'x'\n")
    assert message == (
        '"agent" in agent file "bot.py" is `agent()`, which takes no arguments; an agent is '
        "called with one argument, its silo.AgentContext: write `async def agent(ctx): ...`."
    )


def test_agent_requiring_two_arguments_is_refused_at_load(tmp_path: Path) -> None:
    source = """
        from __future__ import annotations

        async def solve(ctx: object, model: str, *, temperature: float, retries: int = 2) -> str:
            return "x"
        """
    message = load_error(tmp_path, source, "bot.py:solve")
    # Annotations are left out of the signature shown: they are noise here.
    assert message == (
        '"solve" in agent file "bot.py" is `solve(ctx, model, *, temperature, retries=2)`, which '
        'also requires "model" and "temperature"; an agent is called with one argument, its '
        "silo.AgentContext: write `async def solve(ctx): ...` (give any other parameter a "
        "default)."
    )


def test_agent_with_a_keyword_only_context_is_refused_at_load(tmp_path: Path) -> None:
    message = load_error(tmp_path, "async def agent(*, ctx):\n    return 'x'\n")
    assert "is `agent(*, ctx)`, which takes no positional argument;" in message


def test_callable_object_without_a_context_parameter_is_refused_at_load(tmp_path: Path) -> None:
    source = """
        class Bot:
            async def __call__(self):
                return "hi"

        agent = Bot()
        """
    message = load_error(tmp_path, source)
    assert message.startswith('"agent" in agent file "bot.py" is `agent()`, which takes no')
    assert message.endswith("write `async def __call__(self, ctx): ...`.")


def test_module_agent_with_a_bad_signature_names_the_module(tmp_path: Path) -> None:
    pkg = f"cli_sigpkg_{tmp_path.name.replace('-', '_')}"
    write(tmp_path / pkg / "__init__.py", "")
    write(tmp_path / pkg / "bots.py", "async def agent(a, b):\n    return 'x'\n")
    with pytest.raises(AgentLoadError, match=rf'"agent" in agent module "{pkg}.bots" is `agent'):
        load_agent(pkg + ".bots", tmp_path)


@pytest.mark.parametrize(
    "signature",
    [
        "ctx",
        "ctx, model='gpt', *, retries=2",
        "*args",
        "ctx, /",
        "*args, **kwargs",
    ],
)
def test_agents_that_can_take_the_context_still_load(tmp_path: Path, signature: str) -> None:
    write(tmp_path / "bot.py", f"async def agent({signature}):\n    return 'x'\n")
    assert load_agent("bot.py", tmp_path).fn.__name__ == "agent"


def test_partial_and_bound_method_agents_are_checked_without_their_bound_arguments(
    tmp_path: Path,
) -> None:
    write(
        tmp_path / "bot.py",
        """
        import functools

        async def solve(model, ctx):
            return model

        class Bot:
            async def answer(self, ctx):
                return "hi"

        agent = functools.partial(solve, "gpt")
        method = Bot().answer
        """,
    )
    assert load_agent("bot.py", tmp_path).label == "bot.py:agent"
    assert load_agent("bot.py:method", tmp_path).label == "bot.py:method"


def test_agent_whose_signature_cannot_be_inspected_still_loads(tmp_path: Path) -> None:
    write(
        tmp_path / "bot.py",
        """
        async def agent():
            return "x"

        # inspect.signature() raises TypeError for this, as for some C-implemented callables.
        agent.__signature__ = "not a signature"
        """,
    )
    assert load_agent("bot.py", tmp_path).fn.__name__ == "agent"


def test_cli_run_refuses_the_agent_before_any_rollout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    fields = ["--title", "t", "--instruction", "i", "--verifier", "VER-1"]
    for args in (
        ["init", "shop"],
        ["task", "add", "T-1", "--env", "shop", *fields],
        ["verifier", "add", "VER-1", "--env", "shop", "--task", "T-1"],
    ):
        assert runner.invoke(app, args).exit_code == 0, args
    write(tmp_path / "bot.py", "async def agent():\n    return 'x'\n")
    result = runner.invoke(app, ["run", "--env", "shop", "--task", "T-1", "--agent", "bot.py"])
    assert result.exit_code == 1
    assert result.stderr.startswith(
        'error: agent_invalid: "agent" in agent file "bot.py" is `agent()`'
    )
    assert not (tmp_path / ".silo" / "runs").exists()  # no rollout was started
