"""Usage errors: one ``error: usage_error: ...`` line, and where a misplaced option goes.

Every error the CLI prints is one line ``error: <code>: <message>``; a usage error (a wrong
flag, command or value; exit 2) is no exception: :class:`OneLineUsageError` prints click's
message under the code ``usage_error``, followed by the ``--help`` to read, instead of click's
usage block.

Click alone says "No such option" (and may suggest an unrelated near name) when a
subcommand's option comes before the subcommand (``silo-async task --env demo list``) or a
root option comes after it (``silo-async run ... --backend trio``). These helpers name the
command that owns the option and show where to put it.
"""

from __future__ import annotations

import click

__all__ = [
    "OneLineUsageError",
    "accepts_option",
    "misplaced_option_hint",
    "one_line_usage",
    "root_option_after_command",
]


class OneLineUsageError(click.UsageError):
    """A usage error shown as ``error: usage_error: <click's message> See '... --help'.``.

    Args:
        exc: the usage error click raised (its message and context are kept; exit status 2).
    """

    def __init__(self, exc: click.UsageError) -> None:
        super().__init__(exc.format_message(), exc.ctx)

    def show(self, file: object = None) -> None:
        """Print the one line on stderr (``file`` is ignored: errors always go to stderr)."""
        message = " ".join(self.format_message().split())
        # A hint that already shows the command line to type ("... --env ...") needs no pointer.
        if self.ctx is not None and not message.endswith(" ..."):
            message += f" See '{self.ctx.command_path} --help'."
        click.echo(f"error: usage_error: {message}", err=True)


def one_line_usage(exc: click.UsageError) -> click.UsageError:
    """``exc`` as a one-line usage error; a bare group's help (``silo-async env``) stays help."""
    if isinstance(exc, OneLineUsageError | click.exceptions.NoArgsIsHelpError):
        return exc
    return OneLineUsageError(exc)


def _leaf_for(group: click.Group, args: list[str]) -> tuple[click.Command, list[str]] | None:
    """The command that the names in ``args`` lead to from ``group``, with its name path."""
    command: click.Command = group
    path: list[str] = []
    for arg in args:
        if not isinstance(command, click.Group):
            break
        sub = command.commands.get(arg)
        if sub is not None:
            command, path = sub, [*path, arg]
    return (command, path) if path else None


def accepts_option(command: click.Command, option: str) -> bool:
    """Whether ``command`` itself has ``option`` (``--json``, ``--no-x``...)."""
    return any(
        option in param.opts or option in param.secondary_opts
        for param in command.params
        if isinstance(param, click.Option)
    )


def misplaced_option_hint(
    group: click.Group, command_path: str, option: str, args: list[str]
) -> str | None:
    """How to fix ``option`` given before the subcommand that accepts it, or None."""
    found = _leaf_for(group, args)
    if found is None or not accepts_option(found[0], option):
        return None
    full = " ".join([command_path, *found[1]])
    return (
        f"No such option '{option}' for '{command_path}': it belongs to '{full}'. "
        f"Options go after the command: {full} {option} ..."
    )


def root_option_after_command(
    root: click.Group, exc: click.NoSuchOption
) -> click.NoSuchOption | None:
    """For ``silo-async run ... --backend trio``: say the option goes before the command."""
    if exc.ctx is None or exc.ctx.command is root or not accepts_option(root, exc.option_name):
        return None
    where = exc.ctx.command_path
    prog = exc.ctx.find_root().info_name or "silo-async"
    rest = where[len(prog) :].strip()
    return click.NoSuchOption(
        exc.option_name,
        message=(
            f"No such option '{exc.option_name}' for '{where}': it is an option of '{prog}' "
            f"itself. Put it before the command: {prog} "
            f"{_with_value(root, exc.option_name)} {rest} ..."
        ),
        ctx=exc.ctx,
    )


def _with_value(command: click.Command, option: str) -> str:
    """``--backend asyncio|trio``, ``--traceback``: the option as it would be typed."""
    for param in command.params:
        if isinstance(param, click.Option) and option in param.opts and not param.is_flag:
            if isinstance(param.type, click.Choice):
                return f"{option} {'|'.join(map(str, param.type.choices))}"
            return f"{option} {param.metavar or 'VALUE'}"
    return option
