"""OpenTelemetry: each finished rollout exported as GenAI semantic-convention spans.

The one hook is an observer of a rollout: :func:`rollout_observer` is asked once when a
rollout is set up and answers ``None`` unless telemetry is on (``RunOptions(otel=True)``,
:func:`switch_on` — what ``--otel`` on ``run`` / ``eval`` / ``serve`` calls — or
``SILO_OTEL=1``); the rollout calls what it got once, with its finished
:class:`~silo_async.RunResult`. The observer reads the rollout's trace (only
the events it needs, without encoding what an in-memory trace keeps deferred) and emits, with
the times the trace recorded:

* ``invoke_agent`` — the rollout (``gen_ai.agent.name``: the agent's label, ``silo.task.id``,
  ``silo.run.id``), carrying a ``gen_ai.evaluation.result`` event (score: the reward; label:
  ``passed`` or ``failed``);
* ``execute_tool`` — each tool call (``gen_ai.tool.name``, ``gen_ai.tool.call.id``: the model's
  id for the call when a response announced it; ``error.type`` when it failed);
* ``chat`` — each model step (``gen_ai.request.model``, ``gen_ai.usage.input_tokens``,
  ``gen_ai.usage.output_tokens``).

Tool and model spans are children of their rollout's span. Nothing here imports OpenTelemetry
until telemetry is on: a process that never turns it on never loads it. Spans go over OTLP as
the SDK's own exporter is configured by the standard ``OTEL_EXPORTER_OTLP_*`` variables
(endpoint, headers, protocol: ``http/protobuf`` by default, ``grpc`` with that exporter
installed), through the SDK's batch processor, flushed at exit (or by :func:`flush`); the
resource is the SDK's (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``; ``silo_async``
names an unnamed service). The spans are silo's own pipeline, whatever tracer provider the
application set: its instrumentation and silo's rollouts reach the collector side by side.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import logging
import os
import random
import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ._errors import SiloError
from ._install import install_line
from ._version import __version__

if TYPE_CHECKING:
    from ._options import RunOptions
    from ._result import RunResult
    from ._trace import TraceRecorder

#: What a rollout's observer is called with once it is finished: its result and its trace.
Observer = Callable[["RunResult", "TraceRecorder"], None]

__all__ = ["ENV_VAR", "Observer", "enabled", "flush", "rollout_observer", "shutdown", "switch_on"]

#: Spans the batch holds before it drops any, unless ``OTEL_BSP_MAX_QUEUE_SIZE`` says otherwise:
#: an eval finishes rollouts by the hundred each second, faster than the SDK's 2,048 drain.
QUEUE_SIZE = 16_384

#: The environment variable that turns telemetry on for every rollout of the process.
ENV_VAR = "SILO_OTEL"

#: The trace events the spans are made of.
_SPANNED = frozenset({"model_step", "tool_call", "tool_result"})

#: The instrumentation scope's name.
SCOPE = "silo_async"

LOG = logging.getLogger("silo_async.otel")

_lock = threading.Lock()
#: What exports the spans: made on first use, dropped by :func:`shutdown`.
_emitter: _Emitter | None = None
#: Telemetry switched on for every rollout of the process (``--otel``).
_switched = False


def env_enabled() -> bool:
    """``SILO_OTEL`` asks for telemetry (``1``, ``true`` or ``yes``)."""
    return os.environ.get(ENV_VAR, "").strip().lower() in ("1", "true", "yes")


def enabled(options: RunOptions) -> bool:
    """Telemetry is on for a rollout run with ``options`` (or for the whole process)."""
    return options.otel or _switched or env_enabled()


def switch_on() -> None:
    """Export every rollout of this process from now on (what ``--otel`` does).

    The SDK and its exporter are loaded now, so a missing one is said before any rollout runs.

    Raises:
        SiloError: ``otel_unavailable`` (see :func:`rollout_observer`).
    """
    global _switched
    _get_emitter()
    _switched = True


def rollout_observer(options: RunOptions) -> Observer | None:
    """What to call with the rollout's result once it is finished, or ``None`` (telemetry off).

    Raises:
        SiloError: ``otel_unavailable`` when telemetry is on but the SDK or the exporter the
            protocol needs is not installed (``pip install 'silo_async[otel]'``).
    """
    if not enabled(options):
        return None
    return _get_emitter().rollout


def flush(timeout_s: float = 30.0) -> bool:
    """Send every span still batched; True when done in time (nothing to send: True)."""
    emitter = _emitter
    return True if emitter is None else emitter.flush(timeout_s)


def shutdown(timeout_s: float = 30.0) -> bool:
    """Send every span still batched and switch telemetry off again (the CLI, at its end).

    The next rollout that asks for telemetry starts afresh, reading the ``OTEL_*`` variables
    again. (At the process's exit, what is still batched is sent anyway.)
    """
    global _emitter, _switched
    with _lock:
        emitter, _emitter, _switched = _emitter, None, False
    if emitter is None:
        return True
    done = emitter.flush(timeout_s)
    emitter.close()
    atexit.unregister(emitter.close)
    return done


def _get_emitter() -> _Emitter:
    global _emitter
    with _lock:
        if _emitter is None:
            _emitter = _Emitter()
            atexit.register(_emitter.close)  # spans still batched go out as the process ends
        return _emitter


def _missing(module: str) -> SiloError:
    return SiloError(
        "otel_unavailable",
        f'OpenTelemetry export needs "{module}", which is not installed: {install_line("otel")}.',
        {"missing": module},
    )


def _resource() -> Any:
    """The SDK's resource from the standard variables; ``silo_async`` names an unnamed one.

    Its hash is computed once: the OTLP encoder hashes a span's resource for every span it
    encodes, and the SDK's hash is a sorted JSON dump of the attributes (a fifth of the
    encoder's time per span).
    """
    from opentelemetry.sdk.resources import Resource

    class HashedOnce(Resource):
        def __init__(self, created: Resource) -> None:
            super().__init__(created.attributes, created.schema_url)
            self._hash = super().__hash__()

        def __hash__(self) -> int:
            return self._hash

    named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    return HashedOnce(Resource.create({} if named else {"service.name": SCOPE}))


def _exporter() -> Any:
    """The OTLP span exporter the standard variables ask for (http/protobuf by default)."""
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if protocol == "grpc":
        try:  # by name: the grpc exporter is not in the extra (it brings grpcio)
            grpc = importlib.import_module("opentelemetry.exporter.otlp.proto.grpc.trace_exporter")
        except ImportError as exc:
            raise _missing("opentelemetry-exporter-otlp-proto-grpc") from exc
        return grpc.OTLPSpanExporter()
    if protocol != "http/protobuf":
        raise SiloError(
            "otel_unavailable",
            f'OTEL_EXPORTER_OTLP_PROTOCOL "{protocol}" is not one the OpenTelemetry SDK for '
            "Python exports: use http/protobuf (the default) or grpc.",
            {"protocol": protocol},
        )
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpExporter,
        )
    except ImportError as exc:
        raise _missing("opentelemetry-exporter-otlp-proto-http") from exc
    return HttpExporter()


def _ns(at: Any) -> int | None:
    """An event's ISO-8601 time as nanoseconds since the epoch (None when it has none)."""
    return _parsed_ns(at) if isinstance(at, str) else None


@functools.lru_cache(maxsize=4096)
def _parsed_ns(at: str) -> int:
    # Cached: a trace's times are milliseconds, shared by the events (and rollouts) in each.
    return int(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1e9)


def _tool_error(result: dict[str, Any]) -> tuple[str, str | None]:
    """A failed call's ``error.type`` (an injected fault's kind, else the error's code) and text."""
    output = result.get("output")
    fault = result.get("fault")
    said = output if isinstance(output, dict) else {}
    kind = fault.get("type") if isinstance(fault, dict) else said.get("code")
    message = said.get("message")
    return str(kind or "tool_error"), str(message) if message else None


def _chat_attributes(step: dict[str, Any]) -> dict[str, Any]:
    """A model step's GenAI attributes: the model, the tokens used, why the response ended."""
    attributes: dict[str, Any] = {"gen_ai.operation.name": "chat"}
    model = step.get("model")
    if model:
        attributes["gen_ai.request.model"] = str(model)
    usage = step.get("usage") or {}
    for key, name in (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens")):
        if isinstance(usage.get(key), int):
            attributes[f"gen_ai.usage.{name}"] = usage[key]
    if step.get("stopReason"):
        attributes["gen_ai.response.finish_reasons"] = (str(step["stopReason"]),)
    return attributes


def _ms_after(start: int | None, duration: Any, otherwise: int | None) -> int | None:
    """``start`` plus ``duration`` milliseconds, or ``otherwise`` without either."""
    if start is None or not isinstance(duration, (int, float)):
        return otherwise
    return start + int(duration * 1_000_000)


class _Emitter:
    """The SDK's pieces, loaded once: finished spans batched to the OTLP exporter.

    A rollout is exported after the fact, with the times its trace recorded, so its spans are
    made directly as the SDK's finished ``ReadableSpan`` records and handed to a
    ``BatchSpanProcessor``: a tracer's live spans (a lock each, sampling, attributes cleaned
    one by one) cost a cheap rollout several times its own CPU.
    """

    def __init__(self) -> None:
        try:
            from opentelemetry.sdk.trace import Event, ReadableSpan
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
            from opentelemetry.sdk.util.instrumentation import InstrumentationScope
            from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags
        except ImportError as exc:
            raise _missing(exc.name or "opentelemetry-sdk") from exc
        self._event, self._span, self._context = Event, ReadableSpan, SpanContext
        self._status, self._error = Status, StatusCode.ERROR
        self._internal, self._client = SpanKind.INTERNAL, SpanKind.CLIENT
        self._sampled = TraceFlags(TraceFlags.SAMPLED)
        self._resource = _resource()
        self._scope = InstrumentationScope(SCOPE, __version__)
        # Ids from a generator of its own: the global one's draws stay the application's.
        self._ids = random.Random()
        queue = None if os.environ.get("OTEL_BSP_MAX_QUEUE_SIZE") else QUEUE_SIZE
        self._processor: Any = BatchSpanProcessor(_exporter(), max_queue_size=queue)
        self._closed = False

    def flush(self, timeout_s: float) -> bool:
        """Send every batched span; True when done within ``timeout_s``."""
        return bool(self._processor.force_flush(int(timeout_s * 1000)))

    def close(self) -> None:
        """Send what is batched and stop the exporter (once)."""
        if not self._closed:
            self._closed = True
            self._processor.shutdown()

    def rollout(self, result: RunResult, trace: TraceRecorder) -> None:
        """Export one finished rollout; a failure to export is logged, never the rollout's own."""
        try:
            self._rollout(result, trace)
        except Exception:  # telemetry is an observer: the rollout, graded, stands regardless
            LOG.exception("OpenTelemetry: the spans of run %s were not exported", result.run_id)

    def _rollout(self, result: RunResult, trace: TraceRecorder) -> None:
        """The rollout's ``invoke_agent`` span and the spans under it."""
        trace_id = self._ids.getrandbits(128) or 1
        root = self._new_context(trace_id)
        start = _ns(result.started_at) or 0
        end = max(_ns(result.finished_at) or start, start)
        self._children(trace_id, root, trace.outline(_SPANNED))
        graded: dict[str, Any] = {
            "gen_ai.evaluation.name": result.verifier_id,
            "gen_ai.evaluation.score.value": float(result.reward),
            "gen_ai.evaluation.score.label": "passed" if result.passed else "failed",
            "silo.reward_valid": result.reward_valid,
        }
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": result.agent_name,
            "silo.task.id": result.task.id,
            "silo.run.id": result.run_id,
            "silo.environment": result.environment,
            "silo.termination_reason": result.termination_reason,
        }
        error = None
        if result.error is not None:
            attributes["error.type"] = result.termination_reason
            error = result.error
        self._emit(
            f"invoke_agent {result.agent_name}",
            root,
            None,
            self._internal,
            (start, end),
            attributes,
            events=(self._event("gen_ai.evaluation.result", graded, end),),
            error=error,
        )

    def _new_context(self, trace_id: int) -> Any:
        return self._context(trace_id, self._ids.getrandbits(64) or 1, False, self._sampled)

    def _emit(
        self,
        name: str,
        context: Any,
        parent: Any,
        kind: Any,
        times: tuple[int | None, int | None],
        attributes: dict[str, Any],
        *,
        events: tuple[Any, ...] = (),
        error: str | None = None,
        failed: bool = False,
    ) -> None:
        extra: dict[str, Any] = {}
        if error is not None or failed:
            extra["status"] = self._status(self._error, error)
        self._processor.on_end(
            self._span(
                name=name,
                context=context,
                parent=parent,
                resource=self._resource,
                attributes=attributes,
                events=events,
                kind=kind,
                start_time=times[0],
                end_time=times[1],
                instrumentation_scope=self._scope,
                **extra,
            )
        )

    def _children(self, trace_id: int, root: Any, events: list[dict[str, Any]]) -> None:
        """One ``chat`` span per model step, one ``execute_tool`` span per call, in trace order."""
        announced: list[dict[str, Any]] = []  # the calls the last model step asked for
        opened: dict[Any, tuple[str, str, int | None]] = {}  # callId -> (name, call id, start)
        for event in events:
            kind = event.get("type")
            if "actor" in event:  # a user's own tool call: not the agent's
                continue
            if kind == "model_step":
                self._chat(trace_id, root, event)
                message = event.get("message")
                tools = message.get("toolCalls") if isinstance(message, dict) else None
                announced = [c for c in tools or () if isinstance(c, dict)]
            elif kind == "tool_call":
                name = str(event.get("tool"))
                known = announced.pop(0) if announced and announced[0].get("name") == name else None
                call_id = str(known["id"]) if known else f"call_{event.get('callId')}"
                opened[event.get("callId")] = (name, call_id, _ns(event.get("at")))
            elif kind == "tool_result" and event.get("callId") in opened:
                self._tool(trace_id, root, opened.pop(event.get("callId")), event)
        for call in opened.values():  # calls the rollout's end cut short
            self._tool(trace_id, root, call, None)

    def _chat(self, trace_id: int, root: Any, step: dict[str, Any]) -> None:
        """A model step's span: it ended when it was recorded, ``durationMs`` after it began."""
        end = _ns(step.get("at"))
        duration = step.get("durationMs")
        start = end - int(duration * 1_000_000) if end is not None and duration else end
        model = step.get("model")
        self._emit(
            f"chat {model}" if model else "chat",
            self._new_context(trace_id),
            root,
            self._client,
            (start, end),
            _chat_attributes(step),
        )

    def _tool(
        self,
        trace_id: int,
        root: Any,
        call: tuple[str, str, int | None],
        result: dict[str, Any] | None,
    ) -> None:
        """A call's span, ``durationMs`` long; a failed call has ``error.type`` and its text."""
        name, call_id, start = call
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
        }
        end, message, failed = start, None, False
        if result is not None:
            end = _ms_after(start, result.get("durationMs"), _ns(result.get("at")))
            if result.get("isError"):
                attributes["error.type"], message = _tool_error(result)
                failed = True
        self._emit(
            f"execute_tool {name}",
            self._new_context(trace_id),
            root,
            self._internal,
            (start, end),
            attributes,
            error=message,
            failed=failed,
        )
