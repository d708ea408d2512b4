"""One log line a second at most (``silo_async._flood``; DESIGN §23), on a fake clock."""

from __future__ import annotations

import errno
import logging

import pytest

from silo_async._flood import FloodFilter, FloodLog, check_limits, filtering


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_flood_log_writes_the_first_event_then_a_count_a_second(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    logger = logging.getLogger("tests.flood.log")
    flood = FloodLog(logger, lambda n: f"refused {n}", clock=clock)
    with caplog.at_level(logging.WARNING, logger.name):
        for _ in range(5_000):  # a flood within one second: one line now
            flood.note()
            clock.now += 0.0001
        clock.now += 1.0
        flood.note()  # a second later: the rest of the flood, counted
        flood.flush()  # nothing pending: nothing written
        flood.note()
        flood.flush()
    assert [r.getMessage() for r in caplog.records] == ["refused 1", "refused 5000", "refused 1"]


def _record(message: str, error: BaseException | None = None) -> logging.LogRecord:
    exc_info = (type(error), error, None) if error is not None else None
    return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, (), exc_info)


def test_a_flood_filter_lets_one_record_a_second_through_per_message() -> None:
    clock = Clock()
    flood = FloodFilter(clock=clock)
    out_of_files = OSError(errno.EMFILE, "Too many open files")
    message = "socket.accept() out of system resource\nsocket: <fd=6>"
    passed = [flood.filter(_record(message, out_of_files)) for _ in range(2_048)]
    other = flood.filter(_record("Invalid HTTP request received."))
    clock.now += 1.5
    later = _record(message, out_of_files)
    assert passed.count(True) == 1 and other
    assert flood.filter(later)
    assert later.exc_info is None  # resources ran out: one line, no traceback
    assert later.getMessage() == (
        "socket.accept() out of system resource: [Errno 24] Too many open files "
        "(2047 more like it in the last 2 s)"
    )


def test_a_bug_keeps_its_traceback() -> None:
    record = _record("Exception in ASGI application", ValueError("bug"))
    assert FloodFilter(clock=Clock()).filter(record)
    assert record.exc_info is not None and record.getMessage() == "Exception in ASGI application"


def test_asyncio_s_late_accept_retry_on_a_closed_listener_is_dropped_after_the_server() -> None:
    # Files ran out, asyncio paused accepting and retries a second later; the server has
    # stopped meanwhile, so the retry fails on fd -1 after filtering() has ended.
    with filtering("asyncio"):
        pass
    late = _record(
        "Exception in callback BaseSelectorEventLoop._start_serving(<function>, <socket>)\n"
        "handle: <TimerHandle when=1.0>",
        ValueError("Invalid file descriptor: -1"),
    )
    assert not logging.getLogger("asyncio").filter(late)
    assert logging.getLogger("asyncio").filter(
        _record("Exception in callback other()", ValueError("x"))
    )


@pytest.mark.parametrize(("read_timeout", "max_connections"), [(0, 1), (-1, 1), (1, 0)])
def test_limits_no_server_can_keep_are_refused(read_timeout: float, max_connections: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        check_limits(read_timeout, max_connections)
