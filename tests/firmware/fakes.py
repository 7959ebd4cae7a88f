"""Fake MicroPython hardware for the firmware tests: `machine` (Pin, UART, unique_id), `utime` and a loader.

`load_firmware()` puts these fakes in sys.modules under MicroPython's names and imports firmware/shoe/ fresh,
so the firmware runs unchanged on CPython with time that moves only when the test says so.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

FIRMWARE = Path(__file__).resolve().parents[2] / "firmware" / "shoe"


class Clock:
    """utime's tick functions over a millisecond counter the test advances (ticks wrap like the RP2040's 30 bits)."""

    PERIOD = 1 << 30

    def __init__(self, start: int = 0) -> None:
        self.now = start % self.PERIOD

    def ticks_ms(self) -> int:
        return self.now

    def ticks_add(self, t: int, delta: int) -> int:
        return (t + delta) % self.PERIOD

    def ticks_diff(self, a: int, b: int) -> int:
        d = (a - b) % self.PERIOD
        return d - self.PERIOD if d >= self.PERIOD // 2 else d

    def sleep_ms(self, ms: int) -> None:
        self.advance(ms)

    def advance(self, ms: int) -> None:
        self.now = (self.now + ms) % self.PERIOD


class Pin:
    IN, OUT, PULL_UP, PULL_DOWN = 0, 1, 2, 3

    def __init__(self, id: int, mode: int = IN, pull: int | None = None, value: int | None = None) -> None:
        self.id, self.mode = id, mode
        self._value = 1 if pull == Pin.PULL_UP else 0
        if value is not None:
            self._value = value

    def value(self, v: int | None = None) -> int | None:
        if v is None:
            return self._value
        self._value = 1 if v else 0
        return None

    def drive(self, v: int) -> None:
        """The outside world sets the level of an input pin."""
        self._value = 1 if v else 0


class UART:
    """Both ends of a UART: the firmware reads `rx` and writes `tx`; the test feeds and drains them."""

    def __init__(self, id: int = 0, baudrate: int = 115200, **kwargs: object) -> None:
        self.id, self.baudrate, self.settings = id, baudrate, kwargs
        self.rx = bytearray()
        self.tx = bytearray()

    def any(self) -> int:
        return len(self.rx)

    def read(self, n: int | None = None) -> bytes | None:
        if not self.rx:
            return None
        n = len(self.rx) if n is None else n
        data = bytes(self.rx[:n])
        del self.rx[:n]
        return data

    def write(self, data: bytes) -> int:
        self.tx += data
        return len(data)

    def feed(self, data: bytes) -> None:
        self.rx += data

    def drain(self) -> bytes:
        data = bytes(self.tx)
        self.tx.clear()
        return data


def load_firmware(clock: Clock) -> types.SimpleNamespace:
    """Import firmware/shoe/* afresh against fake `machine`/`utime` (the flash store is the current directory)."""
    machine = types.ModuleType("machine")
    machine.Pin = Pin
    machine.UART = UART
    machine.unique_id = lambda: b"\xe6\x61\x38\x52\x83\x4a\x2b\x2f"
    utime = types.ModuleType("utime")
    for name in ("ticks_ms", "ticks_add", "ticks_diff", "sleep_ms"):
        setattr(utime, name, getattr(clock, name))
    saved = {name: sys.modules.get(name) for name in ("machine", "utime", "proto", "sensors", "store", "main")}
    sys.modules["machine"], sys.modules["utime"] = machine, utime
    sys.path.insert(0, str(FIRMWARE))
    try:
        for name in ("proto", "sensors", "store", "main"):
            sys.modules.pop(name, None)
        modules = {name: importlib.import_module(name) for name in ("proto", "sensors", "store", "main")}
    finally:
        sys.path.remove(str(FIRMWARE))
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return types.SimpleNamespace(**modules)
