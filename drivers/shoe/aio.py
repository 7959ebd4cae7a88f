"""asyncio face of the shoe driver: events on an asyncio.Queue, commands as awaitables.

    async with AsyncShoe(url) as shoe:
        async for event in shoe:          # CardDrawn, ShoeState, DeckCheck, Shuffle, DeviceError, LinkUp, ...
            ...
        await shoe.lock(True)

The driver's thread hands each event to the loop with `loop.call_soon_threadsafe`, so the runtime sees them in
order on its own thread and never blocks the serial line. A consumer that only hands events on (the table's
runtime queues each for its writer) may pass `on_event` instead: it is called on the loop's thread with each
event, in order, and the queue stays empty.
"""

from __future__ import annotations

import asyncio
from typing import Callable, Mapping

from .driver import ShoeDriver
from .link import Event, LinkConfig

__all__ = ["AsyncShoe"]


class AsyncShoe:
    def __init__(self, url: str, *, config: LinkConfig | None = None, baudrate: int = 115200,
                 last_draws: Mapping[int, int] | None = None, on_event: Callable[[Event], None] | None = None) -> None:
        self.url, self.config, self.baudrate, self.last_draws = url, config, baudrate, last_draws
        self.on_event = on_event
        self.driver: ShoeDriver | None = None
        self.events: asyncio.Queue[Event] = asyncio.Queue()

    def start(self) -> AsyncShoe:
        """Start the driver; must be called from the running loop that will consume the events."""
        loop = asyncio.get_running_loop()
        # With on_event the loop runs it directly: no queue and no task between the line and the consumer.
        put = self.on_event or self.events.put_nowait
        self.driver = ShoeDriver(self.url, lambda event: loop.call_soon_threadsafe(put, event), config=self.config,
                                 baudrate=self.baudrate, last_draws=self.last_draws).start()
        return self

    async def stop(self) -> None:
        if self.driver is not None:
            await asyncio.to_thread(self.driver.stop)

    async def __aenter__(self) -> AsyncShoe:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def get(self) -> Event:
        return await self.events.get()

    def __aiter__(self) -> AsyncShoe:
        return self

    async def __anext__(self) -> Event:
        return await self.events.get()

    @property
    def up(self) -> bool:
        return self.driver is not None and self.driver.up

    @property
    def counters(self) -> dict[str, int]:
        return self.driver.counters if self.driver else {}

    async def lock(self, locked: bool = True) -> None:
        await asyncio.wrap_future(self._driver().lock(locked))

    async def reset_counters(self) -> None:
        await asyncio.wrap_future(self._driver().reset_counters())

    async def request_status(self) -> None:
        await asyncio.wrap_future(self._driver().request_status())

    async def set_time(self, unix_ms: int | None = None) -> None:
        await asyncio.wrap_future(self._driver().set_time(unix_ms))

    def _driver(self) -> ShoeDriver:
        if self.driver is None:
            raise RuntimeError("AsyncShoe is not started")
        return self.driver
