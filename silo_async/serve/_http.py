"""Many episodes over streamable HTTP, on uvicorn (asyncio).

Startup: refuse a non-loopback host without a token (``serve_unprotected``), bind the socket
(``--port 0``: any free port, known before the first request), open the ``--task`` episode,
announce, serve. The first SIGINT/SIGTERM stops uvicorn gracefully (a second one forces it);
then every open episode ends and is written before :func:`serve_http` returns. uvicorn's own
signal handling is switched off: it would re-raise the signal after its shutdown, before the
episodes are written.
"""

from __future__ import annotations

import contextlib
import ipaddress
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from anyio.abc import TaskStatus
from mcp.server.transport_security import TransportSecuritySettings

from .._environment import Environment
from .._errors import SiloError
from .._result import RunResult
from ._app import LOOPBACK_NAMES, ServeApp
from ._host import EpisodeHost
from ._lifecycle import STOP_SIGNALS, EndReport, tool_names
from ._server import check_reserved

__all__ = ["is_loopback", "serve_http"]

#: Seconds uvicorn waits for requests in flight once asked to stop, before cancelling them.
GRACEFUL_SHUTDOWN_S = 1
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
    if token or is_loopback(host):
        return
    raise SiloError(
        "serve_unprotected",
        f'Refusing to serve on "{host}" without a token: anyone who can reach it could play '
        "and finish episodes. Pass --token TOKEN (or set SILO_SERVE_TOKEN), or serve on "
        "127.0.0.1.",
        {"host": host},
    )


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


def _security(loopback: bool) -> TransportSecuritySettings | None:
    """Host/Origin checks of the MCP endpoints (DNS rebinding), as the SDK sets for loopback."""
    if not loopback:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in LOOPBACK_NAMES],
        allowed_origins=[f"http://{name}:*" for name in LOOPBACK_NAMES],
    )


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: :func:`_stop_on_signals` stops it instead."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def _stop_on_signals(
    server: _Server, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    """First signal: graceful stop. Second: stop waiting for requests in flight."""
    try:
        with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
            task_status.started()
            async for signum in signals:
                if server.should_exit and signum == signal.SIGINT:
                    server.force_exit = True
                server.should_exit = True
    except (NotImplementedError, ValueError):  # no signals here (a non-main thread)
        task_status.started()
        await anyio.sleep_forever()


async def serve_http(
    env: Environment,
    task_id: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    max_tool_calls: int = 100,
    timeout: float | None = 120.0,
    runs_dir: Path | None = None,
    reveal: Callable[[RunResult], str] | None = None,
    on_end: Callable[[RunResult], None] | None = None,
    on_ready: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Serve episodes of ``env`` over streamable HTTP until SIGINT/SIGTERM (asyncio only).

    Args:
        env: the environment.
        task_id: the task of the episode opened at start (and of ``POST /episodes`` with no
            task).
        host: address to bind (loopback by default).
        port: port to bind (0: any free port).
        token: bearer token every request must carry (required off loopback).
        max_tool_calls: per episode, as for ``run``.
        timeout: seconds per episode from its start (``None``: no limit).
        runs_dir: where run directories go (``None``: nothing written).
        reveal: when given, ``submit`` answers ``reveal(result)`` instead of ``Submitted.``.
        on_end: called with each episode's result when it ends.
        on_ready: called once listening, with ``{"url", "episodes": [{"id", "task", "url"}]}``.

    Raises:
        SiloError: ``serve_unprotected``, ``address_unavailable``, ``task_not_found``,
            ``task_invalid`` or ``tool_name_reserved``, before serving.
    """
    _check_protected(host, token)
    env.verifier_for(env.task(task_id))
    check_reserved(tool_names(env), env.name)
    loopback = is_loopback(host)
    sock = _bind(host, port)
    limits = {"max_tool_calls": max_tool_calls, "timeout": timeout}
    episodes = EpisodeHost(
        env, _base_url(sock), limits, runs_dir, reveal, EndReport(on_end), _security(loopback)
    )
    app = ServeApp(episodes, token=token, default_task=task_id, loopback=loopback)
    config = uvicorn.Config(
        app,
        lifespan="off",
        log_level="warning",
        access_log=False,
        backlog=BACKLOG,
        timeout_keep_alive=KEEP_ALIVE_S,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        # httptools (in the mcp extra) when installed: its parser costs ~150 µs less CPU per
        # call than h11's. No proxy in front of this server: X-Forwarded-* mean nothing here.
        http="auto",
        proxy_headers=False,
    )
    server = _Server(config)
    with sock:
        async with episodes.running(), anyio.create_task_group() as group:
            first = await episodes.open(task_id)
            await group.start(_stop_on_signals, server)
            if on_ready is not None:
                on_ready({"url": episodes.base_url, "episodes": [first.summary()]})
            await server.serve(sockets=[sock])
            group.cancel_scope.cancel()
