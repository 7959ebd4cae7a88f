"""The simulated panel: gpiozero's mock pins on the panel's clock, a MAX7219 chain that decodes its wire, and
controls to press buttons, open doors and drop coins by name (tests, `croupier panel-test --sim`, `run --sim`).

Everything that makes a simulation differ from wiring lives in `SimFactory`, as gpiozero keeps it in its pin
factories: the panel opens the same devices on it as on real pins and never asks which it has."""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING, Any, Callable

from gpiozero.pins.mock import (MockFactory, MockPin, MockPWMPin, MockSPIClockPin, MockSPIDevice,
                                MockSPISelectPin, PinState)

from .config import PanelConfig, ReelSpec, ReelsSpec
from .max7219 import CODE_B, DECODE_MODE, DIGIT0, DISPLAY_TEST, DP, INTENSITY, SCAN_LIMIT, SEGMENTS, SHUTDOWN, render

if TYPE_CHECKING:
    from .panel import Panel

__all__ = ["SimFactory", "SimPin", "SimInputPin", "SimPWMPin", "SimStepPin", "SimChip", "SimMax7219", "SimReel",
           "SimHopper", "SimControls", "timeline"]

# Each simulated pin keeps its most recent changes only: an SPI clock toggles 32 times a word, and a simulated
# table may run for days.
HISTORY = 20_000


class SimPin(MockPin):
    """A mock pin whose recorded changes are stamped by the factory's clock (a ManualClock in tests), or by the
    time a simulated device meant the change to happen (`stamp`), so a busy event loop that runs the change
    late does not stretch a simulated pulse."""

    stamp: float | None = None

    def _change_state(self, value: bool | float) -> bool:
        if self._state != value:  # type: ignore[has-type]
            t = self._factory.ticks() if self.stamp is None else min(self.stamp, self._factory.ticks())
            self._state = value
            self.states.append(PinState(t - self._last_change, value))  # type: ignore[has-type]
            self._last_change = t
            return True
        return False

    def clear_states(self) -> None:
        self._last_change = self._factory.ticks()
        self.states = deque([PinState(0.0, self._state)], maxlen=HISTORY)


class SimPWMPin(SimPin, MockPWMPin):
    """A PWM-capable SimPin (lamps wired for brightness)."""


class SimInputPin(SimPin):
    """An input pin that rests at its simulated level (a button up, a door shut, a coin line quiet, a reel's
    sensor as its flag stands). gpiozero drives a mock input to its pull whenever a device sets the pin up, which
    would leave every active-low button pressed."""

    idle: Callable[[], bool] = staticmethod(lambda: False)

    def _set_pull(self, value: str) -> None:
        super()._set_pull(value)
        self.drive_high() if self.idle() else self.drive_low()


class SimStepPin(SimPin):
    """An output pin that tells a simulated motor of each rising edge (a stepper driver's STEP input)."""

    on_rise: Callable[[], None] | None = None

    def _change_state(self, value: bool | float) -> bool:
        changed = super()._change_state(value)
        if changed and value and self.on_rise is not None:
            self.on_rise()
        return changed


class _SimSPIClockPin(SimPin, MockSPIClockPin):
    pass


class _SimSPISelectPin(SimPin, MockSPISelectPin):
    pass


