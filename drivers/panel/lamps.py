"""Lamp patterns and the engine that plays them: looks per lamp, group patterns over them, counted output pulses.

Every lamp has two layers: its own look (on, blink, ...) and, above it, at most one group pattern (attract
chase, win flash, tilt flash) that borrows it for a while; when the pattern ends the lamp shows its look again.
Looks are timed from one epoch, so every lamp that blinks blinks in step. All timing comes from the panel's
clock, so patterns are exact under a ManualClock and need no thread of their own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .clock import Clock, Timer

__all__ = ["Pattern", "LOOKS", "SPOT_LOOKS", "GROUP_PATTERNS", "look", "group_pattern", "pulses",
           "Channel", "Run", "LampEngine"]

EPS = 1e-9


@dataclass(frozen=True)
class Pattern:
    """Steps of (seconds, levels): one level for every lamp alike, or one per lamp. Levels are 0..1."""

    name: str
    steps: tuple[tuple[float, tuple[float, ...]], ...]
    repeat: bool = True

    @property
    def static(self) -> bool:
        return self.repeat and len(self.steps) == 1

    @property
    def length(self) -> float:
        return sum(seconds for seconds, _ in self.steps)

    def at(self, offset: float) -> tuple[tuple[float, ...], float | None]:
        """Levels `offset` seconds in, and the offset of the next change (None: no further change)."""
        if self.static:
            return self.steps[0][1], None
        length = self.length
        if self.repeat:
            cycles = math.floor(offset / length)
            within = offset - cycles * length
        else:
            if offset >= length:
                return self.steps[-1][1], None
            cycles, within = 0, max(offset, 0.0)
        edge = 0.0
        for seconds, levels in self.steps:
            edge += seconds
            if within < edge:
                return levels, cycles * length + edge
        return self.steps[-1][1], cycles * length + length  # float slack at the very end of a cycle

    @staticmethod
    def level(levels: tuple[float, ...], index: int) -> float:
        return levels[0] if len(levels) == 1 else levels[index]


def _blink(name: str, on: float, off: float, *, inverted: bool = False) -> Pattern:
    steps = ((on, (1.0,)), (off, (0.0,)))
    return Pattern(name, steps[::-1] if inverted else steps)


def _breathe(name: str, seconds: float, steps: int = 20) -> Pattern:
    half = steps // 2
    rising = [(i + 0.5) / half for i in range(half)]
    return Pattern(name, tuple((seconds / steps, (level,)) for level in rising + rising[::-1]))


# Looks of one lamp (binary lamps light for levels of 0.5 and more; PWM lamps dim).
LOOKS: dict[str, Pattern] = {
    "off": Pattern("off", ((1.0, (0.0,)),)),
    "on": Pattern("on", ((1.0, (1.0,)),)),
    "slow_blink": _blink("slow_blink", 1.0, 1.0),
    "blink": _blink("blink", 0.5, 0.5),
    "fast_blink": _blink("fast_blink", 0.25, 0.25),
    "flash": _blink("flash", 0.1, 0.1),
    "flash_alt": _blink("flash_alt", 0.1, 0.1, inverted=True),
    "pulse": _breathe("pulse", 2.0),
}

# What a spot's lamps show for each moment of a round (the words the table runtime uses).
SPOT_LOOKS: dict[str, str] = {
    "off": "off",
    "betting_open": "slow_blink",   # bets may be placed here
    "bet_placed": "on",
    "to_act": "blink",              # waiting for this spot's decision
    "win": "fast_blink",
    "push": "pulse",
    "lose": "off",
}


def look(name: str) -> Pattern:
    """A look by name: a spot look ("betting_open") or a lamp look ("blink")."""
    return LOOKS[SPOT_LOOKS.get(name, name)]


def _chase(n: int, step: float) -> Pattern:
    return Pattern("attract", tuple((step, tuple(1.0 if i == j else 0.0 for i in range(n))) for j in range(n)))


def _halves(n: int, step: float) -> Pattern:
    even = tuple(1.0 if i % 2 == 0 else 0.0 for i in range(n))
    odd = tuple(1.0 - level for level in even)
    return Pattern("tilt", ((step, even), (step, odd)))


# Patterns over a group of lamps, built for the group's size (the chase runs in the group's order).
GROUP_PATTERNS: dict[str, Callable[[int], Pattern]] = {
    "attract": lambda n: _chase(n, 0.15),
    "win": lambda n: Pattern("win", ((0.15, (1.0,)), (0.15, (0.0,)))),
    "tilt": lambda n: _halves(n, 0.25),
}


def group_pattern(name: str, lamps: int) -> Pattern:
    """A group pattern ("attract", "win", "tilt") or any look, all lamps in step."""
    if name in GROUP_PATTERNS:
        return GROUP_PATTERNS[name](lamps)
    return look(name)


def pulses(on: float, off: float) -> Pattern:
    """One output pulse: on for `on` seconds then off for `off` (the gap an electromechanical meter needs)."""
    return Pattern("pulse_out", ((on, (1.0,)), (off, (0.0,))), repeat=False)


class Channel:
    """One output pin and its two layers."""

    def __init__(self, name: str, write: Callable[[float], None], *, pwm: bool = False,
                 brightness: float = 1.0) -> None:
        self.name = name
        self._write = write
        self.pwm = pwm
        self.brightness = brightness
        self.level: float | None = None  # what the pin was last told
        self.look: Run | None = None
        self.overlay: Run | None = None

    @property
    def owner(self) -> "Run | None":
        return self.overlay or self.look

    def show(self, level: float) -> None:
        out = round(level * self.brightness, 6) if self.pwm else (1.0 if level >= 0.5 else 0.0)
        if out != self.level:
            self.level = out
            self._write(out)


class Run:
    """A pattern playing on some channels from `epoch` until `until` (None: until replaced or stopped)."""

    def __init__(self, pattern: Pattern, channels: tuple[Channel, ...], epoch: float, until: float | None,
                 overlay: bool, on_end: Callable[[], None] | None = None) -> None:
        self.pattern = pattern
        self.channels = channels
        self.epoch = epoch
        self.until = until
        self.overlay = overlay
        self.on_end = on_end
        self.timer: Timer | None = None
        self.ended = False

    def levels(self, now: float) -> tuple[float, ...]:
        return self.pattern.at(now - self.epoch + EPS)[0]

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


class LampEngine:
    """Plays looks and group patterns on channels, on the panel's clock."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.epoch = clock.now()

    def set_look(self, channel: Channel, pattern: Pattern) -> None:
        if channel.look is not None:
            if channel.look.pattern == pattern:
                return  # keep its phase
            channel.look.cancel()
        run = Run(pattern, (channel,), self.epoch, None, overlay=False)
        channel.look = run
        self._tick(run)

    def play(self, pattern: Pattern, channels: tuple[Channel, ...], seconds: float | None = None,
             on_end: Callable[[], None] | None = None) -> Run:
        now = self.clock.now()
        run = Run(pattern, channels, now, None if seconds is None else now + seconds, overlay=True, on_end=on_end)
        for channel in channels:
            if channel.overlay is not None:
                self._release(channel)
            channel.overlay = run
        self._tick(run)
        return run

    def stop(self, channels: tuple[Channel, ...]) -> None:
        """End whatever group pattern holds these channels; they show their own looks again."""
        for channel in channels:
            if channel.overlay is not None:
                self._release(channel)

    def _release(self, channel: Channel) -> None:
        run = channel.overlay
        assert run is not None
        channel.overlay = None
        if all(ch.overlay is not run for ch in run.channels):
            run.cancel()
            self._finish(run)
        self._show_look(channel)

    def redraw(self, channel: Channel) -> None:
        """Show again whatever now owns the channel (after its brightness changed)."""
        owner = channel.owner
        channel.level = None
        index = owner.channels.index(channel) if owner is not None else 0
        channel.show(Pattern.level(owner.levels(self.clock.now()), index) if owner is not None else 0.0)

    def _show_look(self, channel: Channel) -> None:
        run = channel.look
        channel.show(run.levels(self.clock.now())[0] if run is not None else 0.0)

    def _tick(self, run: Run) -> None:
        run.timer = None
        now = self.clock.now()
        if run.until is not None and now >= run.until - EPS:
            self._end(run)
            return
        levels, next_offset = run.pattern.at(now - run.epoch + EPS)
        for index, channel in enumerate(run.channels):
            if channel.owner is run:
                channel.show(Pattern.level(levels, index))
        if next_offset is None:
            if not run.pattern.repeat:
                self._end(run)
            return
        when = run.epoch + next_offset
        if run.until is not None:
            when = min(when, run.until)
        run.timer = self.clock.call_at(when, self._tick, run)

    def _end(self, run: Run) -> None:
        run.cancel()
        for channel in run.channels:
            if channel.overlay is run:
                channel.overlay = None
                self._show_look(channel)
        self._finish(run)

    @staticmethod
    def _finish(run: Run) -> None:
        if not run.ended:
            run.ended = True
            if run.on_end is not None:
                run.on_end()
