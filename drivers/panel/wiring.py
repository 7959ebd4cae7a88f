"""What stands between a gpiozero device and the panel's logic: an input with its debouncing logic (`WiredInput`), a
plain output with its queued pulses (`WiredOutput`), a channel's writer (`writer`) and a bit-banged SPI bus for the
display chain (`BitBangSPI`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from gpiozero import DigitalOutputDevice, InputDevice, PWMOutputDevice

from .config import ButtonSpec, OutputSpec, PulseSpec, SwitchSpec
from .inputs import InputLogic
from .lamps import Channel, LampEngine, pulses

if TYPE_CHECKING:
    from .panel import Panel


class WiredInput:
    """An input device and its logic; `on_pin` is gpiozero's callback (it runs on gpiozero's thread)."""

    def __init__(self, panel: "Panel", spec: ButtonSpec | SwitchSpec | PulseSpec, logic: InputLogic,
                 device: InputDevice) -> None:
        self.panel = panel
        self.spec = spec
        self.logic = logic
        self.device = device

    def read(self) -> bool:
        return bool(self.device.pin.state) == self.spec.active_high

    def on_pin(self, ticks: Any, state: Any) -> None:
        factory, clock = self.panel._factory, self.panel.clock
        # The edge's age by the pin factory's own clock, so its time survives the hop into the loop.
        try:
            age = factory.ticks_diff(factory.ticks(), ticks)
        except Exception:  # noqa: BLE001 - opaque ticks from an unusual factory: take the edge as new
            age = 0.0
        if not 0.0 <= age < 1.0:
            age = 0.0
        if state not in (0, 1):  # e.g. lgpio's watchdog report: read the level instead
            state = self.device.pin.state
        active = bool(state) == self.spec.active_high
        try:
            clock.call_soon_threadsafe(self.logic.edge, clock.now() - age, active)
        except RuntimeError:
            pass  # the loop has closed: the panel is shutting down


class WiredOutput:
    """A plain output: on/off as its look, counted pulses queued above it."""

    def __init__(self, spec: OutputSpec, channel: Channel, engine: LampEngine) -> None:
        self.spec = spec
        self.channel = channel
        self.engine = engine
        self.pending = 0

    def pulse(self, count: int) -> None:
        idle = self.pending == 0
        self.pending += count
        if idle:
            self._next()

    def _next(self) -> None:
        if self.pending:
            self.engine.play(pulses(self.spec.pulse, self.spec.gap), (self.channel,), on_end=self._done)

    def _done(self) -> None:
        self.pending -= 1
        self._next()


class BitBangSPI:
    """SPI mode 0, MSB first, write only: what a MAX7219 chain needs, over three output devices (clock and data
    active high, select active low). Bits go straight to the pins: the devices only reserve them."""

    def __init__(self, clock: DigitalOutputDevice, data: DigitalOutputDevice, select: DigitalOutputDevice) -> None:
        self.clock, self.data, self.select = clock.pin, data.pin, select.pin

    def transfer(self, frame: list[int]) -> None:
        clock, data = self.clock, self.data
        self.select.state = 0  # LOAD/CS low
        try:
            for byte in frame:
                for bit in range(7, -1, -1):
                    data.state = byte >> bit & 1
                    clock.state = 1  # the chip samples DIN on the rising edge
                    clock.state = 0
        finally:
            self.select.state = 1  # the rising edge latches every chip's word


def writer(device: Any) -> Callable[[float], None]:
    if isinstance(device, PWMOutputDevice):
        def write(level: float) -> None:
            device.value = level
    else:
        def write(level: float) -> None:
            device.on() if level else device.off()
    return write