class SimFactory(MockFactory):
    """gpiozero's MockFactory with the panel's notion of time (`ticks`), so pin histories and edge times agree
    with the panel's timers, and, given a pin map, the machinery wired to it: inputs resting idle, PWM lamp
    pins, a MAX7219 chain on the display pins, stepper reels with their index sensors, and parts attached later
    (a hopper). Pass `ManualClock().now` in tests; the default is the monotonic clock that asyncio uses."""

    simulated = True

    def __init__(self, ticks: Callable[[], float] = time.monotonic, config: PanelConfig | None = None) -> None:
        self._ticks = ticks
        super().__init__(pin_class=SimPin)
        self.chain: SimMax7219 | None = None
        self.reels: list[SimReel] = []
        self.parts: list[Any] = []                   # simulated machinery attached later (a hopper)
        self.line_free: dict[str, float] = {}        # per pulse line: when the last train scheduled on it is over
        if config is not None:
            self._wire(config)

    def _wire(self, config: PanelConfig) -> None:
        # The reels hold their step and sensor pins before the panel's devices open them.
        if config.reels:
            self.reels = [SimReel(self, config.reels, reel, start=7 + 11 * i)
                          for i, reel in enumerate(config.reels.reels)]
        for spec in config.buttons + config.switches + config.pulses:
            pin = self.pin(spec.pin, pin_class=SimInputPin)
            pin.idle = (lambda high: lambda: high)(not spec.active_high)
        for lamp in config.lamps:
            if lamp.pwm:
                self.pin(lamp.pin, pin_class=SimPWMPin)
        chain = config.displays
        if chain:
            self.chain = SimMax7219(self, chain.clock, chain.data, chain.select, len(chain.displays))

    def ticks(self) -> float:
        return self._ticks()

    def controls(self, panel: "Panel") -> "SimControls":
        """Controls of the panel opened on these pins."""
        return SimControls(panel, self)

    def close(self) -> None:
        for part in self.parts:
            part.close()
        self.parts = []
        if self.chain is not None:
            self.chain.close()
            self.chain = None
        super().close()


def timeline(pin: MockPin) -> list[tuple[float, bool | float]]:
    """A pin's history as (seconds since the previous change, state), as gpiozero's assert_states_and_times
    expects it; rounded to the microsecond so tests compare exactly."""
    return [(round(state.timestamp, 6), state.state) for state in pin.states]


class SimChip:
    """One simulated MAX7219: its registers, and what its digits read as."""

    def __init__(self) -> None:
        self.digits = [0] * 8            # DIG0..DIG7 as last latched
        self.decode_mode = 0
        self.intensity = 0
        self.scan_limit = 0
        self.on = False                  # the chip powers up in shutdown
        self.test = False

    def write(self, register: int, data: int) -> None:
        if DIGIT0 <= register < DIGIT0 + 8:
            self.digits[register - DIGIT0] = data
        elif register == DECODE_MODE:
            self.decode_mode = data
        elif register == INTENSITY:
            self.intensity = data & 0x0F
        elif register == SCAN_LIMIT:
            self.scan_limit = data & 0x07
        elif register == SHUTDOWN:
            self.on = bool(data & 1)
        elif register == DISPLAY_TEST:
            self.test = bool(data & 1)

    def _cell(self, register: int) -> int:
        data = self.digits[register]
        if self.decode_mode >> register & 1:  # Code B: convert to the equivalent segments
            return SEGMENTS[CODE_B[data & 0x0F]] | (data & DP)
        return data

    @property
    def cells(self) -> list[int]:
        """Segments of the scanned digits, left to right, as lit (all off in shutdown, all on in test)."""
        count = 8 if self.test else self.scan_limit + 1
        if self.test:
            return [0xFF] * count
        if not self.on:
            return [0] * count
        return [self._cell(register) for register in range(count - 1, -1, -1)]

    @property
    def shown(self) -> str:
        """Every scanned digit, blanks included ("    1250")."""
        return render(self.cells)

    @property
    def text(self) -> str:
        """What a person reads ("1250")."""
        return self.shown.strip()


class SimMax7219(MockSPIDevice):
    """A chain of simulated MAX7219s on mock SPI pins: bits shift through every chip's 16-bit register as they
    would through the real chain, and LOAD/CS rising latches each chip's word."""

    def __init__(self, factory: SimFactory, clock: int, data: int, select: int, chips: int) -> None:
        factory.pin(clock, pin_class=_SimSPIClockPin)
        factory.pin(select, pin_class=_SimSPISelectPin)
        factory.pin(data)
        self.chips = [SimChip() for _ in range(chips)]
        self._shift = 0
        self._mask = (1 << (16 * chips)) - 1
        super().__init__(clock, data, None, select, pin_factory=factory)

    def on_select(self) -> None:
        if self.select_pin.state == self.select_high:
            self.on_start()
        else:
            for index, chip in enumerate(self.chips):  # chip 0, nearest the Pi, holds the last word sent
                word = self._shift >> (16 * index) & 0xFFFF
                chip.write(word >> 8 & 0x0F, word & 0xFF)

    def on_bit(self) -> None:
        self._shift = (self._shift << 1 | int(self.rx_buf.pop())) & self._mask


