"""A real shoe reader on the serial line: identifies itself, answers a status request, is locked and unlocked.

Run with the board attached: CROUPIER_HIL_SHOE=/dev/serial/by-id/usb-... pytest tests/hil/test_shoe_hil.py
"""

from __future__ import annotations

import threading

from drivers.shoe import LinkUp, ShoeDriver, ShoeState, StateFlags
from tests.hil.conftest import hardware


def test_real_shoe_identifies_and_obeys_lock() -> None:
    url = hardware("CROUPIER_HIL_SHOE", "card shoe reader")
    events: list = []
    changed = threading.Condition()

    def on_event(event: object) -> None:
        with changed:
            events.append(event)
            changed.notify_all()

    with ShoeDriver(url, on_event) as driver:
        with changed:
            assert changed.wait_for(lambda: any(isinstance(e, LinkUp) for e in events), 10)
        assert driver.identity.protocol == 1 and driver.identity.serial
        driver.lock(True).result(5)
        with changed:
            assert changed.wait_for(lambda: any(isinstance(e, ShoeState) and e.flags & StateFlags.LOCKED
                                                for e in events), 5)
        driver.lock(False).result(5)
        driver.request_status().result(5)
        assert driver.counters["bad_crc"] == 0
