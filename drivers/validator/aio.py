"""The bill validator driver for an asyncio runtime: ValidatorLink's face over ValidatorDriver's thread.

The driver's thread hands each event to the loop with `loop.call_soon_threadsafe`, so the runtime sees them on
its own thread, in the order the validator reported them, and never blocks the serial line:

    async with AsyncValidator(url, on_event=cabinet.on_validator_event, country="USD") as validator:
        validator.enable(frozenset({100, 500, 2000}), tickets=True)
        ...                                  # on Escrowed: validator.stack() or validator.return_item()

Without `on_event` the events queue up for `await validator.get()` / `async for event in validator`.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from .config import ValidatorConfig
from .driver import DriverTiming, ValidatorDriver
from .events import ValidatorEvent
from .protocol import Item
from .sim import ValidatorSim

__all__ = ["AsyncValidator", "start_validator"]


class AsyncValidator:
    """Implements drivers.validator.events.ValidatorLink."""

    def __init__(self, url: str, *, country: str = "USD", timing: DriverTiming | None = None,
                 on_event: Callable[[ValidatorEvent], None] | None = None, in_escrow: Item | None = None) -> None:
        """`in_escrow`: the journal's escrowed item at start (see ValidatorDriver)."""
        self.url, self.country, self.timing, self.on_event = url, country, timing, on_event
        self.in_escrow = in_escrow
        self.driver: ValidatorDriver | None = None
        self.events: asyncio.Queue[ValidatorEvent] = asyncio.Queue()

    def start(self) -> AsyncValidator:
        """Start the driver; call it from the running loop that will see the events."""
        loop = asyncio.get_running_loop()
        put = self.on_event or self.events.put_nowait
        self.driver = ValidatorDriver(self.url, lambda event: loop.call_soon_threadsafe(put, event),
                                      country=self.country, timing=self.timing, in_escrow=self.in_escrow).start()
        return self

    async def stop(self) -> None:
        if self.driver is not None:
            driver, self.driver = self.driver, None
            await asyncio.to_thread(driver.stop)

    async def __aenter__(self) -> AsyncValidator:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def get(self) -> ValidatorEvent:
        return await self.events.get()

    def __aiter__(self) -> AsyncValidator:
        return self

    async def __anext__(self) -> ValidatorEvent:
        return await self.events.get()

    def stack(self) -> None:
        self._driver().stack()

    def return_item(self) -> None:
        self._driver().return_item()

    def enable(self, notes: frozenset[int], tickets: bool) -> None:
        self._driver().enable(notes, tickets)

    @property
    def counters(self) -> dict[str, int]:
        return self.driver.counters if self.driver else {}

    def _driver(self) -> ValidatorDriver:
        if self.driver is None:
            raise RuntimeError("AsyncValidator is not started")
        return self.driver


def start_validator(config: ValidatorConfig, on_event: Callable[[ValidatorEvent], None], *,
                    timing: DriverTiming | None = None,
                    in_escrow: Item | None = None) -> tuple[AsyncValidator | None, ValidatorSim | None]:
    """The cabinet's validator as its [validator] section says: (None, None) for "none"; for "sim" a simulated
    validator on a fresh pty and the driver on it; else the driver on the port. Call it from the running loop; the
    caller stops both (`await validator.stop()`, then `sim.stop()`)."""
    if not config.on:
        return None, None
    sim = ValidatorSim(config.country).start() if config.simulated else None
    url = sim.url if sim is not None else config.port
    assert url is not None
    return AsyncValidator(url, country=config.country, timing=timing, on_event=on_event,
                          in_escrow=in_escrow).start(), sim
