"""``silo-async scripted-model``: serve a scripted model from a file, for ``--base-url``.

It runs :class:`~silo_async.testing.ScriptedModelServer` on 127.0.0.1 with the script a Python
file defines, prints the server's base URL on stdout (one line, so a shell can read it) and
serves until Ctrl-C or SIGTERM. Any model agent can then be pointed at it without writing a
wrapper: ``silo-async run --model openai/scripted --base-url URL``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import click

from ..testing import ModelRequest, ScriptedModelServer
from ..testing._model_script import Script
from ._common import gate_options
from ._errors import fail
from ._types import WholeNumber

__all__ = ["scripted_model"]

#: The attribute a script file's replies are read from unless ``PATH:NAME`` names another.
DEFAULT_ATTRIBUTE = "script"


def _split(spec: str) -> tuple[str, str]:
    # As for --agent: only an identifier after the last colon names an attribute.
    head, sep, tail = spec.rpartition(":")
    if sep and head and tail.isidentifier():
        return head, tail
    return spec, DEFAULT_ATTRIBUTE


def _import(path: Path, shown: str) -> Any:
    """The module at ``path``, imported under a private name (its directory on ``sys.path``)."""
    digest = hashlib.sha1(str(path).encode(), usedforsecurity=False).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"_silo_model_script_{digest}", path)
    if spec is None or spec.loader is None:
        fail("model_script_invalid", f'Script file "{shown}" cannot be imported as Python.')
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # so dataclasses and pickling inside it work
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))  # it may import its sibling helpers
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(spec.name, None)
        fail(
            "model_script_invalid",
            f'Script file "{shown}" failed to import: {type(exc).__name__}: {exc}',
        )
    return module


def load_script(spec: str, cwd: Path) -> Script:
    """The script ``PATH.py[:NAME]`` names: a list of replies or a function of the request.

    Raises:
        CliError: ``model_script_not_found`` (no such file or attribute) or
            ``model_script_invalid`` (it does not import, or holds neither a list nor a function).
    """
    target, attribute = _split(spec)
    path = (cwd / target).resolve()
    if not path.is_file():
        what = "is a directory, not a file" if path.is_dir() else "was not found"
        fail("model_script_not_found", f'Script file "{target}" {what} (looked at {path}).')
    module = _import(path, target)
    if not hasattr(module, attribute):
        public = sorted(n for n in vars(module) if not n.startswith("_"))
        fail(
            "model_script_not_found",
            f'Script file "{target}" has no "{attribute}"; name one of its attributes with '
            f"{target}:NAME (it has: {', '.join(public) or 'nothing public'}).",
        )
    script = getattr(module, attribute)
    if isinstance(script, list | tuple):
        return list(script)
    if callable(script) and not isinstance(script, type):
        return _reporting(script)
    fail(
        "model_script_invalid",
        f'"{attribute}" in "{target}" is a {type(script).__name__}: a script is a list of '
        "replies or a function of the request (ModelRequest -> reply).",
    )


def _reporting(play: Callable[[ModelRequest], Any]) -> Callable[[ModelRequest], Any]:
    """``play``, saying on stderr when it raises (the client only sees a 500)."""

    def reported(request: ModelRequest) -> Any:
        try:
            return play(request)
        except Exception as exc:
            click.echo(
                f"warning: the script raised {type(exc).__name__}: {exc} "
                f"(request {request.index}, answered 500)",
                err=True,
            )
            raise

    return reported


@contextlib.contextmanager
def _stopped_by_signals(stop: Callable[[], None]) -> Iterator[None]:
    """Call ``stop`` on SIGINT (Ctrl-C) or SIGTERM, the usual ways to end a server."""

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop()

    kinds = (signal.SIGINT, signal.SIGTERM)
    previous = {kind: signal.signal(kind, on_signal) for kind in kinds}
    try:
        yield
    finally:
        for kind, handler in previous.items():
            signal.signal(kind, handler)


@click.command("scripted-model", short_help="Serve a scripted model for --base-url.")
@click.argument("script_spec", metavar="SCRIPT.py[:NAME]")
@click.option(
    "--port",
    type=WholeNumber(0, 65535),
    default=0,
    show_default=True,
    help="The port on 127.0.0.1 (0: any free port).",
)
@gate_options
@click.option("--json", "as_json", is_flag=True, help="Print the URLs as one line of JSON.")
def scripted_model(
    script_spec: str, port: int, read_timeout_ms: int, max_connections: int, as_json: bool
) -> None:
    """Serve the replies of a script as a model on 127.0.0.1 until Ctrl-C.

    SCRIPT.py defines `script`: a list of replies (Reply, ErrorReply, str or a raw dict), each
    request taking the next, or a function of the request (ModelRequest -> reply) that can play
    any number of conversations (SCRIPT.py:NAME picks another attribute). The base URL is
    printed on stdout, for `--base-url` (OpenAI-compatible; the Anthropic SDK takes it without
    `/v1`). It keeps no record of the requests it answered, only their count: it can serve
    for days.
    """
    script = load_script(script_spec, Path.cwd())
    server = ScriptedModelServer(
        script,
        port=port,
        history=False,
        read_timeout=read_timeout_ms / 1000,
        max_connections=max_connections,
    )
    try:
        server.start()
    except OSError as exc:
        fail("address_unavailable", f"Cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}.")
    stop = threading.Event()
    try:
        with _stopped_by_signals(stop.set):
            _announce(server, script_spec, as_json)
            stop.wait()
    finally:
        server.stop()
    served = server.served
    click.echo(f"Stopped after {served} request{'' if served == 1 else 's'}.", err=True)
    if server.errors:
        first = server.errors[0]
        fail(
            "model_script_failed",
            f"the script raised {server.failed} time(s); first: {type(first).__name__}: {first}",
        )


def _announce(server: ScriptedModelServer, spec: str, as_json: bool) -> None:
    if as_json:
        line = json.dumps({"baseUrl": server.base_url, "url": server.url, "script": spec})
    else:
        line = server.base_url
    click.echo(line)
    sys.stdout.flush()  # a reader waits for this line before it starts its run
    click.echo(
        f"Serving {spec} as a model. Point an agent at it, e.g.\n"
        f"  silo-async run --env ENV --task TASK --model openai/scripted --base-url "
        f"{server.base_url}\n"
        f"(Anthropic: --model anthropic/scripted --base-url {server.url}). Ctrl-C stops it.",
        err=True,
    )
