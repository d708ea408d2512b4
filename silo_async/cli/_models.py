"""``--model [LABEL=]PROVIDER/MODEL``, ``--base-url``, ``--max-turns`` and ``--user-model``.

The model flags of ``run`` and ``eval``: model agents, and the model that plays a conversational
task's user (``--user-model PROVIDER/MODEL``, ``--user-base-url URL``, default ``--base-url``).

A model agent is built with :func:`silo_async.agents.from_spec`; its failures (an unknown
provider, a malformed spec, a missing SDK or key) are ``SiloError("model_invalid")``, printed
as ``error: model_invalid: ...`` like any other expected failure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from .._errors import SiloError
from .._task import Task
from ..agents._load import AgentLoadError
from ._types import WholeNumber

__all__ = [
    "check_model_flags",
    "model_agents",
    "model_options",
    "note_unused_user_model",
    "user_factory",
    "user_options",
]

F = TypeVar("F", bound=Callable[..., Any])


def model_options(*, repeatable: bool) -> Callable[[F], F]:
    """The model flags: ``--model`` (repeatable on eval), ``--base-url``, ``--max-turns``."""
    help_text = (
        "A model agent, PROVIDER/MODEL (openai, openai-responses or anthropic; "
        "OpenAI-compatible servers are openai/MODEL with --base-url), optionally LABEL=..."
    )
    if repeatable:
        help_text += " (repeatable, beside --agent; label default: PROVIDER/MODEL)."

    def decorate(fn: F) -> F:
        fn = click.option(
            "--max-turns",
            type=WholeNumber(min=1),
            default=None,
            help="Model responses per rollout before the loop stops (default 50).",
        )(fn)
        fn = click.option(
            "--base-url",
            default=None,
            metavar="URL",
            help="The model server (vLLM, Ollama, a proxy...); it needs no API key.",
        )(fn)
        return click.option(
            "--model",
            "model_specs" if repeatable else "model_spec",
            multiple=repeatable,
            default=None,
            metavar="[LABEL=]PROVIDER/MODEL",
            help=help_text,
        )(fn)

    return decorate


def check_model_flags(
    models: Sequence[str],
    base_url: str | None,
    max_turns: int | None,
    user_model: str | None = None,
) -> None:
    """``--base-url`` and ``--max-turns`` only mean something with ``--model`` (usage error).

    ``--base-url`` also serves ``--user-model`` (it is the model user's server by default).
    """
    if models:
        return
    flags: list[tuple[str, object]] = [("--max-turns", max_turns)]
    if user_model is None:
        flags.insert(0, ("--base-url", base_url))
    for flag, value in flags:
        if value is not None:
            raise click.UsageError(f"{flag} applies to model agents; add --model PROVIDER/MODEL.")


def user_options(fn: F) -> F:
    """``--user-model PROVIDER/MODEL`` and ``--user-base-url URL``."""
    fn = click.option(
        "--user-base-url",
        default=None,
        metavar="URL",
        help="The model user's server (default: --base-url).",
    )(fn)
    return click.option(
        "--user-model",
        default=None,
        metavar="PROVIDER/MODEL",
        help="A model plays the user of conversational tasks (default: each task's script).",
    )(fn)


def user_factory(
    user_model: str | None, user_base_url: str | None, base_url: str | None
) -> Callable[..., Any] | None:
    """The ``user=`` of ``--user-model`` (``None``: each task's scripted user).

    Raises:
        click.UsageError: ``--user-base-url`` without ``--user-model``.
        SiloError: ``model_invalid`` (bad spec, unknown provider, missing SDK or key).
    """
    if user_model is None:
        if user_base_url is not None:
            raise click.UsageError(
                "--user-base-url applies to a model user; add --user-model PROVIDER/MODEL."
            )
        return None
    from ..users import model_user  # imports an SDK: only when --user-model is used

    try:
        return model_user(user_model, user_base_url or base_url)
    except SiloError as exc:
        # The SDK's message names the agents' flag; a model user's server is --user-base-url.
        if exc.code != "model_invalid" or "(--base-url)" not in exc.message:
            raise
        message = exc.message.replace("(--base-url)", "(--user-base-url, or --base-url)")
        raise SiloError(exc.code, message, exc.details) from None


def note_unused_user_model(user_model: str | None, tasks: Sequence[Task]) -> None:
    """Say once, on stderr, which tasks ``--user-model`` does not play (those without a user)."""
    if user_model is None:
        return
    without = [t.id for t in tasks if t.user is None]
    if not without:
        return
    if len(without) == len(tasks):
        which = f"task {without[0]} has no user" if len(tasks) == 1 else "no task here has a user"
        click.echo(
            f"note: --user-model is not used: {which} (it plays the user of tasks that "
            "declare one).",
            err=True,
        )
        return
    click.echo(
        f"note: --user-model plays the user of {len(tasks) - len(without)} of {len(tasks)} "
        f"tasks; the others have no user ({', '.join(without[:5])}"
        f"{', ...' if len(without) > 5 else ''}).",
        err=True,
    )


def model_agents(
    specs: Sequence[str],
    base_url: str | None,
    max_turns: int | None,
    agents: dict[str, Callable[..., Any]] | None = None,
) -> dict[str, Callable[..., Any]]:
    """``agents`` (default: none) followed by the ``--model`` agents, as ``{label: agent}``.

    Raises:
        SiloError: ``model_invalid`` (bad spec, unknown provider, missing SDK or key).
        AgentLoadError: two agents get the same label.
    """
    from ..agents import from_spec  # the factories import an SDK: only when --model is used
    from ..agents._spec import parse_model_spec

    options: dict[str, Any] = {"base_url": base_url}
    if max_turns is not None:
        options["max_turns"] = max_turns
    built = dict(agents or {})
    for spec in specs:
        parsed = parse_model_spec(spec, allow_label=True)
        if parsed.name in built:
            raise AgentLoadError(
                f'Two agents are labelled "{parsed.name}"; name them with --agent LABEL=PATH '
                "or --model LABEL=PROVIDER/MODEL."
            )
        built[parsed.name] = from_spec(f"{parsed.provider}/{parsed.model}", **options)
    return built
