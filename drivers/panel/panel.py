"""The panel the runtime talks to: it opens the pin map's devices through gpiozero and speaks in the product's
words ("light spot 3 as betting open", "show 1,250 on the credit meter", "flash win"; events such as "spot 3 bet
button pressed", "main door opened"). The runtime never touches a pin.

Threads: gpiozero reports edges on its own threads; the panel stamps each edge with its time there and hops
into the panel's clock (the runtime's asyncio loop) with call_soon_threadsafe. All logic, timers, lamp
patterns, display writes and every `on_event` call then run on that one loop thread, and every Panel method
must be called from it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable

import gpiozero
from gpiozero import Device, DigitalOutputDevice, InputDevice, PWMOutputDevice
from gpiozero.pins.mock import MockFactory, MockPWMPin

from .clock import Clock, LoopClock
from .config import ButtonSpec, DisplaySpec, LampSpec, PanelConfig, PulseSpec, SwitchSpec, pin_label
from .reels import Reel, ReelBank
from .events import PanelEvent
from .inputs import ButtonInput, InputLogic, PulseInput, SwitchInput
from .lamps import LOOKS, SPOT_LOOKS, Channel, LampEngine, group_pattern, look
from .max7219 import Max7219Chain, encode, render
from .wiring import BitBangSPI, WiredInput, WiredOutput, writer

if TYPE_CHECKING:
    from .sim import SimControls

__all__ = ["Panel", "PanelError", "open_panel", "OnEvent"]

log = logging.getLogger("croupier.panel")
OnEvent = Callable[[PanelEvent], None]


class PanelError(Exception):
    """The panel cannot do what was asked: no GPIO, a pin busy, an unknown device, a value a display cannot show."""


def open_panel(config: PanelConfig, *, loop: asyncio.AbstractEventLoop | None = None,
               clock: Clock | None = None) -> "Panel":
    """Open the devices of a pin map: real GPIO (`driver = "gpio"`, gpiozero's default pin factory, which
    GPIOZERO_PIN_FACTORY may set) or simulated pins (`driver = "sim"`).

    Timing runs on `loop` (default: the running loop), or on `clock` (a ManualClock in tests).
    """
    if clock is None:
        try:
            clock = LoopClock(loop or asyncio.get_running_loop())
        except RuntimeError:
            raise PanelError("open the panel inside the runtime's event loop, or pass loop= or clock=") from None
    elif loop is not None:
        raise ValueError("give loop or clock, not both")
    if config.driver == "sim":
        from .sim import SimFactory  # a wired panel never loads the simulation

        return Panel(config, clock, SimFactory(clock.now, config), owns_factory=True)
    try:
        Device.ensure_pin_factory()
    except gpiozero.GPIOZeroError as exc:
        raise PanelError(f"no GPIO here ({exc}); for simulation set driver = \"sim\" in [panel] "
                         "(or GPIOZERO_PIN_FACTORY=mock)") from exc
    return Panel(config, clock, Device.pin_factory, owns_factory=False)


class Panel:
    """Buttons, doors, switches, pulse lines, lamps, outputs, tower light and displays of one table or cabinet.

    Create it with `open_panel(config)`; `start(on_event)` begins delivering input events.
    """

    def __init__(self, config: PanelConfig, clock: Clock, factory: Any, *, owns_factory: bool) -> None:
        self.config = config
        self.clock = clock
        self._factory = factory
        self._owns_factory = owns_factory
        self._devices: list[Any] = []
        self._inputs: dict[str, WiredInput] = {}
        self._lamps: dict[str, tuple[LampSpec, Channel, Any]] = {}
        self._outputs: dict[str, tuple[WiredOutput, Any]] = {}
        self._tiers: dict[str, tuple[LampSpec, Channel, Any]] = {}
        self._conditions: set[str] = set()
        self._displays: dict[str, DisplaySpec] = {}
        self._chain: Max7219Chain | None = None
        self._spi: Any = None
        self._refresh_timer: Any = None
        self._on_event: OnEvent | None = None
        self._started = False
        self._closed = False
        self._reels: ReelBank | None = None
        self.engine = LampEngine(clock)
        try:
            self._open_devices()
        except BaseException:
            self.close()
            raise

    # -- construction ---------------------------------------------------------------------------------------

    def _make(self, where: str, pin: int, make: Callable[[], Any]) -> Any:
        try:
            device = make()
        except gpiozero.GPIOZeroError as exc:
            raise PanelError(f"{where} on {pin_label(pin)}: {exc}") from exc
        self._devices.append(device)
        return device

    def _open_devices(self) -> None:
        config, f = self.config, self._factory
        for spec in config.buttons + config.switches + config.pulses:
            pull_up = {"up": True, "down": False, "none": None}[spec.pull]
            section = ("buttons" if isinstance(spec, ButtonSpec) else "pulses" if isinstance(spec, PulseSpec)
                       else "doors" if spec.kind == "door" else "switches")
            device = self._make(f"{section}.{spec.name}", spec.pin, lambda: InputDevice(
                spec.pin, pull_up=pull_up, active_state=spec.active_high if pull_up is None else None,
                pin_factory=f))
            if isinstance(spec, ButtonSpec):
                logic: InputLogic = ButtonInput(spec, self.clock, self._emit)
            elif isinstance(spec, PulseSpec):
                logic = PulseInput(spec, self.clock, self._emit)
            else:
                logic = SwitchInput(spec, self.clock, self._emit)
            self._inputs[spec.name] = WiredInput(self, spec, logic, device)

        for lamp in config.lamps:
            device = self._output_device(f"lamps.{lamp.name}", lamp.pin, lamp.active_high, lamp.pwm)
            channel = Channel(lamp.name, writer(device), pwm=lamp.pwm, brightness=lamp.brightness)
            self._lamps[lamp.name] = (lamp, channel, device)
            self.engine.set_look(channel, LOOKS["off"])
        for out in config.outputs:
            device = self._output_device(f"outputs.{out.name}", out.pin, out.active_high, False)
            channel = Channel(out.name, writer(device))
            self._outputs[out.name] = (WiredOutput(out, channel, self.engine), device)
            self.engine.set_look(channel, LOOKS["off"])
        if config.tower:
            for tier in config.tower.tiers:
                device = self._output_device(f"tower.{tier.name}", tier.pin, tier.active_high, False)
                channel = Channel(tier.name, writer(device))
                self._tiers[tier.name] = (tier, channel, device)
                self.engine.set_look(channel, LOOKS["off"])
        if config.displays:
            self._open_displays()
        if config.reels:
            self._open_reels()

    def _open_reels(self) -> None:
        spec = self.config.reels
        assert spec is not None
        lines: dict[int, Any] = {}

        def line(where: str, pin: int, active_high: bool) -> Any:
            if pin not in lines:  # a dir or enable line shared by every driver is one device
                lines[pin] = self._output_device(where, pin, active_high, False)
            return lines[pin]

        reels = []
        enables, directions = [], []
        for i, r in enumerate(spec.reels):
            step = line(f"reels.{r.name}.step", r.step, True).pin
            enables.append(line(f"reels.{r.name}.enable", r.enable, spec.enable_active_high))
            directions.append(line(f"reels.{r.name}.dir", r.dir, spec.forward_high))
            pull_up = {"up": True, "down": False, "none": None}[r.home_pull]
            home = self._make(f"reels.{r.name}.home", r.home, lambda: InputDevice(
                r.home, pull_up=pull_up, active_state=r.home_active_high if pull_up is None else None,
                pin_factory=self._factory))

            def pulse(pin: Any = step) -> None:
                pin.state = 1  # straight to the pin: the driver latches on the rising edge
                pin.state = 0

            def sensor(device: Any = home, active_high: bool = r.home_active_high) -> bool:
                return bool(device.pin.state) == active_high

            reels.append(Reel(i, pulse, sensor))

        def set_enable(on: bool) -> None:
            for device in dict.fromkeys(enables):
                device.on() if on else device.off()

        def set_forward() -> None:
            for device in dict.fromkeys(directions):
                device.on()

        self._reels = ReelBank(spec, self.clock, reels, set_enable, set_forward)

    def _output_device(self, where: str, pin: int, active_high: bool, pwm: bool) -> Any:
        f = self._factory
        if pwm:
            make = lambda: PWMOutputDevice(pin, active_high=active_high, initial_value=0, pin_factory=f)  # noqa: E731
            if not isinstance(f, MockFactory):
                return self._make(where, pin, make)
            # Mock pins do PWM only when made as PWM pins (as gpiozero's own tests do it).
            saved, f.pin_class = f.pin_class, MockPWMPin
            try:
                return self._make(where, pin, make)
            finally:
                f.pin_class = saved
        return self._make(where, pin, lambda: DigitalOutputDevice(pin, active_high=active_high,
                                                                  initial_value=False, pin_factory=f))

    def _open_displays(self) -> None:
        chain = self.config.displays
        assert chain is not None
        if chain.bus and not isinstance(self._factory, MockFactory):
            # Hardware SPI0 through gpiozero (spidev); gpiozero falls back to bit-banging if the kernel lacks it.
            try:
                self._spi = self._factory.spi(clock_pin=chain.clock, mosi_pin=chain.data, miso_pin=None,
                                              select_pin=chain.select)
            except gpiozero.GPIOZeroError as exc:
                raise PanelError(f"displays on {pin_label(chain.clock)}, {pin_label(chain.data)}, "
                                 f"{pin_label(chain.select)}: {exc}") from exc
            self._devices.append(self._spi)
            transfer = self._spi.transfer
        else:
            # Mock pins, or a chain on any three pins: bit-bang the write-only bus ourselves (gpiozero's own
            # software SPI asks for the global default pin factory, which a simulation must not need).
            transfer = BitBangSPI(*(self._output_device(f"displays.{role}", pin, active_high, False)
                                     for role, pin, active_high in (("clock", chain.clock, True),
                                                                    ("data", chain.data, True),
                                                                    ("select", chain.select, False)))).transfer
        self._displays = {d.name: d for d in chain.displays}
        self._chain = Max7219Chain(transfer, [d.digits for d in chain.displays], [d.intensity for d in chain.displays])
        self._chain.configure()
        if chain.refresh:
            self._refresh_timer = self.clock.call_at(self.clock.now() + chain.refresh, self._refresh)

    def _refresh(self) -> None:
        assert self._chain is not None and self.config.displays is not None
        self._chain.configure()
        self._refresh_timer = self.clock.call_at(self.clock.now() + self.config.displays.refresh, self._refresh)

    # -- inputs -----------------------------------------------------------------------------------------------

    def start(self, on_event: OnEvent) -> None:
        """Begin reporting inputs: `on_event(event)` is called on the loop thread for every event. Inputs found
        active now are reported at once (a door already open: DoorOpened; a button already down: InputStuck).

        For a queue instead of a callback: `queue = asyncio.Queue(); panel.start(queue.put_nowait)`.
        """
        if self._started:
            raise PanelError("the panel has already started")
        self._started = True
        self._on_event = on_event
        for item in self._inputs.values():
            pin = item.device.pin
            pin.edges = "both"
            pin.when_changed = item.on_pin  # before reading the level, so no edge falls between the two
        now = self.clock.now()
        for item in self._inputs.values():
            item.logic.start(item.read(), now)

    def _emit(self, event: PanelEvent) -> None:
        log.debug("panel: %s", event)
        if self._on_event is None:
            return
        try:
            self._on_event(event)
        except Exception:  # noqa: BLE001 - a failing listener must not stop the panel
            log.exception("panel: the event listener failed on %r", event)

    def is_active(self, name: str) -> bool:
        """The debounced state of an input: pressed, open, on, or mid-pulse."""
        return self._input(name).logic.active

    def door_open(self, name: str) -> bool:
        item = self._input(name)
        if not isinstance(item.spec, SwitchSpec) or item.spec.kind != "door":
            raise PanelError(f"{name} is not a door")
        return item.logic.active

    def pulse_count(self, name: str) -> tuple[int, int]:
        """(counted, rejected) pulses on a pulse line since the panel opened."""
        logic = self._input(name).logic
        if not isinstance(logic, PulseInput):
            raise PanelError(f"{name} is not a pulse line")
        return logic.count, logic.rejected

    # -- lamps, tower light and outputs -----------------------------------------------------------------------

    def light(self, lamp: str, how: str) -> None:
        """Give a lamp its look: "off", "on", "slow_blink", "blink", "fast_blink", "flash", "pulse", or a spot
        look such as "betting_open"."""
        self.engine.set_look(self._lamp(lamp), self._look(how))

    def light_spot(self, spot: int, how: str) -> None:
        """Light spot N's lamps as "betting_open", "bet_placed", "to_act", "win", "push", "lose" or "off"."""
        channels = [channel for spec, channel, _ in self._lamps.values() if spec.spot == spot]
        if not channels:
            raise PanelError(f"no lamp for spot {spot}")
        pattern = self._look(how)
        for channel in channels:
            self.engine.set_look(channel, pattern)

    def set_brightness(self, lamp: str, level: float) -> None:
        """Dim a PWM lamp (0.0 .. 1.0); its looks and patterns keep running at the new brightness."""
        channel = self._lamp(lamp)
        if not self._lamps[lamp][0].pwm:
            raise PanelError(f"lamp {lamp} is not wired for PWM, so it cannot be dimmed")
        if not 0.0 <= level <= 1.0:
            raise PanelError(f"brightness {level} is outside 0..1")
        channel.brightness = level
        self.engine.redraw(channel)

    def play(self, pattern: str, group: str = "all", seconds: float | None = None) -> None:
        """Play a group pattern ("attract", "win", "tilt", or any look) over a lamp group, for `seconds` or
        until stopped; the lamps then show their own looks again."""
        channels = self._group(group)
        try:
            built = group_pattern(pattern, len(channels))
        except KeyError:
            raise PanelError(f"no lamp pattern {pattern!r} (patterns: attract, win, tilt, or a look: "
                             f"{', '.join(LOOKS)})") from None
        self.engine.play(built, channels, seconds)

    def stop(self, group: str = "all") -> None:
        """End the group pattern on a group's lamps."""
        self.engine.stop(self._group(group))

    def flash_win(self, seconds: float | None = 3.0) -> None:
        self.play("win", self._named_group("win"), seconds)

    def attract(self, on: bool = True) -> None:
        self.play("attract", self._named_group("attract")) if on else self.stop(self._named_group("attract"))

    def flash_tilt(self, on: bool = True) -> None:
        self.play("tilt", self._named_group("tilt")) if on else self.stop(self._named_group("tilt"))

    def tower_light(self, condition: str, on: bool = True) -> None:
        """Raise or clear a tower light condition ("service", "door_open", "tilt", "hand_pay" by default); each
        tier shows the highest-priority raised condition that uses it."""
        tower = self.config.tower
        if tower is None:
            raise PanelError("this panel has no tower light")
        if condition not in dict(tower.conditions):
            raise PanelError(f"the tower light has no condition {condition!r} "
                             f"(conditions: {', '.join(c for c, _ in tower.conditions)})")
        (self._conditions.add if on else self._conditions.discard)(condition)
        for tier, (_, channel, _) in self._tiers.items():
            how = next((dict(looks)[tier] for name, looks in tower.conditions
                        if name in self._conditions and tier in dict(looks)), "off")
            self.engine.set_look(channel, LOOKS[how])

    @property
    def tower_conditions(self) -> frozenset[str]:
        return frozenset(self._conditions)

    def set_output(self, name: str, on: bool) -> None:
        """Switch a plain output (hopper motor, ...) on or off."""
        output, _ = self._output(name)
        self.engine.set_look(output.channel, LOOKS["on" if on else "off"])

    def pulse_output(self, name: str, count: int = 1) -> None:
        """Queue `count` pulses on an output (an electromechanical meter): each `pulse` seconds on, `gap` off."""
        if count < 1:
            raise PanelError(f"pulse count {count} is not positive")
        self._output(name)[0].pulse(count)

    def pending_pulses(self, name: str) -> int:
        return self._output(name)[0].pending

    def lamp_level(self, name: str) -> float:
        """What a lamp, output or tower tier was last told (0.0 .. 1.0)."""
        return self._channel(name)[0].level or 0.0

    # -- mechanical reels -------------------------------------------------------------------------------------

    @property
    def reels(self) -> int:
        """How many mechanical reels the pin map has (0: the reels are on a screen)."""
        return len(self._reels.reels) if self._reels else 0

    def _bank(self) -> ReelBank:
        if self._reels is None:
            raise PanelError("this panel has no mechanical reels ([panel.reels])")
        return self._reels

    def spin_reels(self, stops: tuple[int, ...], on_done: Callable[[list[str | None]], None]) -> None:
        """Turn the reels to these physical stops, left to right; `on_done(errors)` when they rest, with one
        entry per reel: None, or the mis-index that stopped it."""
        bank = self._bank()
        try:
            bank.spin(tuple(stops), on_done)
        except (ValueError, RuntimeError) as exc:
            raise PanelError(str(exc)) from None

    def home_reels(self, on_done: Callable[[list[str | None]], None]) -> None:
        """Turn each reel until its index flag reaches the sensor."""
        self._bank().home(on_done)

    @property
    def reels_busy(self) -> bool:
        return self._reels is not None and self._reels.busy

    def reel_status(self) -> list[dict[str, Any]]:
        """Each reel as counted: steps past the index, the stop on the payline, homed, the last error."""
        bank = self._bank()
        return [{"position": r.position, "stop": bank.stop_of(i), "homed": r.homed, "error": r.error}
                for i, r in enumerate(bank.reels)]

    # -- displays ---------------------------------------------------------------------------------------------

    def show(self, display: str, value: int | str | None) -> None:
        """Show a number (right-aligned: 1250 -> "    1250"), a text ("PAid", "-- --"; '.' lights a decimal
        point) or nothing (None) on a display. A value the display cannot show raises PanelError, so a meter
        never shows a wrong number."""
        spec = self._display_spec(display)
        if value is None:
            text = ""
        elif isinstance(value, bool) or not isinstance(value, (int, str)):
            raise PanelError(f"display {display}: cannot show {value!r}")
        else:
            text = str(value)
        try:
            cells = encode(text, spec.digits)
        except ValueError as exc:
            raise PanelError(f"display {display}: {exc}") from None
        assert self._chain is not None
        self._chain.set_cells(spec.position, cells)

    def show_lamps(self, display: str, lit: int) -> None:
        """Light the first `lit` LEDs of a MAX7219 wired as a lamp driver (up to 8 LEDs a digit, segment A to DP,
        digits left to right): a meter shown as a bar of lamps."""
        spec = self._display_spec(display)
        if isinstance(lit, bool) or not isinstance(lit, int) or not 0 <= lit <= 8 * spec.digits:
            raise PanelError(f"display {display}: cannot light {lit!r} of its {8 * spec.digits} lamps")
        order = (0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01, 0x80)  # segments A..G, then DP
        cells = tuple(sum(order[:max(0, min(8, lit - 8 * i))]) for i in range(spec.digits))
        assert self._chain is not None
        self._chain.set_cells(spec.position, cells)

    def show_spot(self, spot: int, value: int | str | None, role: str = "bet") -> None:
        """Show a value on spot N's display (its bet display unless `role` says otherwise)."""
        for spec in self._displays.values():
            if spec.spot == spot and spec.role == role:
                return self.show(spec.name, value)
        raise PanelError(f"no {role} display for spot {spot}")

    def shown(self, display: str) -> str:
        """What a display was last sent, as it reads ("    1250")."""
        spec = self._display_spec(display)
        assert self._chain is not None
        return render(self._chain.cells[spec.position])

    def set_intensity(self, display: str, level: int) -> None:
        spec = self._display_spec(display)
        assert self._chain is not None
        try:
            self._chain.set_intensity(spec.position, level)
        except ValueError as exc:
            raise PanelError(f"display {display}: {exc}") from None

    # -- simulation, state and shutdown -----------------------------------------------------------------------

    @property
    def simulated(self) -> bool:
        return bool(getattr(self._factory, "simulated", False))

    @property
    def sim(self) -> "SimControls":
        """Controls of a simulated panel (press buttons, open doors, drop coins, read lamps and displays)."""
        if not self.simulated:
            raise PanelError("this panel is not simulated (driver = \"gpio\")")
        controls: SimControls = self._factory.controls(self)
        return controls

    def status(self) -> dict[str, Any]:
        """Everything at a glance, for diagnostics screens."""
        return {
            "inputs": {name: item.logic.active for name, item in self._inputs.items()},
            "lamps": {name: channel.level for name, (_, channel, _) in self._lamps.items()},
            "outputs": {name: out.channel.level for name, (out, _) in self._outputs.items()},
            "tower": sorted(self._conditions),
            "displays": {name: self.shown(name) for name in self._displays},
        }

    def close(self) -> None:
        """Stop reporting, turn every output off, blank the displays and release the pins."""
        if self._closed:
            return
        self._closed = True
        if self._refresh_timer is not None:
            self._refresh_timer.cancel()
        if self._reels is not None:
            try:
                self._reels.close()
            except Exception:  # noqa: BLE001 - closing anyway
                log.exception("panel: could not stop the reels")
        for item in self._inputs.values():
            try:
                item.device.pin.when_changed = None
            except Exception:  # noqa: BLE001 - closing anyway
                pass
            item.logic.close()
        channels = ([c for _, c, _ in self._lamps.values()] + [o.channel for o, _ in self._outputs.values()]
                    + [c for _, c, _ in self._tiers.values()])
        for channel in channels:
            for run in (channel.overlay, channel.look):
                if run is not None:
                    run.cancel()
            try:
                channel.show(0.0)
            except Exception:  # noqa: BLE001
                log.exception("panel: could not turn %s off", channel.name)
        if self._chain is not None:
            try:
                self._chain.shutdown()
            except Exception:  # noqa: BLE001
                log.exception("panel: could not blank the displays")
        for device in reversed(self._devices):
            try:
                device.close()
            except Exception:  # noqa: BLE001
                log.exception("panel: could not close %r", device)
        if self._owns_factory:
            self._factory.close()

    def __enter__(self) -> "Panel":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- lookups ----------------------------------------------------------------------------------------------

    def _look(self, how: str) -> Any:
        try:
            return look(how)
        except KeyError:
            raise PanelError(f"no look {how!r} (looks: {', '.join(list(SPOT_LOOKS) + list(LOOKS))})") from None

    @staticmethod
    def _named(table: dict[str, Any], name: str, kind: str) -> Any:
        if name not in table:
            raise PanelError(f"no {kind} named {name!r} ({kind}s: {', '.join(table) or 'none'})")
        return table[name]

    def _input(self, name: str) -> WiredInput:
        return self._named(self._inputs, name, "input")

    def _lamp(self, name: str) -> Channel:
        return self._named(self._lamps, name, "lamp")[1]

    def _output(self, name: str) -> tuple[WiredOutput, Any]:
        return self._named(self._outputs, name, "output")

    def _group(self, group: str) -> tuple[Channel, ...]:
        try:
            names = self.config.group(group)
        except KeyError:
            raise PanelError(f"no lamp group {group!r}") from None
        if not names:
            raise PanelError(f"lamp group {group!r} is empty")
        return tuple(self._lamps[name][1] for name in names)

    def _named_group(self, name: str) -> str:
        return name if name in dict(self.config.groups) else "all"

    def _display_spec(self, name: str) -> DisplaySpec:
        return self._named(self._displays, name, "display")

    def _pulse_spec(self, name: str) -> PulseSpec:
        spec = self._input(name).spec
        if not isinstance(spec, PulseSpec):
            raise PanelError(f"{name} is not a pulse line")
        return spec

    def _pin(self, name: str) -> Any:
        """The pin of "section.name" (as in the wiring table) or of a unique name."""
        section, _, short = name.rpartition(".")
        found = []
        if section in ("", "buttons", "doors", "switches", "pulses") and short in self._inputs:
            found.append(self._inputs[short].device.pin)
        if section in ("", "lamps") and short in self._lamps:
            found.append(self._lamps[short][2].pin)
        if section in ("", "outputs") and short in self._outputs:
            found.append(self._outputs[short][1].pin)
        if section in ("", "tower") and short in self._tiers:
            found.append(self._tiers[short][2].pin)
        if len(found) != 1:
            raise PanelError(f"{'no' if not found else 'more than one'} device named {name!r}"
                             + (" (say buttons.NAME or lamps.NAME)" if found else ""))
        return found[0]

    def _channel(self, name: str) -> tuple[Channel, Any, bool]:
        """(channel, gpiozero device, active_high) of a lamp, plain output or tower tier."""
        if name in self._lamps:
            lamp, channel, device = self._lamps[name]
            return channel, device, lamp.active_high
        if name in self._outputs:
            output, device = self._outputs[name]
            return output.channel, device, output.spec.active_high
        if name in self._tiers:
            tier, channel, device = self._tiers[name]
            return channel, device, tier.active_high
        raise PanelError(f"no lamp, output or tower tier named {name!r}")