class SimReel:
    """A simulated mechanical reel: it turns one step per STEP pulse while its driver is enabled, and its index
    flag covers the optical sensor for `flag` steps a turn. `slip(steps)` turns it behind the driver's back (a
    jam, a slipping belt); `sensor_dead` leaves the sensor dark."""

    def __init__(self, factory: SimFactory, spec: ReelsSpec, reel: ReelSpec, start: int = 0, flag: int = 3) -> None:
        self.spec = spec
        self.reel = reel
        self.factory = factory
        self.position = start % spec.steps   # physical steps past the index
        self.flag = flag
        self.sensor_dead = False
        self.steps_taken = 0
        pin = factory.pin(reel.step, pin_class=SimStepPin)
        pin.on_rise = self._step
        self._enable, self._dir = factory.pin(reel.enable), factory.pin(reel.dir)
        self._home = factory.pin(reel.home, pin_class=SimInputPin)
        self._home.idle = self._level
        self._sense()

    def _step(self) -> None:
        if bool(self._enable.state) != self.spec.enable_active_high:
            return  # the driver is off: the motor does not turn
        forward = bool(self._dir.state) == self.spec.forward_high
        self.position = (self.position + (1 if forward else -1)) % self.spec.steps
        self.steps_taken += 1
        self._sense()

    def slip(self, steps: int) -> None:
        self.position = (self.position + steps) % self.spec.steps
        self._sense()

    def _level(self) -> bool:
        covered = self.position < self.flag and not self.sensor_dead
        return covered == self.reel.home_active_high

    def _sense(self) -> None:
        level = self._level()
        if bool(self._home.state) != level:
            self._home.drive_high() if level else self._home.drive_low()

    @property
    def stop(self) -> int:
        """The physical stop on the payline (the nearest one)."""
        spec = self.spec
        return round((self.position - spec.offset) * spec.stops / spec.steps) % spec.stops

    @property
    def centred(self) -> bool:
        """Whether the reel rests exactly on a stop."""
        from .reels import stop_position

        return self.position == stop_position(self.spec, self.stop)


class SimHopper:
    """A simulated coin hopper: while its motor output is on it pays `rate` coins a second through the coin-out
    sensor's pulse line, until it holds no more coins. `runaway` keeps it paying with the motor off. Each coin
    is decided once the panel has reported the previous one (the runtime stops the motor on the last coin of a
    payout as it hears of it), so a busy event loop cannot make the simulation pay a coin too many."""

    def __init__(self, panel: "Panel", motor: str = "hopper_motor", sensor: str = "coin_out", coins: int = 500,
                 rate: float = 20.0) -> None:
        self.panel = panel
        self.motor, self.sensor = motor, sensor
        self.coins = coins
        self.rate = rate
        self.runaway = False
        self.paid = 0
        self._reported = sum(panel.pulse_count(sensor))  # pulses the panel has reported (counted or rejected)
        self._timer = panel.clock.call_at(panel.clock.now(), self._tick)

    def _tick(self) -> None:
        clock = self.panel.clock
        if sum(self.panel.pulse_count(self.sensor)) < self._reported:
            self._timer = clock.call_at(clock.now() + 0.001, self._tick)  # the last coin is not reported yet
            return
        running = self.panel.lamp_level(self.motor) >= 0.5 or self.runaway
        if running and self.coins > 0:
            spec = self.panel._pulse_spec(self.sensor)
            width = min(spec.min_width * 1.5, (spec.min_width + spec.max_width) / 2)
            self.coins -= 1
            self.paid += 1
            self._reported += 1
            now = clock.now()
            self.panel.sim.set(self.sensor, True, now)
            self._timer = clock.call_at(now + width, self._release, now + width)
        else:
            self._timer = clock.call_at(clock.now() + 1.0 / self.rate, self._tick)

    def _release(self, at: float) -> None:
        self.panel.sim.set(self.sensor, False, at)
        # The next look at the motor is a later timer, so the coin's event reaches the runtime (which stops the
        # motor on the last coin of a payout) before it.
        spec = self.panel._pulse_spec(self.sensor)
        width = min(spec.min_width * 1.5, (spec.min_width + spec.max_width) / 2)
        start = max(at - width + 1.0 / self.rate, at + spec.min_gap * 1.5)
        self._timer = self.panel.clock.call_at(max(start, self.panel.clock.now()), self._tick)

    def close(self) -> None:
        self._timer.cancel()


