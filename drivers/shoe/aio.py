"""asyncio face of the shoe driver: events on an asyncio.Queue, commands as awaitables.

    async with AsyncShoe(url) as shoe:
        async for event in shoe:          # CardDrawn, ShoeState, DeckCheck, Shuffle, DeviceError, LinkUp, ...
            ...
        await shoe.lock(True)

The hand-off from the driver's thread to the loop (and `on_event`, for a consumer that only hands events on) is
drivers.aio.AsyncDriver's.
"""

from __future__ import annotations

import asyncio
from typing import Callable, Mapping

from drivers.aio import AsyncDriver

from .driver import ShoeDriver
from .link import Event, LinkConfig

__all__ = ["AsyncShoe"]


class AsyncShoe(AsyncDriver[Event, ShoeDriver]):
    def __init__(self, url: str, *, config: LinkConfig | None = None, baudrate: int = 115200,
                 last_draws: Mapping[int, int] | None = None, on_event: Callable[[Event], None] | None = None) -> None:
        super().__init__(on_event)
        self.url, self.config, self.baudrate, self.last_draws = url, config, baudrate, last_draws

    def _driver_for(self, hand_off: Callable[[Event], None]) -> ShoeDriver:
        return ShoeDriver(self.url, hand_off, config=self.config, baudrate=self.baudrate, last_draws=self.last_draws)

    @property
    def up(self) -> bool:
        return self.driver is not None and self.driver.up

    async def lock(self, locked: bool = True) -> None:
        await asyncio.wrap_future(self._driver().lock(locked))

    async def reset_counters(self) -> None:
        await asyncio.wrap_future(self._driver().reset_counters())

    async def request_status(self) -> None:
        await asyncio.wrap_future(self._driver().request_status())

    async def set_time(self, unix_ms: int | None = None) -> None:
        await asyncio.wrap_future(self._driver().set_time(unix_ms))
