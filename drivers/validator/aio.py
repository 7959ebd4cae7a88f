"""The bill validator driver for an asyncio runtime: ValidatorLink's face over ValidatorDriver's thread.

The hand-off from the driver's thread to the loop is drivers.aio.AsyncDriver's: the runtime sees the events on its
own thread, in the order the validator reported them, and never blocks the serial line:

    async with AsyncValidator(url, on_event=cabinet.on_validator_event, country="USD") as validator:
        validator.enable(frozenset({100, 500, 2000}), tickets=True)
        ...                                  # on Escrowed: validator.stack() or validator.return_item()

Without `on_event` the events queue up for `await validator.get()` / `async for event in validator`.
"""

from __future__ import annotations

from typing import Callable

from drivers.aio import AsyncDriver

from .config import ValidatorConfig
from .driver import DriverTiming, ValidatorDriver
from .events import ValidatorEvent
from .protocol import Item
from .sim import ValidatorSim

__all__ = ["AsyncValidator", "start_validator"]


class AsyncValidator(AsyncDriver[ValidatorEvent, ValidatorDriver]):
    """Implements drivers.validator.events.ValidatorLink."""

    forget_on_stop = True

    def __init__(self, url: str, *, country: str = "USD", timing: DriverTiming | None = None,
                 on_event: Callable[[ValidatorEvent], None] | None = None, in_escrow: Item | None = None) -> None:
        """`in_escrow`: the journal's escrowed item at start (see ValidatorDriver)."""
        super().__init__(on_event)
        self.url, self.country, self.timing = url, country, timing
        self.in_escrow = in_escrow

    def _driver_for(self, hand_off: Callable[[ValidatorEvent], None]) -> ValidatorDriver:
        return ValidatorDriver(self.url, hand_off, country=self.country, timing=self.timing,
                               in_escrow=self.in_escrow)

    def stack(self) -> None:
        self._driver().stack()

    def return_item(self) -> None:
        self._driver().return_item()

    def enable(self, notes: frozenset[int], tickets: bool) -> None:
        self._driver().enable(notes, tickets)



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
