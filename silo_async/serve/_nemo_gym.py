"""``silo-async serve --protocol nemo-gym``: a silo world as a NeMo Gym resources server.

NeMo Gym (``nemo-gym`` on PyPI; ``nemo_gym.base_resources_server``) runs an agent that seeds a
session on a resources server, calls its tools and asks it to verify the rollout, carrying the
session's cookie from call to call. Here:

* ``POST /seed_session`` with the dataset row opens an episode of the row's ``task`` (a task
  id) on a fresh world and binds it to a new session cookie; the answer is ``{}``. An
  Environment Server's typed seed (``{"resources_session_id", "episode_id", "task_id",
  "task_data"}``; the task is ``task_data["task"]``, else ``task_id.task_id``) answers
  ``{"resources_session_id"}``, is idempotent, and is refused once that session was closed.
* ``POST /<tool>`` with the arguments as the body calls the tool through the session's
  episode: ``200`` with the output as JSON, or ``400`` with a rejected call's error document
  (``{"code", "message", "details"?}``, also what the model reads).
* ``POST /verify`` with the row plus ``response`` (a Responses-API response: its last
  ``output_text`` is the answer) finishes the episode and answers the body with ``reward``
  (and ``passed``, ``silo_run_id``).
* ``POST /close_session`` finishes the session's episode (output so far) and closes it.
* ``POST /aggregate_metrics`` with a collection's verify responses answers NeMo Gym's
  ``AggregateMetrics`` (:mod:`._nemo_gym_metrics`), as its resources servers do.

Errors outside a tool call are ``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

import collections
import json
import secrets
from collections.abc import Callable, Iterable
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import attrs
from starlette.types import Receive, Scope, Send

from .._environment import Environment
from .._episode import Episode
from .._errors import SiloError
from .._faults import Faults
from .._flood import DEFAULT_MAX_CONNECTIONS, DEFAULT_READ_TIMEOUT
from .._limits import DEFAULT_LIMITS, Limits
from .._options import RunOptions, resolve_options
from .._result import RunResult
from ._asgi import BodyTooLargeError, json_bytes, read_body, send_json
from ._harness_common import SUBMIT, HeldEpisodes, serve_app, tool_specs
from ._host import DEFAULT_KEEP_FINISHED, CapacityReachedError
from ._nemo_gym_metrics import aggregate_metrics

__all__ = ["NemoGymApp", "serve_nemo_gym"]

#: The cookie that binds a client's calls to its episode.
COOKIE = "silo_session"
#: Routes of NeMo Gym's own: a tool of the same name would be unreachable.
RESERVED = frozenset({"seed_session", "verify", "close_session", "aggregate_metrics", "mcp"})
#: Largest body read (a dataset row with its response, or a tool's arguments).
MAX_BODY = 8 * 1024 * 1024


class _HttpError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def final_text(response: Any) -> str | None:
    """The answer in a Responses-API response: the text of its last ``output_text`` part."""
    output = response.get("output") if isinstance(response, dict) else None
    for item in reversed(output if isinstance(output, list) else []):
        if not isinstance(item, dict) or item.get("type") != "message":
            continue
        parts = item.get("content")
        texts = [
            p["text"]
            for p in (parts if isinstance(parts, list) else [])
            if isinstance(p, dict) and p.get("type") == "output_text" and "text" in p
        ]
        if texts:
            return str(texts[-1])
    return None


def _aggregate(body: Any) -> dict[str, Any]:
    """``/aggregate_metrics``: ``{"verify_responses": [...]}`` → NeMo Gym's AggregateMetrics."""
    found = body.get("verify_responses") if isinstance(body, dict) else None
    if not isinstance(found, list):
        raise _HttpError(
            400,
            "invalid_input",
            'The body is {"verify_responses": [...]}: the verify responses of a collection.',
        )
    return aggregate_metrics(found)


