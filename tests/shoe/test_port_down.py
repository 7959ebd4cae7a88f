"""A shoe port that cannot be opened: retried for as long as the driver runs, said once as an event, and said
again in the log with backoff (issue 43 point 23)."""

from __future__ import annotations

import itertools
import logging
import threading
from pathlib import Path

import pytest

from drivers.shoe import LinkConfig, LinkDown, ShoeDriver


def test_a_missing_port_is_one_event_and_a_log_line_that_backs_off(tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """Each try reads the clock once; the fake clock moves 1 s a try and stops at 100 s, so the log speaks at the
    first failure, after 30 s and after 90 s (then it would wait 120 s more), whatever the number of tries."""
    port = str(tmp_path / "ttyACM9")
    ticks = itertools.count()
    events: list[object] = []
    got = threading.Event()

    def on_event(event: object) -> None:
        events.append(event)
        got.set()

    caplog.set_level(logging.WARNING, logger="croupier.shoe")
    driver = ShoeDriver(port, on_event, config=LinkConfig(reconnect_interval=0.001),
                        clock=lambda: float(min(next(ticks), 100)))
    driver.start()
    try:
        assert driver.wait_counters(lambda c: c["open_failures"] >= 300, 30)
    finally:
        driver.stop()
    assert len(events) == 1 and isinstance(events[0], LinkDown)
    assert events[0].reason.startswith(f"cannot open the port {port}: ")
    said = [r.getMessage() for r in caplog.records if port in r.getMessage()]
    assert said[0].startswith(f"shoe port {port} cannot be opened (retrying every 0.00 s): ")
    assert [m.split(": ")[0] for m in said[1:]] == [f"shoe port {port} still cannot be opened after 30 s (31 tries)",
                                                   f"shoe port {port} still cannot be opened after 90 s (91 tries)"]
