"""An OTLP/HTTP trace receiver on 127.0.0.1, for tests: what a collector would be sent.

``POST /v1/traces`` bodies (protobuf, as the OpenTelemetry SDK's OTLP exporter sends them) are
decoded with the ``opentelemetry-proto`` messages that exporter itself depends on, and kept as
:class:`Span` values. The server runs in a background thread, so tests of every backend (and
subprocesses) can export to it.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

from .peers import require_extra

require_extra("otel")

# The OTLP exporter's own messages (opentelemetry-proto, which the otel extra brings).
from opentelemetry.proto.collector.trace.v1 import (  # noqa: E402 - after the check
    trace_service_pb2 as trace_service,
)


@attrs.frozen
class Span:
    """One received span: its ids, name, attributes and events (``(name, attributes)``)."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status_code: int
    start_ns: int
    end_ns: int
    service: str | None


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return None if kind is None else getattr(any_value, kind)


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


def decode(body: bytes) -> list[Span]:
    """The spans of one OTLP ``ExportTraceServiceRequest``."""
    request = trace_service.ExportTraceServiceRequest()
    request.ParseFromString(body)
    found = []
    for resource_spans in request.resource_spans:
        service = _attributes(resource_spans.resource.attributes).get("service.name")
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                found.append(
                    Span(
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        attributes=_attributes(span.attributes),
                        events=[(e.name, _attributes(e.attributes)) for e in span.events],
                        status_code=span.status.code,
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        service=service,
                    )
                )
    return found


class Receiver:
    """The spans received so far, and the endpoint to send them to."""

    def __init__(self, port: int) -> None:
        self.endpoint = f"http://127.0.0.1:{port}"
        self.spans: list[Span] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()

    def keep(self, path: str, spans: list[Span]) -> None:
        with self._lock:
            self.paths.append(path)
            self.spans.extend(spans)

    def named(self, prefix: str) -> list[Span]:
        """The spans whose name starts with ``prefix``, in arrival order."""
        with self._lock:
            return [s for s in self.spans if s.name.startswith(prefix)]

    def wait_for(self, done: Callable[[Receiver], bool], seconds: float = 20.0) -> None:
        """Wait until ``done(self)`` (spans arrive from another thread or process)."""
        deadline = time.monotonic() + seconds
        while not done(self):
            assert time.monotonic() < deadline, f"spans received: {self.spans}"
            time.sleep(0.02)


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    """An OTLP/HTTP receiver on an ephemeral port of 127.0.0.1, for the ``with`` block."""
    holder: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the name http.server calls
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            holder[0].keep(self.path, decode(body))
            answer = trace_service.ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: pytest shows what the assertions say

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(Receiver(server.server_address[1]))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder[0]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
