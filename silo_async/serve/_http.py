"""Many episodes over streamable HTTP, on uvicorn (asyncio).

Startup: refuse a non-loopback host without a token (``serve_unprotected``), bind the socket
(``--port 0``: any free port, known before the first request), open the ``--task`` episode,
announce, serve. The first SIGINT/SIGTERM ends every open episode (``cancelled``, graded and
written) while the server still answers, so a call in flight gets its answer; then uvicorn
stops gracefully, with no request left to cancel (a second signal forces it). uvicorn's own
signal handling is switched off: it would re-raise the signal after its shutdown, before the
episodes are written.
"""

from __future__ import annotations

import contextlib
import ipaddress
import signal
import socket
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import anyio
import uvicorn
from anyio.abc import TaskStatus
from starlette.types import ASGIApp
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from .._environment import Environment
from .._errors import SiloError
from .._faults import Faults
from .._flood import DEFAULT_MAX_CONNECTIONS, DEFAULT_READ_TIMEOUT, check_limits
from .._limits import DEFAULT_LIMITS, Limits
from .._options import RunOptions, resolve_options
from .._result import RunResult
from ._access import Access
from ._app import ServeApp
from ._gate import Gate
from ._host import DEFAULT_KEEP_FINISHED, DEFAULT_MAX_EPISODES, EpisodeHost
from ._lifecycle import STOP_SIGNALS, EndReport, tool_names
from ._server import check_reserved

__all__ = ["gated_config", "is_loopback", "serve_http", "stop_on_signals"]

#: Seconds uvicorn waits for requests in flight once asked to stop, before cancelling them
#: (the episodes have ended by then: what is left is a client still reading its answer).
GRACEFUL_SHUTDOWN_S = 5
#: Seconds an idle keep-alive connection stays open. An agent thinks (a model call) for seconds
#: between tool calls; uvicorn's 5 s default closed connections just as clients reused them, and
#: a POST that meets a closing connection fails (ReadError) rather than being retried.
KEEP_ALIVE_S = 120
#: Connections the kernel queues before the server accepts them (uvicorn's default).
BACKLOG = 2048


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_protected(host: str, token: str | None) -> None:
    """A token a client can send, and one at all off loopback (``serve_unprotected``)."""
    _check_token(token)
    if token or is_loopback(host):
        return
    raise SiloError(
        "serve_unprotected",
        f'Refusing to serve on "{host}" without a token: anyone who can reach it could play '
        "and finish episodes. Pass --token TOKEN (or set SILO_SERVE_TOKEN), or serve on "
        "127.0.0.1.",
        {"host": host},
    )


def _check_token(token: str | None) -> None:
    r"""Refuse a token that is not text (``token_invalid``; the token itself is not shown).

    Bytes that are not UTF-8 (``--token $'\xff'``) reach Python as lone surrogates, which no
    header can carry: every request would be refused, or the server would fail.
    """
    if token is None:
        return
    try:
        token.encode("utf-8")
    except UnicodeEncodeError:
        raise SiloError(
            "token_invalid",
            "The token (--token or SILO_SERVE_TOKEN) is not UTF-8 text, so no client could send "
            "it. Use printable ASCII, e.g. the output of `openssl rand -hex 32`.",
        ) from None