def _cookie_of(scope: Scope) -> str | None:
    for key, value in scope["headers"]:
        if key == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            jar.load(value.decode("latin-1"))
            if COOKIE in jar:
                return jar[COOKIE].value
    return None


def _set_cookie(token: str) -> dict[str, str]:
    return {"set-cookie": f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"}


@attrs.frozen
class _Ended:
    """What an ended session still answers: its result and every tool call's refusal."""

    result: RunResult
    refusal: Any
    """The output of any call after the end (``invalid_state``, as the episode said it)."""

    async def finish(self, answer: Any = None) -> RunResult:
        """Finishing again changes nothing: the same result."""
        return self.result


class NemoGymApp:
    """The ASGI app of ``serve --protocol nemo-gym`` (a class instance: ASGI servers call it).

    A session whose episode has ended (verified, closed, at a limit, or abandoned until its
    deadline) keeps only its result and the refusal its calls get; the newest
    ``keep_finished`` ended sessions are remembered, older ones forgotten (and their typed
    ``resources_session_id``), so a training run that seeds millions stays small.

    Args:
        episodes: where episodes are opened and held.
        tools: the names of the world's tools (each is a ``POST /<name>`` route).
        keep_finished: ended sessions still answered (``invalid_state``, or ``/verify``'s
            same reward) before the oldest are forgotten.
    """

    def __init__(
        self, episodes: HeldEpisodes, tools: list[str], keep_finished: int = DEFAULT_KEEP_FINISHED
    ) -> None:
        self.episodes = episodes
        self.tools = frozenset(tools)
        self.keep_finished = keep_finished
        self._sessions: dict[str, Episode | _Ended] = {}
        self._tokens: dict[Episode, str] = {}  # open episode -> its cookie token
        self._typed: dict[str, str] = {}  # resources_session_id -> cookie token
        self._typed_of: dict[str, str] = {}  # cookie token -> resources_session_id
        self._closed: dict[str, None] = {}  # resources_session_ids closed, oldest first
        self._ended: collections.deque[str] = collections.deque()  # tokens, oldest first
        episodes.when_ended(self._episode_ended)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers: dict[str, str] = {}
        try:
            if scope["method"] != "POST":
                raise _HttpError(405, "method_not_allowed", "Every route here is a POST.")
            body = await self._json_body(receive)
            status, answer = await self._route(scope, body, headers)
        except _HttpError as exc:
            status, answer = exc.status, {"error": {"code": exc.code, "message": exc.message}}
        await send_json(send, json_bytes(answer), status, headers)

    @staticmethod
    async def _json_body(receive: Receive) -> Any:
        try:
            raw = await read_body(receive, MAX_BODY)
        except BodyTooLargeError:
            raise _HttpError(413, "body_too_large", "The body is over 8 MiB.") from None
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except RecursionError:
            raise _HttpError(400, "invalid_json", "The body nests too deeply to be read.") from None
        except ValueError as exc:
            raise _HttpError(400, "invalid_json", f"The body is not JSON: {exc}") from None

    async def _route(self, scope: Scope, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        name = scope["path"].strip("/")
        if name == "seed_session":
            return 200, await self._seed(body, headers)
        if name == "verify":
            return 200, await self._verify(self._episode(scope), body)
        if name == "close_session":
            return 200, await self._close(scope, body)
        if name == "aggregate_metrics":
            return 200, _aggregate(body)
        if name in RESERVED or "/" in name or not name:
            raise _HttpError(404, "not_found", f"No route {scope['path']}.")
        return await self._call(self._episode(scope), name, body)

    async def _open(self, task: Any) -> tuple[str, Episode]:
        if not isinstance(task, str):
            raise _HttpError(
                400, "invalid_input", 'The row needs "task": the id of the task to play.'
            )
        try:
            ep = await self.episodes.open(task)
        except SiloError as exc:
            raise _HttpError(404, exc.code, exc.message) from None
        except CapacityReachedError as exc:
            raise _HttpError(503, "capacity_reached", str(exc)) from None
        token = secrets.token_urlsafe(24)  # 192 bits: a session cannot be guessed
        self._sessions[token] = ep
        self._tokens[ep] = token
        return token, ep

    async def _seed(self, body: Any, headers: dict[str, str]) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise _HttpError(400, "invalid_input", "The body is the dataset row, an object.")
        typed = body.get("resources_session_id")
        if typed is None:
            token, _ = await self._open(body.get("task"))
            headers.update(_set_cookie(token))
            return {}
        return await self._seed_typed(str(typed), body, headers)

    async def _seed_typed(
        self, session_id: str, body: dict[str, Any], headers: dict[str, str]
    ) -> dict[str, Any]:
        if session_id in self._closed:
            raise _HttpError(409, "session_closed", f'Session "{session_id}" was closed.')
        token = self._typed.get(session_id)
        if token is None:
            found = body.get("task_data")
            data: dict[str, Any] = found if isinstance(found, dict) else {}
            task_id = body.get("task_id")
            fallback = task_id.get("task_id") if isinstance(task_id, dict) else None
            token, _ = await self._open(data.get("task", fallback))
            self._typed[session_id] = token
            self._typed_of[token] = session_id
        headers.update(_set_cookie(token))
        return {"resources_session_id": session_id}

    def _episode(self, scope: Scope) -> Episode | _Ended:
        token = _cookie_of(scope)
        ep = None if token is None else self._sessions.get(token)
        if ep is None:
            raise _HttpError(
                400,
                "session_not_found",
                "No session: POST /seed_session with the row first, and send its cookie.",
            )
        return ep

    async def _call(self, ep: Episode | _Ended, name: str, body: Any) -> tuple[int, Any]:
        if name == SUBMIT:  # over NeMo Gym the answer arrives with /verify
            raise _HttpError(404, "not_found", "No route /submit: /verify ends the episode.")
        if isinstance(ep, _Ended):
            return 400, ep.refusal
        result = await ep.call_tool(name, body if isinstance(body, dict) else {})
        return (400 if result.is_error else 200), result.output

    async def _verify(self, ep: Episode | _Ended, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise _HttpError(400, "invalid_input", "The body is the row plus its response.")
        result: RunResult = await ep.finish(final_text(body.get("response")))
        return {
            **body,
            "reward": result.reward,
            "passed": result.passed,
            "silo_run_id": result.run_id,
        }

    async def _close(self, scope: Scope, body: Any) -> dict[str, Any]:
        typed = body.get("resources_session_id") if isinstance(body, dict) else None
        if typed is not None:
            session_id = str(typed)
            self._closed[session_id] = None
            while len(self._closed) > self.keep_finished:  # the oldest closed ids are forgotten
                del self._closed[next(iter(self._closed))]
            token = self._typed.get(session_id)
        else:
            session_id, token = "", _cookie_of(scope)
        ep = None if token is None else self._sessions.get(token)
        if ep is not None:
            await ep.finish()
        return {"resources_session_id": session_id} if typed is not None else {}

    async def _episode_ended(self, ep: Episode) -> None:
        """Keep only what an ended session still answers; forget the oldest ended sessions."""
        token = self._tokens.pop(ep, None)
        if token is None:
            return
        result = ep.result
        if result is None:  # it could not be graded: nothing to answer about it
            self._forget(token)
            return
        refusal = (await ep.call_tool(SUBMIT)).output  # what any call after the end gets
        self._sessions[token] = _Ended(result, refusal)
        self._ended.append(token)
        while len(self._ended) > self.keep_finished:
            self._forget(self._ended.popleft())

    def _forget(self, token: str) -> None:
        self._sessions.pop(token, None)
        session_id = self._typed_of.pop(token, None)
        if session_id is not None:
            self._typed.pop(session_id, None)


async def serve_nemo_gym(
    env: Environment,
    task_id: str | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    allow_hosts: Iterable[str] = (),
    allow_origins: Iterable[str] = (),
    limits: Limits | None = None,
    max_tool_calls: int = DEFAULT_LIMITS.max_tool_calls,
    timeout: float | None = DEFAULT_LIMITS.timeout,
    token_limit: int | None = DEFAULT_LIMITS.token_limit,
    runs_dir: Path | None = None,
    max_episodes: int = 1000,
    on_end: Callable[[RunResult], None] | None = None,
    on_ready: Callable[[dict[str, Any]], None] | None = None,
    faults: Faults | str | None = None,
    read_timeout: float = DEFAULT_READ_TIMEOUT,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    keep_finished: int = DEFAULT_KEEP_FINISHED,
    options: RunOptions | None = None,
) -> None:
    """Serve ``env`` as a NeMo Gym resources server until SIGINT/SIGTERM (asyncio only).

    Args:
        env: the environment.
        task_id: accepted for symmetry with the other protocols (each row names its task).
        host: address to bind (loopback by default).
        port: port to bind (0: any free port).
        token: bearer token every request must carry (required off loopback).
        allow_hosts: further ``Host`` values to accept (``--allow-host``).
        allow_origins: further ``Origin`` values to accept (``--allow-origin``).
        limits: the limits of each episode (or the keyword form below, as for ``run``).
        max_tool_calls: per episode, as for ``run``.
        timeout: seconds per episode from its seed (``None``: no limit).
        token_limit: recorded tokens that end an episode (``None``: no limit).
        runs_dir: where run directories go (``None``: nothing written).
        max_episodes: episodes open at once; a seed beyond it is ``503 capacity_reached``.
        on_end: called with each episode's result when it ends.
        on_ready: called once listening, with ``{"url", "protocol", "episodes": []}``.
        faults: the faults every episode's tool calls meet (None: none).
        read_timeout: seconds a client has to send a request's head and body (from its first
            byte; a connection's first request from its start), else it is disconnected.
        max_connections: connections open at once; one more is answered 503 and closed.
        keep_finished: ended sessions still answered; the oldest beyond it are forgotten.
        options: how every episode runs as one :class:`~silo_async.RunOptions` (instead of the
            limit keywords and ``faults``).

    Raises:
        SiloError: ``serve_unprotected``, ``address_unavailable``, ``task_not_found`` or
            ``tool_name_reserved``, before serving.
        ValueError: an ``allow_hosts`` / ``allow_origins`` entry is no host or origin, or
            ``read_timeout`` / ``max_connections`` / ``keep_finished`` no server can keep.
        TypeError: ``limits`` beside a keyword of the keyword form (or ``options`` beside
            any of the keywords it replaces).
    """
    if keep_finished < 0:
        raise ValueError(f"keep_finished must be at least 0, not {keep_finished}.")
    if task_id is not None:
        env.verifier_for(env.task(task_id))
    names = [s.name for s in tool_specs(env)[:-1]]
    clash = sorted(RESERVED.intersection(names))
    if clash:
        raise SiloError(
            "tool_name_reserved",
            f'Environment "{env.name}" has a tool named "{clash[0]}", a route NeMo Gym '
            "reserves for itself. Rename the tool in the environment's tools registry.",
            {"environment": env.name, "tool": clash[0]},
        )
    how = resolve_options(
        options,
        limits=limits,
        max_tool_calls=max_tool_calls,
        timeout=timeout,
        token_limit=token_limit,
        faults=faults,
    )
    episodes = HeldEpisodes(env, how, runs_dir, "nemo-gym", on_end, max_episodes)
    await serve_app(
        NemoGymApp(episodes, names, keep_finished),
        episodes,
        host=host,
        port=port,
        token=token,
        allow_hosts=allow_hosts,
        allow_origins=allow_origins,
        announce=lambda url: {"url": url, "protocol": "nemo-gym", "episodes": []},
        on_ready=on_ready,
        read_timeout=read_timeout,
        max_connections=max_connections,
    )
