"""Input logic over timestamped edges: debounce, press/release/hold, door and key switches, pulse validation.

Pure of hardware: each class is fed `edge(at, active)` (the pin's time of the change and its new level) on the
clock's thread, asks the clock for timers, and emits PanelEvents. panel.py binds them to gpiozero pins.
"""

from __future__ import annotations

import logging
from typing import Callable

from .clock import Clock, Timer
from .config import ButtonSpec, PulseSpec, SwitchSpec
from .events import (ButtonHeld, ButtonPressed, ButtonReleased, DoorClosed, DoorOpened, InputFreed, InputStuck,
                     PanelEvent, PulseCounted, PulseRejected, SwitchOff, SwitchOn)

__all__ = ["Debouncer", "ButtonInput", "SwitchInput", "PulseInput", "InputLogic"]

log = logging.getLogger("croupier.panel")
Emit = Callable[[PanelEvent], None]

# Float slack when comparing an edge's age with a threshold: timestamps are sums of floats.
EPS = 1e-9


class Debouncer:
    """Accepts a level only once it has held for `bounce` seconds, as the kernel's GPIO debounce does.

    The accepted change is dated at the edge that began the stable level, so press times and pulse widths stay
    exact. A level that is already older than `bounce` when the next edge arrives (the loop was busy) is
    accepted from the timestamps alone, so a late event loop never loses a press.
    """

    def __init__(self, clock: Clock, bounce: float, level: bool, on_change: Callable[[float, bool], None]) -> None:
        self.clock = clock
        self.bounce = bounce
        self.level = level          # the accepted (debounced) level
        self._raw = level           # the level of the last edge
        self._raw_at = float("-inf")
        self._timer: Timer | None = None
        self._on_change = on_change

    def edge(self, at: float, level: bool) -> None:
        if level == self._raw:
            return  # a repeated report of the same level (edge detection may read the level late)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            if at - self._raw_at >= self.bounce - EPS:
                self._settle()
        self._raw, self._raw_at = level, at
        if self.bounce <= 0:
            self._settle()
        else:
            self._timer = self.clock.call_at(at + self.bounce, self._expired)

    def _expired(self) -> None:
        self._timer = None
        self._settle()

    def _settle(self) -> None:
        if self._raw != self.level:
            self.level = self._raw
            self._on_change(self._raw_at, self._raw)

    def reset(self, level: bool) -> None:
        """Take `level` as settled (the level read when the panel starts)."""
        self.close()
        self.level = self._raw = level
        self._raw_at = float("-inf")

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class InputLogic:
    """Common shape: `start(level, now)` once with the level found at start, then `edge(at, active)`."""

    name: str
    debouncer: Debouncer

    def __init__(self, clock: Clock, emit: Emit, bounce: float) -> None:
        self.clock = clock
        self.emit = emit
        self.debouncer = Debouncer(clock, bounce, False, self._changed)

    @property
    def active(self) -> bool:
        return self.debouncer.level

    def start(self, active: bool, now: float) -> None:
        self.debouncer.reset(active)
        if active:
            self._active_at_start(now)

    def edge(self, at: float, active: bool) -> None:
        self.debouncer.edge(at, active)

    def _active_at_start(self, now: float) -> None:
        pass

    def _changed(self, at: float, active: bool) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.debouncer.close()


def _cancel(timer: Timer | None) -> None:
    if timer is not None:
        timer.cancel()


class _StuckInput(InputLogic):
    """An input that reports itself stuck when it stays active too long (a button, a pulse line)."""

    _stuck_since: float | None
    _stuck_timer: Timer | None

    def _report_stuck(self, at: float, since: float) -> None:
        self._stuck_timer = None
        raw = self.debouncer
        if not raw._raw and raw._raw_at <= at + EPS:
            return  # released in time; a busy loop has not settled the release yet, and it will count the pulse
        self._stuck_since = since
        self._log_stuck(since)
        self.emit(InputStuck(self.name, at, since))

    def _log_stuck(self, since: float) -> None:
        raise NotImplementedError