class SimControls:
    """Drive a simulated panel's inputs by name and read back its lamps and displays as a person would."""

    def __init__(self, panel: "Panel", factory: SimFactory) -> None:
        self._panel = panel
        self.factory = factory
        self.chain = factory.chain
        self._line_free = factory.line_free

    def pin(self, name: str) -> MockPin:
        """The mock pin of an input, lamp, output or tower tier (for assert_states_and_times)."""
        return self._panel._pin(name)

    def set(self, name: str, active: bool, at: float | None = None) -> None:
        """Drive an input; `at` is when the change was meant to happen on the panel's clock (a scheduled edge
        that runs late still carries its own time)."""
        item = self._panel._input(name)
        pin = item.device.pin
        pin.stamp = at
        try:
            pin.drive_high() if active == item.spec.active_high else pin.drive_low()
        finally:
            pin.stamp = None

    def press(self, name: str) -> None:
        self.set(name, True)

    def release(self, name: str) -> None:
        self.set(name, False)

    def open_door(self, name: str) -> None:
        self.set(name, True)

    def close_door(self, name: str) -> None:
        self.set(name, False)

    def tap(self, name: str, seconds: float) -> None:
        """Press now and release `seconds` later on the panel's clock."""
        self.press(name)
        clock = self._panel.clock
        clock.call_at(clock.now() + seconds, self.release, name)

    def coins(self, name: str, count: int = 1, width: float | None = None, gap: float | None = None) -> float:
        """Schedule `count` pulses on a pulse line (valid ones unless width/gap say otherwise); returns the
        seconds the train lasts."""
        spec = self._panel._pulse_spec(name)
        width = (spec.min_width + spec.max_width) / 2 if width is None else width
        gap = max(spec.min_gap * 2, width) if gap is None else gap
        clock = self._panel.clock
        # a train asked for while the last one is still on the line follows it, a gap after its last pulse
        start = max(clock.now(), self._line_free.get(name, float("-inf")))
        for i in range(count):
            at = start + i * (width + gap)
            clock.call_at(at, self.set, name, True, at)
            clock.call_at(at + width, self.set, name, False, at + width)
        self._line_free[name] = start + count * (width + gap)
        return self._line_free[name] - clock.now()

    def lamp(self, name: str) -> float:
        """How lit a lamp, output or tower tier is, from its pin (0.0 .. 1.0)."""
        _, device, active_high = self._panel._channel(name)
        level = float(device.pin.state)
        return level if active_high else 1.0 - level

    def display(self, name: str) -> SimChip:
        """The simulated chip behind a display, decoded from the bits on its wires."""
        if self.chain is None:
            raise KeyError("this panel has no displays")
        return self.chain.chips[self._panel._display_spec(name).position]

    def reel(self, index: int) -> SimReel:
        """Simulated reel `index` (0 is the leftmost): where it physically is, and faults to inject."""
        return self.factory.reels[index]

    def hopper(self, **kw: Any) -> SimHopper:
        """Attach a simulated hopper to the hopper motor and coin-out line (kept until the panel closes)."""
        hopper = SimHopper(self._panel, **kw)
        self.factory.parts.append(hopper)
        return hopper
