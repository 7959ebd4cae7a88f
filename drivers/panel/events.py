"""What the panel tells the runtime: input events in the product's words ("spot 3 bet button pressed")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

__all__ = [
    "PanelEvent", "ButtonPressed", "ButtonReleased", "ButtonHeld", "DoorOpened", "DoorClosed", "SwitchOn",
    "SwitchOff", "PulseCounted", "PulseRejected", "InputStuck", "InputFreed",
]


def _spoken(name: str) -> str:
    return name.replace("_", " ")


@dataclass(frozen=True)
class PanelEvent:
    """Base of every panel event: `name` is the device's name in the pin map, `at` the panel clock's seconds
    when the input settled (the edge's time, not when the runtime heard of it)."""

    KIND: ClassVar[str] = ""
    name: str
    at: float

    def __str__(self) -> str:
        return self.words()

    def words(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class _ButtonEvent(PanelEvent):
    spot: int | None = None
    role: str = ""

    def _button(self) -> str:
        if self.spot is not None:
            return f"spot {self.spot} {_spoken(self.role)} button"
        return f"{_spoken(self.role or self.name)} button"


@dataclass(frozen=True)
class ButtonPressed(_ButtonEvent):
    KIND: ClassVar[str] = "button_pressed"

    def words(self) -> str:
        return f"{self._button()} pressed"


@dataclass(frozen=True)
class ButtonReleased(_ButtonEvent):
    """`duration`: seconds since the press; `held`: a ButtonHeld was sent for this press."""

    KIND: ClassVar[str] = "button_released"
    duration: float = 0.0
    held: bool = False

    def words(self) -> str:
        return f"{self._button()} released"


@dataclass(frozen=True)
class ButtonHeld(_ButtonEvent):
    KIND: ClassVar[str] = "button_held"
    duration: float = 0.0

    def words(self) -> str:
        return f"{self._button()} held"


@dataclass(frozen=True)
class DoorOpened(PanelEvent):
    KIND: ClassVar[str] = "door_opened"

    def words(self) -> str:
        return f"{_spoken(self.name)} door opened"


@dataclass(frozen=True)
class DoorClosed(PanelEvent):
    KIND: ClassVar[str] = "door_closed"

    def words(self) -> str:
        return f"{_spoken(self.name)} door closed"


@dataclass(frozen=True)
class SwitchOn(PanelEvent):
    KIND: ClassVar[str] = "switch_on"

    def words(self) -> str:
        return f"{_spoken(self.name)} switch on"


@dataclass(frozen=True)
class SwitchOff(PanelEvent):
    KIND: ClassVar[str] = "switch_off"

    def words(self) -> str:
        return f"{_spoken(self.name)} switch off"


@dataclass(frozen=True)
class PulseCounted(PanelEvent):
    """A valid pulse (one coin in, one coin out): `count` is the line's running total of valid pulses."""

    KIND: ClassVar[str] = "pulse_counted"
    width: float = 0.0
    count: int = 0

    def words(self) -> str:
        return f"{_spoken(self.name)} pulse {self.count} counted"


@dataclass(frozen=True)
class PulseRejected(PanelEvent):
    """A pulse that was not counted, and why; the runtime decides whether it is a fault (tilt) or noise."""

    KIND: ClassVar[str] = "pulse_rejected"
    width: float = 0.0
    reason: str = ""

    def words(self) -> str:
        return f"{_spoken(self.name)} pulse rejected: {self.reason}"


@dataclass(frozen=True)
class InputStuck(PanelEvent):
    """An input active far longer than it can be in use: a jammed button, a taped button, a stuck coin line."""

    KIND: ClassVar[str] = "input_stuck"
    since: float = 0.0

    def words(self) -> str:
        return f"{_spoken(self.name)} stuck"


@dataclass(frozen=True)
class InputFreed(PanelEvent):
    KIND: ClassVar[str] = "input_freed"
    stuck_for: float = 0.0

    def words(self) -> str:
        return f"{_spoken(self.name)} freed"
