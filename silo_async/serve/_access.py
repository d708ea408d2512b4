"""Who may talk to the HTTP server: the Host and Origin checks, and the bearer token.

On every bind, not only loopback (the MCP spec's MUST for streamable
HTTP, against DNS rebinding and cross-site requests from a browser):

* ``Host`` must name a loopback host (``127.0.0.1``, ``localhost``, ``[::1]``), the bound
  address, or a host given with ``--allow-host`` (``name`` admits any port, ``name:port`` only
  that one); else 421 ``host_not_allowed``.
* ``Origin``, when present, must be a loopback origin for this server's port
  (``http://127.0.0.1:PORT``, ``http://localhost:PORT``, ``http://[::1]:PORT``) or one given with
  ``--allow-origin`` (scheme, host and port compared; default ports filled in); else 403
  ``origin_not_allowed``. A request without ``Origin`` (any non-browser client) is accepted.
* With a token, ``Authorization: Bearer TOKEN`` (compared in constant time); else 401.

The checks run in that order: a rebinding page is refused whether or not it knows the token.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Iterable

import attrs
from starlette.types import Scope

__all__ = ["LOOPBACK_NAMES", "Access", "Refusal"]

#: Host names that always mean this machine.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

#: ``host[:port]``: a bracketed IPv6 address or a plain name; the port digits only.
_AUTHORITY = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9._~%!$&'()*+,;=-]+)(?::([0-9]{1,5}))?")
_DEFAULT_PORTS = {"http": 80, "https": 443}
#: The request headers the checks read.
_CHECKED = frozenset((b"authorization", b"host", b"origin"))

_Origin = tuple[str, str, int]


@attrs.frozen
class Refusal:
    """A request the access checks refuse: the status, error code and message to answer."""

    status: int
    code: str
    message: str


def _authority(value: str) -> tuple[str, int | None] | None:
    """``(host, port)`` of ``host[:port]`` (host lowercased), or ``None`` when malformed."""
    match = _AUTHORITY.fullmatch(value.lower())
    if match is None:
        return None
    port = match.group(2)
    return match.group(1), int(port) if port is not None else None


def _origin(value: str) -> _Origin | None:
    """``(scheme, host, port)`` of ``scheme://host[:port]``, or ``None`` when malformed."""
    scheme, sep, rest = value.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in _DEFAULT_PORTS:
        return None
    parsed = _authority(rest)
    if parsed is None:
        return None
    host, port = parsed
    return scheme, host, port if port is not None else _DEFAULT_PORTS[scheme]


def _host_name(host: str) -> str:
    """``host`` as it appears in a Host header (IPv6 addresses in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host.lower()


@attrs.frozen
class Access:
    """The access checks of one server.

    Args:
        port: the port the server listens on (for the loopback origins).
        bound: the address it is bound to (a Host naming it is accepted).
        token: the bearer token every request needs (``None``: none).
        allow_hosts: further ``Host`` values (``name`` or ``name:port``).
        allow_origins: further ``Origin`` values (``scheme://host[:port]``).
    """

    _hosts: frozenset[str]
    _host_ports: frozenset[tuple[str, int]]
    _origins: frozenset[_Origin]
    _auth: bytes | None

    @classmethod
    def build(
        cls,
        *,
        port: int,
        bound: str,
        token: str | None = None,
        allow_hosts: Iterable[str] = (),
        allow_origins: Iterable[str] = (),
    ) -> Access:
        """The checks for a server on ``bound:port``.

        Raises:
            ValueError: an ``allow_hosts`` or ``allow_origins`` entry is not a host or an
                origin.
        """
        hosts = {*LOOPBACK_NAMES, _host_name(bound)}
        host_ports: set[tuple[str, int]] = set()
        for given in allow_hosts:
            parsed = _authority(given.strip())
            if parsed is None:
                raise _bad("allow_hosts", given, "a host name or address, optionally with :PORT")
            if parsed[1] is None:
                hosts.add(parsed[0])
            else:
                host_ports.add((parsed[0], parsed[1]))
        origins = {("http", name, port) for name in LOOPBACK_NAMES}
        for given in allow_origins:
            origin = _origin(given.strip().rstrip("/"))
            if origin is None:
                raise _bad("allow_origins", given, "an origin such as https://app.example:8443")
            origins.add(origin)
        auth = f"Bearer {token}".encode() if token else None
        return cls(frozenset(hosts), frozenset(host_ports), frozenset(origins), auth)

    def refusal(self, scope: Scope) -> Refusal | None:
        """Why the request of ``scope`` is refused, or ``None`` when it may go on."""
        found: dict[bytes, bytes] = {}
        for key, value in scope["headers"]:
            if key in _CHECKED and key not in found:
                found[key] = value
        host = found.get(b"host")
        if host is not None and not self._host_allowed(host.decode("latin-1")):
            shown = host.decode("latin-1")
            return Refusal(
                421,
                "host_not_allowed",
                f'Host "{shown}" is not this server. Reach it by a loopback name or its own '
                "address, or start it with --allow-host HOST.",
            )
        origin = found.get(b"origin")
        if origin is not None and _origin(origin.decode("latin-1")) not in self._origins:
            shown = origin.decode("latin-1")
            return Refusal(
                403,
                "origin_not_allowed",
                f'Origin "{shown}" may not call this server; start it with --allow-origin '
                "ORIGIN to admit a web page.",
            )
        if self._auth is not None and not hmac.compare_digest(
            found.get(b"authorization", b""), self._auth
        ):
            return Refusal(
                401,
                "unauthorized",
                "This server needs the header 'Authorization: Bearer <token>' "
                "(the token it was started with: --token or SILO_SERVE_TOKEN).",
            )
        return None

    def _host_allowed(self, value: str) -> bool:
        parsed = _authority(value)
        if parsed is None:
            return False
        host, port = parsed
        return host in self._hosts or (port is not None and (host, port) in self._host_ports)


def _bad(name: str, given: str, wanted: str) -> ValueError:
    return ValueError(f'{name}: "{given}" is not {wanted}.')