class ButtonInput(_StuckInput):
    """Press, release and hold; a button still down after `stuck` seconds is reported (a jam, or tape)."""

    def __init__(self, spec: ButtonSpec, clock: Clock, emit: Emit) -> None:
        super().__init__(clock, emit, spec.bounce)
        self.spec = spec
        self.name = spec.name
        self._pressed_at: float | None = None  # None: no press reported (released, or down since start)
        self._held = False
        self._stuck_since: float | None = None
        self._hold_timer: Timer | None = None
        self._stuck_timer: Timer | None = None

    def _active_at_start(self, now: float) -> None:
        # A button already down when the panel starts is not a press (no phantom "deal" at boot): report it
        # stuck at once and wait for its release.
        self._report_stuck(now, now)

    def _changed(self, at: float, active: bool) -> None:
        spec = self.spec
        if active:
            self._pressed_at, self._held = at, False
            self.emit(ButtonPressed(spec.name, at, spec.spot, spec.role))
            self._hold_timer = self.clock.call_at(at + spec.hold, self._hold_reached)
            if spec.stuck:
                self._stuck_timer = self.clock.call_at(at + spec.stuck, self._report_stuck, at + spec.stuck, at)
            return
        _cancel(self._hold_timer)
        _cancel(self._stuck_timer)
        self._hold_timer = self._stuck_timer = None
        if self._stuck_since is not None:
            self.emit(InputFreed(spec.name, at, at - self._stuck_since))
            self._stuck_since = None
        if self._pressed_at is not None:
            self.emit(ButtonReleased(spec.name, at, spec.spot, spec.role, at - self._pressed_at, self._held))
            self._pressed_at = None

    def _hold_reached(self) -> None:
        self._hold_timer = None
        if self._pressed_at is not None:
            self._held = True
            self.emit(ButtonHeld(self.spec.name, self._pressed_at + self.spec.hold, self.spec.spot, self.spec.role,
                                 self.spec.hold))

    def _log_stuck(self, since: float) -> None:
        log.warning("panel: button %s stuck (down since %.3f)", self.name, since)

    def close(self) -> None:
        super().close()
        _cancel(self._hold_timer)
        _cancel(self._stuck_timer)


class SwitchInput(InputLogic):
    """A door (opened/closed) or key switch (on/off): a debounced level and its edges."""

    def __init__(self, spec: SwitchSpec, clock: Clock, emit: Emit) -> None:
        super().__init__(clock, emit, spec.bounce)
        self.spec = spec
        self.name = spec.name

    def _active_at_start(self, now: float) -> None:
        # The runtime must learn of a door already open when the panel starts, exactly as if it opened now.
        self._changed(now, True)

    def _changed(self, at: float, active: bool) -> None:
        if self.spec.kind == "door":
            self.emit(DoorOpened(self.name, at) if active else DoorClosed(self.name, at))
        else:
            self.emit(SwitchOn(self.name, at) if active else SwitchOff(self.name, at))


class PulseInput(_StuckInput):
    """Counts pulses from a coin acceptor or a hopper's coin-out sensor, checking each one.

    A short glitch filter (`glitch`) removes spikes and dropouts; then each pulse must last min_width..max_width
    and start at least min_gap after the previous one ended. Anything else is reported as rejected with its
    reason (never silently dropped); a line active longer than max_width is reported stuck at once.
    """

    def __init__(self, spec: PulseSpec, clock: Clock, emit: Emit) -> None:
        super().__init__(clock, emit, spec.glitch)
        self.spec = spec
        self.name = spec.name
        self.count = 0
        self.rejected = 0
        self._start: float | None = None
        self._last_end: float | None = None
        self._stuck_since: float | None = None
        self._stuck_timer: Timer | None = None

    def _active_at_start(self, now: float) -> None:
        self._report_stuck(now, now)  # a line already active: its pulse's start is unknown, so it cannot count

    def _changed(self, at: float, active: bool) -> None:
        spec = self.spec
        if active:
            self._start = at
            self._stuck_timer = self.clock.call_at(at + spec.max_width, self._report_stuck, at + spec.max_width, at)
            return
        _cancel(self._stuck_timer)
        self._stuck_timer = None
        if self._stuck_since is not None:
            self.emit(InputFreed(self.name, at, at - self._stuck_since))
        start, self._start = self._start, None
        last_end, self._last_end = self._last_end, at
        if start is None:  # the line was active at start
            self._reject(at, at - self._stuck_since if self._stuck_since is not None else 0.0,
                         "line was active when the panel started")
            self._stuck_since = None
            return
        self._stuck_since = None
        width = at - start
        if width < spec.min_width - EPS:
            self._reject(at, width, f"{width * 1000:.1f} ms is shorter than {spec.min_width * 1000:g} ms")
        elif width > spec.max_width + EPS:
            self._reject(at, width, f"{width * 1000:.1f} ms is longer than {spec.max_width * 1000:g} ms")
        elif last_end is not None and start - last_end < spec.min_gap - EPS:
            gap = start - last_end
            self._reject(at, width, f"came {gap * 1000:.1f} ms after the last pulse (at least "
                                    f"{spec.min_gap * 1000:g} ms)")
        else:
            self.count += 1
            self.emit(PulseCounted(self.name, at, width, self.count))

    def _reject(self, at: float, width: float, reason: str) -> None:
        self.rejected += 1
        log.warning("panel: %s pulse rejected: %s", self.name, reason)
        self.emit(PulseRejected(self.name, at, width, reason))

    def _log_stuck(self, since: float) -> None:
        log.warning("panel: pulse line %s stuck active", self.name)

    def close(self) -> None:
        super().close()
        _cancel(self._stuck_timer)
