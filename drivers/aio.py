"""The asyncio face every serial device driver shares: its thread's events handed to the loop in order, start/stop.

A driver (drivers.shoe, drivers.validator, drivers.printer) runs its serial line on a thread of its own and hands
each event to a callback on that thread. AsyncDriver starts it from the running loop with a callback that hands
the event over with `loop.call_soon_threadsafe`, so the runtime sees the events on its own thread, in the order the
device reported them, and never blocks the line. A consumer that only hands events on passes `on_event`: it is
called on the loop's thread with each event, in order, and the queue stays empty; without it the events queue up
for `await face.get()` / `async for event in face`.

A device's face subclasses AsyncDriver and says in `_driver_for` how its driver is built; its commands follow.
"""

from __future__ import annotations

import asyncio
from typing import Callable, Generic, Protocol, Self, TypeVar

__all__ = ["AsyncDriver", "ThreadDriver"]


class ThreadDriver(Protocol):
    """What AsyncDriver needs of a driver: started and stopped from any thread, its counters readable."""

    def start(self) -> Self: ...

    def stop(self, timeout: float = ...) -> None: ...

    @property
    def counters(self) -> dict[str, int]: ...


E = TypeVar("E")
D = TypeVar("D", bound=ThreadDriver)


class AsyncDriver(Generic[E, D]):
    # True: stop() forgets the driver (counters read {} afterwards, a second stop() does nothing).
    forget_on_stop = False

    def __init__(self, on_event: Callable[[E], None] | None) -> None:
        self.on_event = on_event
        self.driver: D | None = None
        self.events: asyncio.Queue[E] = asyncio.Queue()

    def _driver_for(self, hand_off: Callable[[E], None]) -> D:
        """The device's driver, not started, handing each event to `hand_off` (on the driver's thread)."""
        raise NotImplementedError

    def start(self) -> Self:
        """Start the driver; call it from the running loop that will take the events."""
        loop = asyncio.get_running_loop()
        # With on_event the loop runs it directly: no queue and no task between the line and the consumer.
        put = self.on_event or self.events.put_nowait

        def hand_off(event: E) -> None:
            loop.call_soon_threadsafe(put, event)

        self.driver = self._driver_for(hand_off).start()
        return self

    async def stop(self) -> None:
        if self.driver is not None:
            driver = self.driver
            if self.forget_on_stop:
                self.driver = None
            await asyncio.to_thread(driver.stop)

    async def __aenter__(self) -> Self:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def get(self) -> E:
        return await self.events.get()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> E:
        return await self.events.get()

    @property
    def counters(self) -> dict[str, int]:
        return self.driver.counters if self.driver else {}

    def _driver(self) -> D:
        if self.driver is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return self.driver