def _bind(host: str, port: int) -> socket.socket:
    """A bound TCP socket (uvicorn listens on it), or ``address_unavailable``."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise _unavailable(host, port, exc) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        # Listening now, not when uvicorn starts: a client that read the startup line may
        # connect at once, and its connection waits in the backlog instead of being refused.
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise _unavailable(host, port, exc) from None
    return sock


def _unavailable(host: str, port: int, exc: OSError) -> SiloError:
    return SiloError(
        "address_unavailable",
        f"Cannot listen on {host}:{port} ({exc.strerror or exc}). Pick another --port "
        "(--port 0: any free port) or --host.",
        {"host": host, "port": port},
    )


def _base_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: :func:`stop_on_signals` stops it instead."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class _Episodes(Protocol):
    """What a server's signals end: its open episodes (an ``EpisodeHost``, a harness's own)."""

    async def close(self) -> None:
        """End every open episode (``cancelled``, graded, written)."""


async def stop_on_signals(
    server: _Server,
    episodes: _Episodes,
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """First signal: end the episodes, then stop gracefully. Second: stop waiting."""
    try:
        with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
            task_status.started()
            async with anyio.create_task_group() as group:
                stopping = False
                async for signum in signals:
                    if not stopping:
                        stopping = True
                        group.start_soon(_shut_down, server, episodes)
                        continue
                    if signum == signal.SIGINT:  # a second Ctrl-C: stop waiting for anything
                        server.force_exit = True
                    server.should_exit = True
    except (NotImplementedError, ValueError):  # no signals here (a non-main thread)
        task_status.started()
        await anyio.sleep_forever()


async def _shut_down(server: _Server, episodes: _Episodes) -> None:
    await episodes.close()
    server.should_exit = True


async def serve_http(
    env: Environment,
    task_id: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    allow_hosts: Sequence[str] = (),
    allow_origins: Sequence[str] = (),
    max_episodes: int = DEFAULT_MAX_EPISODES,
    limits: Limits | None = None,
    max_tool_calls: int = DEFAULT_LIMITS.max_tool_calls,
    timeout: float | None = DEFAULT_LIMITS.timeout,
    token_limit: int | None = DEFAULT_LIMITS.token_limit,
    runs_dir: Path | None = None,
    reveal: Callable[[RunResult], str] | None = None,
    on_end: Callable[[RunResult], None] | None = None,
    on_ready: Callable[[dict[str, Any]], None] | None = None,
    faults: Faults | str | None = None,
    read_timeout: float = DEFAULT_READ_TIMEOUT,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    keep_finished: int = DEFAULT_KEEP_FINISHED,
    options: RunOptions | None = None,
) -> None:
    """Serve episodes of ``env`` over streamable HTTP until SIGINT/SIGTERM (asyncio only).

    Args:
        env: the environment.
        task_id: the task of the episode opened at start (and of ``POST /episodes`` with no
            task).
        host: address to bind (loopback by default).
        port: port to bind (0: any free port).
        token: bearer token every request must carry (required off loopback).
        allow_hosts: ``Host`` values admitted besides loopback names and the bound address.
        allow_origins: ``Origin`` values admitted besides this port's loopback origins.
        max_episodes: episodes open at once, at most (finished ones do not count).
        limits: each episode's limits, as one value (or the three keywords below).
        max_tool_calls: per episode, as for ``run``.
        timeout: seconds per episode from its start (``None``: no limit).
        token_limit: recorded tokens that end an episode (``None``: no limit).
        runs_dir: where run directories go (``None``: nothing written).
        reveal: when given, ``submit`` answers ``reveal(result)`` instead of ``Submitted.``.
        on_end: called with each episode's result when it ends.
        on_ready: called once listening, with ``{"url", "episodes": [{"id", "task", "url"}]}``.
        faults: faults every episode's tool calls meet (a ``silo.Faults`` or a SPEC); each
            episode is run 1 of its task, so the same calls meet the same faults as ``run``.
        read_timeout: seconds a client has to send a request's head and body (from its first
            byte; a connection's first request from its start), else it is disconnected.
        max_connections: connections open at once; one more is answered 503 and closed.
        keep_finished: finished episodes remembered for ``GET /episodes/<id>``; the oldest
            beyond it are forgotten (404 ``episode_not_found``; their run directories stay).
        options: how every episode runs as one :class:`~silo_async.RunOptions` (instead of the
            limit keywords and ``faults``).

    Raises:
        SiloError: ``serve_unprotected``, ``address_unavailable``, ``task_not_found``,
            ``task_invalid``, ``tool_name_reserved`` or ``faults_invalid``, before serving.
        TypeError: ``limits`` beside a keyword that differs from its default (or ``options``
            beside any of the keywords it replaces).
        ValueError: ``max_episodes``, ``max_connections`` below 1, ``keep_finished`` below 0,
            ``read_timeout`` not above 0, or an ``allow_hosts``/``allow_origins`` entry that is
            not a host or an origin.
    """
    how = resolve_options(
        options,
        limits=limits,
        max_tool_calls=max_tool_calls,
        timeout=timeout,
        token_limit=token_limit,
        faults=faults,
    )
    if max_episodes < 1:
        raise ValueError(f"max_episodes must be at least 1, not {max_episodes}.")
    check_limits(read_timeout, max_connections)
    if keep_finished < 0:
        raise ValueError(f"keep_finished must be at least 0, not {keep_finished}.")
    Access.build(port=port, bound=host, allow_hosts=allow_hosts, allow_origins=allow_origins)
    _check_protected(host, token)
    env.verifier_for(env.task(task_id))
    check_reserved(tool_names(env), env.name)
    sock = _bind(host, port)
    with sock:
        bound, bound_port = sock.getsockname()[:2]
        access = Access.build(
            port=bound_port,
            bound=bound,
            token=token,
            allow_hosts=allow_hosts,
            allow_origins=allow_origins,
        )
        episodes = EpisodeHost(
            env,
            _base_url(sock),
            how,
            runs_dir=runs_dir,
            reveal=reveal,
            report=EndReport(on_end),
            max_episodes=max_episodes,
            keep_finished=keep_finished,
        )
        app = ServeApp(episodes, access=access, default_task=task_id)
        gate = Gate(read_timeout, max_connections, BACKLOG)
        server = _Server(_config(app, gate))
        with gate.serving():
            await _serve(server, episodes, task_id, on_ready, sock)


async def _serve(
    server: _Server,
    episodes: EpisodeHost,
    task_id: str,
    on_ready: Callable[[dict[str, Any]], None] | None,
    sock: socket.socket,
) -> None:
    """Open the first episode, announce, serve until a signal stops uvicorn."""
    async with episodes.running(), anyio.create_task_group() as group:
        first = await episodes.open(task_id)
        await group.start(stop_on_signals, server, episodes)
        if on_ready is not None:
            on_ready({"url": episodes.base_url, "episodes": [first.summary()]})
        await server.serve(sockets=[sock])
        await episodes.close()  # uvicorn stopped by itself: end what is open
        group.cancel_scope.cancel()


def gated_config(app: ASGIApp, gate: Gate, **options: Any) -> uvicorn.Config:
    """The uvicorn settings of ``app`` behind ``gate`` (every HTTP server of serve)."""
    defaults: dict[str, Any] = {
        "lifespan": "off",
        "log_level": "warning",
        "access_log": False,
        "backlog": BACKLOG,
        "timeout_keep_alive": KEEP_ALIVE_S,
        # No proxy in front of these servers: X-Forwarded-* mean nothing here.
        "proxy_headers": False,
    }
    # httptools (in the mcp extra) when installed: its parser costs ~150 µs less CPU per call
    # than h11's. The gate wraps whichever uvicorn picks.
    http = gate.protocol(AutoHTTPProtocol)
    return uvicorn.Config(gate.app(app), http=http, **{**defaults, **options})


def _config(app: ServeApp, gate: Gate) -> uvicorn.Config:
    return gated_config(app, gate, timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S)
