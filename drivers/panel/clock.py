"""Time for the panel: one clock decides debounce, hold, pulse widths and lamp patterns (asyncio loop or manual)."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
from typing import Any, Callable, Protocol

__all__ = ["Clock", "Timer", "LoopClock", "ManualClock"]


class Timer(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    """What the panel needs of time. Every callback runs on the clock's one thread (the asyncio loop's)."""

    def now(self) -> float: ...

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> Timer: ...

    def call_soon_threadsafe(self, callback: Callable[..., Any], *args: Any) -> None: ...


class LoopClock:
    """The runtime's clock: an asyncio loop (monotonic seconds, as gpiozero's local pin factories use).

    An edge from gpiozero's thread hops into the loop; an edge made on the loop's own thread (a simulated
    device driving a mock pin from a timer) is handled at once, as a ManualClock does, so a loop running late
    cannot reorder it behind the panel's own timers (a pulse taken for a stuck line)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._thread: int | None = None

    def now(self) -> float:
        return self.loop.time()

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> Timer:
        return self.loop.call_at(when, callback, *args)

    def call_soon_threadsafe(self, callback: Callable[..., Any], *args: Any) -> None:
        if self._thread is None and self.loop.is_running():
            try:
                if asyncio.get_running_loop() is self.loop:
                    self._thread = threading.get_ident()
            except RuntimeError:
                pass
        if self._thread is not None and threading.get_ident() == self._thread:
            callback(*args)
        else:
            self.loop.call_soon_threadsafe(callback, *args)


class _ManualTimer:
    __slots__ = ("when", "callback", "args", "cancelled")

    def __init__(self, when: float, callback: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.when, self.callback, self.args, self.cancelled = when, callback, args, False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """Time that moves only when a test says so: timers fire in order, each at exactly its time.

    Single-threaded by design: `call_soon_threadsafe` runs the callback at once, so a mock pin driven from the
    test reaches the panel's logic before `drive_low()` returns. Use LoopClock where threads are involved.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._timers: list[tuple[float, int, _ManualTimer]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self._now

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> Timer:
        timer = _ManualTimer(max(when, self._now), callback, args)
        heapq.heappush(self._timers, (timer.when, next(self._order), timer))
        return timer

    def call_soon_threadsafe(self, callback: Callable[..., Any], *args: Any) -> None:
        callback(*args)

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds`, firing every timer due on the way at its own time."""
        if seconds < 0:
            raise ValueError("time does not go backwards")
        self.advance_to(self._now + seconds)

    def advance_to(self, when: float) -> None:
        while self._timers and self._timers[0][0] <= when:
            _, _, timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            self._now = timer.when
            timer.callback(*timer.args)
        self._now = max(self._now, when)

    @property
    def pending(self) -> int:
        """Timers still to fire (cancelled ones excluded)."""
        return sum(not t.cancelled for _, _, t in self._timers)
