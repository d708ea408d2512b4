"""This process's connection to Ray: a fresh local Ray, a cluster joined, or one already there.

Ray's defaults are handled here, explicitly:

* ``address=None`` starts a **fresh local** Ray (``ray.init(address="local")``): never the cluster
  ``RAY_ADDRESS`` names, never a stale one recorded under ``/tmp/ray`` (a plain ``ray.init()``
  joins those, and hangs for minutes when the recorded head is gone).
* That local Ray listens on loopback only (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, Ray's own
  single-machine mode) and uses token auth (Ray's default for a new local cluster, unless
  ``RAY_AUTH_MODE`` says otherwise) with a random token of this process in ``RAY_AUTH_TOKEN``,
  so Ray writes none to ``~/.ray``. The token is one per process: Ray caches the token it read.
  No dashboard, no usage stats, no worker output on our stdout (it would corrupt ``--json``),
  Ray's logger at ERROR, workers at the driver's niceness (Ray's default is 15). (The raylet's
  own messages to the driver, "a worker died...", Ray prints to stdout unconditionally: the CLI
  keeps stdout for its result while an eval runs, see ``cli/_eval.py``.)

Only Ray's public API is used: ``ray.init``'s documented arguments, and for everything else the
environment variables Ray documents as its configuration (usage stats, token auth, worker
niceness, the loopback mode). Environment variables are the one way: Ray's head processes
(GCS, raylet) are started by ``ray.init`` with the driver's environment, and ``ray.init`` takes
no setting for them. They are set for the session's length, from the thread that starts Ray,
and put back when it ends. Ray reads ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` once, when it is
first imported, and offers no way to change it later: so silo_async imports Ray for a local
session only once that variable is set (:func:`require_ray` checks that Ray is installed
without importing it). A process that imported Ray itself before (or joined a cluster first)
gets Ray's default instead: the node's own address, still token-protected.
* Joining (``HOST:PORT``, or ``auto`` = ``RAY_ADDRESS``) probes the address first: ``ray.init``
  on an address where nothing listens waits for minutes.
* ``ray.init`` runs in a thread of its own that lives as long as the session: Ray stops working
  when the thread that initialised it exits (measured with Ray 2.60), and a start of 3-14 s must
  not freeze the event loop.

Environment variables set for the session are put back when it is shut down.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import secrets
import socket
import sys
import threading
import time
from types import ModuleType
from typing import Any

from ..._errors import SiloError
from ..._install import install_line

__all__ = ["INSTALL", "RaySession", "import_ray", "parse_address", "require_ray", "resolve_join"]

#: The fix named when Ray is missing.
INSTALL = install_line("ray")
#: How long joining a cluster may take before we give up (a live head answers in seconds).
JOIN_TIMEOUT_S = 120.0
#: How long the address probe may take.
PROBE_TIMEOUT_S = 5.0

_TOKEN = secrets.token_hex(32)
_TOKEN_VARIABLES = ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def _local_env() -> dict[str, str | None]:
    values: dict[str, str | None] = {
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # loopback addresses only (Ray's laptop mode)
        "RAY_USAGE_STATS_ENABLED": "0",
        # Ray starts workers at niceness 15: on a busy machine they would starve beside the
        # local executor's single process. Rollouts are the work, not background chores.
        "RAY_worker_niceness": "0",
        "RAY_ADDRESS": None,
        "RAY_AUTH_MODE": os.environ.get("RAY_AUTH_MODE"),  # Ray sets it to token: put it back
    }
    if not any(os.environ.get(name) for name in _TOKEN_VARIABLES):
        values["RAY_AUTH_TOKEN"] = _TOKEN
    return values


def _missing(why: str) -> SiloError:
    return SiloError(
        "executor_unavailable",
        f"The Ray executor needs Ray, which is not installed ({why}); install it with "
        f"{INSTALL} (or run without --executor ray).",
    )


def require_ray() -> None:
    """``executor_unavailable`` naming the pip line unless Ray can be imported (not imported)."""
    if sys.modules.get("ray") is not None:
        return
    try:
        found = "ray" not in sys.modules and importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):  # a broken installation: as if there were none
        found = False
    if not found:  # not installed, or its import blocked (None in sys.modules)
        raise _missing("No module named 'ray'")


def import_ray() -> ModuleType:
    """``import ray``, or ``executor_unavailable`` naming the pip line."""
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise _missing(str(exc)) from None


def parse_address(address: str | None) -> str | None:
    """Check ``address``: None, ``auto`` or ``HOST:PORT``; returns it stripped.

    Raises:
        SiloError: ``executor_invalid`` for anything else.
    """
    if address is None:
        return None
    text = address.strip() if isinstance(address, str) else ""
    if text == "auto":
        return text
    host, sep, port = text.rpartition(":")
    if sep and host and port.isdigit() and 0 < int(port) < 65536 and "/" not in host:
        return text
    raise SiloError(
        "executor_invalid",
        f"Ray address {address!r} is not auto or HOST:PORT; pass the address `ray start --head` "
        "printed (e.g. 10.0.0.5:6379), or auto to join the cluster RAY_ADDRESS names.",
    )


def resolve_join(address: str | None) -> str | None:
    """The address to join: ``auto`` becomes ``RAY_ADDRESS`` (None: start a local Ray).

    Raises:
        SiloError: ``executor_invalid`` for ``auto`` without ``RAY_ADDRESS``.
    """
    if address != "auto":
        return address
    named = os.environ.get("RAY_ADDRESS", "").strip()
    if not named:
        raise SiloError(
            "executor_invalid",
            "--ray-address auto joins the cluster RAY_ADDRESS names, but RAY_ADDRESS is not set; "
            "export RAY_ADDRESS=HOST:PORT (printed by `ray start --head`) or pass "
            "--ray-address HOST:PORT.",
        )
    return parse_address(named) or named


def _probe(address: str) -> None:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT_S):
            return
    except OSError as exc:
        raise SiloError(
            "executor_unavailable",
            f"No Ray cluster answers at {address} ({exc}); start one with `ray start --head` "
            "on that machine, or fix --ray-address.",
        ) from None


class RaySession:
    """This process's Ray, for as long as an executor needs it.

    Attributes:
        owned: we started or joined it (and shut it down); False when the process had already
            called ``ray.init`` itself.
        start_ms: how long starting or joining took.
        address: the GCS address, for other drivers to join (``--ray-address``).
    """

    def __init__(self) -> None:
        self.owned = False
        self.start_ms = 0.0
        self.address = ""
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._done = threading.Event()
        self._error: BaseException | None = None
        self._saved: dict[str, str | None] = {}

    @classmethod
    def existing(cls) -> RaySession | None:
        """The process's own Ray when it already called ``ray.init`` (never owned by us)."""
        ray = sys.modules.get("ray")
        if ray is None or not ray.is_initialized():
            return None
        session = cls()
        session.address = str(ray.get_runtime_context().gcs_address)
        session._ready.set()
        return session

    @classmethod
    def start(cls, address: str | None, num_cpus: int | None) -> RaySession:
        """Start a fresh local Ray (``address=None``) or join a cluster; blocks until ready.

        Raises:
            SiloError: ``executor_unavailable`` (Ray missing, nothing at the address, Ray could
                not start); ``executor_invalid`` (``auto`` without ``RAY_ADDRESS``).
        """
        target = resolve_join(address)
        if target is not None:
            _probe(target)
        session = cls()
        session.owned = True
        clock0 = time.perf_counter()
        thread = threading.Thread(
            target=session._host, args=(target, num_cpus), name="silo-ray", daemon=True
        )
        thread.start()
        if not session._ready.wait(JOIN_TIMEOUT_S):
            session.close()
            raise SiloError(
                "executor_unavailable",
                f"Ray did not start within {JOIN_TIMEOUT_S:g} s"
                + (f" (joining {target})" if target else "")
                + "; check `ray status` on the head, and RAY_AUTH_MODE / RAY_AUTH_TOKEN when the "
                "cluster uses token auth.",
            )
        if session._error is not None:
            raise session._error
        session.start_ms = (time.perf_counter() - clock0) * 1000
        return session

    def _host(self, target: str | None, num_cpus: int | None) -> None:
        """The session's thread: init, wait for the end, shut down — Ray lives while it does."""
        ray: Any = None
        try:
            if target is None:
                self._set_env(_local_env())
            ray = import_ray()
            kwargs: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": logging.ERROR,
            }
            if target is None:
                ray.init(address="local", num_cpus=num_cpus or os.cpu_count() or 1, **kwargs)
            else:
                ray.init(address=target, **kwargs)
            self.address = str(ray.get_runtime_context().gcs_address)
        except BaseException as exc:
            self._error = exc if isinstance(exc, SiloError) else _start_failed(exc, target)
            self._restore_env()
            self._ready.set()
            self._done.set()
            return
        self._ready.set()
        self._stop.wait()
        try:
            ray.shutdown()
        finally:
            self._restore_env()
            self._done.set()

    def _set_env(self, values: dict[str, str | None]) -> None:
        for key, value in values.items():
            self._saved.setdefault(key, os.environ.get(key))
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    def _restore_env(self) -> None:
        for key, value in self._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved.clear()

    def close(self, timeout: float = 30.0) -> None:
        """Shut Ray down if we started it (blocking, bounded); a no-op otherwise."""
        if not self.owned:
            return
        self._stop.set()
        self._done.wait(timeout)


def _start_failed(exc: BaseException, target: str | None) -> SiloError:
    where = f"join the Ray cluster at {target}" if target else "start a local Ray"
    hint = (
        " If the cluster uses token auth, set RAY_AUTH_MODE=token and RAY_AUTH_TOKEN (or "
        "RAY_AUTH_TOKEN_PATH) as for the head."
        if target
        else ""
    )
    return SiloError(
        "executor_unavailable", f"Could not {where}: {type(exc).__name__}: {exc}.{hint}"
    )
