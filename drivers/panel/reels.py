"""Mechanical reels: stepper motors turned to a chosen stop and checked against their optical index on every pass (pure of gpiozero).

Each reel is a STEP/DIR/EN stepper driver and a slotted optical sensor that the reel's index flag
interrupts once a turn. The bank counts every step it sends, so it knows where each reel is; each time a
reel's flag enters its sensor, the count must read the index (0 steps) give or take half a symbol. Within
that the count is corrected (a step lost to vibration), beyond it the reel has slipped or jammed: a
mis-index, reported to the runtime, which locks the game. A reel that turns a whole turn without seeing
its index has a dead sensor or a broken belt: a mis-index too.

Timing: one timer for the whole bank on the panel's clock. Each tick sends the steps that are due at
`rate` steps per second (one a tick at the usual rates; several at the very high rates simulations use),
and reads each sensor after each step, so an index is placed to the step whatever the loop's latency.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

from .clock import Clock, Timer
from .config import ReelsSpec

__all__ = ["Reel", "ReelBank", "stop_position"]

log = logging.getLogger("croupier.panel")

MAX_TICK = 0.005  # seconds between ticks at most (bursts above 200 steps per second)


def stop_position(spec: ReelsSpec, stop: int) -> int:
    """Steps past the index at which `stop` sits on the payline."""
    return (spec.offset + round(stop * spec.steps / spec.stops)) % spec.steps


@dataclass
class Reel:
    """What the bank knows of one reel."""

    index: int
    pulse: Callable[[], None]            # one STEP pulse
    sensor: Callable[[], bool]           # is the index flag in the sensor now
    position: int = 0                    # steps past the index, as counted
    homed: bool = False
    remaining: int = 0                   # steps still to send in this move
    since_index: int = 0                 # steps since the index was last seen
    moved: int = 0                       # steps sent in this move
    seen_index: bool = False             # in this move
    last_sensor: bool = False
    error: str | None = None
    homing: bool = False


class ReelBank:
    """The reels of one cabinet, turned together on one clock. `home(on_done)` finds every index;
    `spin(stops, on_done)` turns the reels to physical stops, left to right; `on_done(errors)` gets one entry
    per reel: None, or what went wrong (a mis-index)."""

    def __init__(self, spec: ReelsSpec, clock: Clock, reels: list[Reel], set_enable: Callable[[bool], None],
                 set_forward: Callable[[], None]) -> None:
        self.spec = spec
        self.clock = clock
        self.reels = reels
        self._set_enable = set_enable
        self._set_forward = set_forward
        self._timer: Timer | None = None
        self._on_done: Callable[[list[str | None]], None] | None = None
        self._started = 0.0
        self._sent = 0
        self.targets: list[int | None] = [None] * len(reels)

    @property
    def busy(self) -> bool:
        return self._on_done is not None

    def stop_of(self, reel: int) -> int:
        """The physical stop on the payline, as counted (the nearest one)."""
        spec = self.spec
        return round((self.reels[reel].position - spec.offset) * spec.stops / spec.steps) % spec.stops

    def home(self, on_done: Callable[[list[str | None]], None]) -> None:
        """Turn each reel until its index flag enters the sensor (at most one and a half turns)."""
        limit = self.spec.steps * 3 // 2 + 1
        for reel in self.reels:
            reel.homing, reel.homed, reel.error = True, False, None
            reel.remaining, reel.since_index, reel.seen_index = limit, 0, False
            reel.last_sensor = reel.sensor()
        self._begin(on_done)

    def spin(self, stops: tuple[int, ...], on_done: Callable[[list[str | None]], None]) -> None:
        """Turn to these physical stops (one per reel); each reel turns its whole turns first."""
        spec = self.spec
        if len(stops) != len(self.reels):
            raise ValueError(f"{len(self.reels)} reels, {len(stops)} stops")
        for i, (reel, stop) in enumerate(zip(self.reels, stops)):
            if not 0 <= stop < spec.stops:
                raise ValueError(f"reel {i + 1} has stops 0..{spec.stops - 1}, not {stop}")
            base = round(spec.steps * (spec.turns + i * spec.stagger))
            target = stop_position(spec, stop)
            self.targets[i] = stop
            reel.remaining = base + (target - reel.position - base) % spec.steps
            reel.homing, reel.error, reel.seen_index, reel.moved = False, None, False, 0
            # steps since the index, as counted; an unhomed reel must find its index within a turn from now
            reel.since_index = reel.position if reel.homed else 0
            reel.last_sensor = reel.sensor()
        self._begin(on_done)

    def _begin(self, on_done: Callable[[list[str | None]], None]) -> None:
        if self._on_done is not None:
            raise RuntimeError("the reels are already turning")
        self._on_done = on_done
        self._set_forward()
        self._set_enable(True)
        self._started, self._sent = self.clock.now(), 0
        self._tick()

    def _tick(self) -> None:
        spec = self.spec
        now = self.clock.now()
        due = int((now - self._started) * spec.rate) + 1 - self._sent
        for _ in range(max(due, 0)):
            moving = [r for r in self.reels if r.remaining > 0 and r.error is None]
            if not moving:
                break
            self._sent += 1
            for reel in moving:
                self._step(reel)
        if all(r.remaining <= 0 or r.error is not None for r in self.reels):
            self._finish()
            return
        self._timer = self.clock.call_at(now + min(MAX_TICK, 1.0 / spec.rate), self._tick)

    def _step(self, reel: Reel) -> None:
        spec = self.spec
        reel.pulse()
        reel.position = (reel.position + 1) % spec.steps
        reel.remaining -= 1
        reel.moved += 1
        reel.since_index += 1
        sensor = reel.sensor()
        entered = sensor and not reel.last_sensor
        reel.last_sensor = sensor
        if entered:
            self._index(reel)
        elif not reel.homing and reel.since_index > spec.steps + spec.half_symbol + 1:
            reel.error = (f"reel {reel.index + 1}: mis-index: no index in a whole turn (sensor, flag or belt)")
            reel.homed = False
        if reel.homing and reel.error is None and reel.remaining == 0 and not reel.homed:
            reel.error = f"reel {reel.index + 1}: index not found in one and a half turns"

    def _index(self, reel: Reel) -> None:
        spec = self.spec
        if reel.homing:
            reel.position, reel.homed, reel.remaining, reel.homing = 0, True, 0, False
            reel.since_index, reel.seen_index = 0, True
            return
        error = (reel.position + spec.steps // 2) % spec.steps - spec.steps // 2  # counted minus true (0)
        reel.since_index, reel.seen_index = 0, True
        if not reel.homed:  # first sight since power-up: the index is the truth, aim again from it
            reel.homed, reel.position = True, 0
            target = self.targets[reel.index]
            if target is None:
                reel.remaining = 0
                return
            owed = max(0, round(spec.steps * (spec.turns + reel.index * spec.stagger)) - reel.moved)
            reel.remaining = owed + (stop_position(spec, target) - owed) % spec.steps
            return
        if abs(error) > spec.half_symbol:
            reel.error = (f"reel {reel.index + 1}: mis-index: the index came {abs(error)} steps "
                          f"{'early' if error < 0 else 'late'} (more than half a symbol)")
            reel.homed = False
            return
        reel.position = 0
        reel.remaining += error  # still end on the chosen stop

    def _finish(self) -> None:
        self._timer = None
        on_done, self._on_done = self._on_done, None
        errors = [r.error for r in self.reels]
        for i, reel in enumerate(self.reels):
            if reel.error is not None:
                log.warning("panel: %s", reel.error)
                self.targets[i] = None
        if on_done is not None:
            on_done(errors)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._on_done = None
        self._set_enable(False)
