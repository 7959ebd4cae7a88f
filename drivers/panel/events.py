"""What the panel tells the runtime: input events in the product's words ("spot 3 bet button pressed")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

__all__ = [
    "PanelEvent", "ButtonPressed", "ButtonReleased", "ButtonHeld", "DoorOpened", "DoorClosed", "SwitchOn",
    "SwitchOff", "PulseCounted", "PulseRejected", "InputStuck", "InputFreed",
]


@dataclass(frozen=True)
class PanelEvent:
    """Base of every panel event: `name` is the device's name in the pin map, `at` the panel clock's seconds
    when the input settled (the edge's time, not when the runtime heard of it). `str(event)` says it in words.
    """

    KIND: ClassVar[str] = ""
    WORDS: ClassVar[str] = "{device}"  # formatted with `device` (the name spoken) and the event's fields
    name: str
    at: float

    def __str__(self) -> str:
        return self.WORDS.format(device=self._device(), **vars(self))

    def _device(self) -> str:
        return self.name.replace("_", " ")


@dataclass(frozen=True)
class _ButtonEvent(PanelEvent):
    spot: int | None = None
    role: str = ""

    def _device(self) -> str:
        role = (self.role or self.name).replace("_", " ")
        return f"spot {self.spot} {role}" if self.spot is not None else role


@dataclass(frozen=True)
class ButtonPressed(_ButtonEvent):
    KIND: ClassVar[str] = "button_pressed"
    WORDS: ClassVar[str] = "{device} button pressed"


@dataclass(frozen=True)
class ButtonReleased(_ButtonEvent):
    """`duration`: seconds since the press; `held`: a ButtonHeld was sent for this press."""

    KIND: ClassVar[str] = "button_released"
    WORDS: ClassVar[str] = "{device} button released"
    duration: float = 0.0
    held: bool = False


@dataclass(frozen=True)
class ButtonHeld(_ButtonEvent):
    KIND: ClassVar[str] = "button_held"
    WORDS: ClassVar[str] = "{device} button held"
    duration: float = 0.0


@dataclass(frozen=True)
class DoorOpened(PanelEvent):
    KIND: ClassVar[str] = "door_opened"
    WORDS: ClassVar[str] = "{device} door opened"


@dataclass(frozen=True)
class DoorClosed(PanelEvent):
    KIND: ClassVar[str] = "door_closed"
    WORDS: ClassVar[str] = "{device} door closed"


@dataclass(frozen=True)
class SwitchOn(PanelEvent):
    KIND: ClassVar[str] = "switch_on"
    WORDS: ClassVar[str] = "{device} switch on"


@dataclass(frozen=True)
class SwitchOff(PanelEvent):
    KIND: ClassVar[str] = "switch_off"
    WORDS: ClassVar[str] = "{device} switch off"


@dataclass(frozen=True)
class PulseCounted(PanelEvent):
    """A valid pulse (one coin in, one coin out): `count` is the line's running total of valid pulses."""

    KIND: ClassVar[str] = "pulse_counted"
    WORDS: ClassVar[str] = "{device} pulse {count} counted"
    width: float = 0.0
    count: int = 0


@dataclass(frozen=True)
class PulseRejected(PanelEvent):
    """A pulse that was not counted, and why; the runtime decides whether it is a fault (tilt) or noise."""

    KIND: ClassVar[str] = "pulse_rejected"
    WORDS: ClassVar[str] = "{device} pulse rejected: {reason}"
    width: float = 0.0
    reason: str = ""


@dataclass(frozen=True)
class InputStuck(PanelEvent):
    """An input active far longer than it can be in use: a jammed button, a taped button, a stuck coin line."""

    KIND: ClassVar[str] = "input_stuck"
    WORDS: ClassVar[str] = "{device} stuck"
    since: float = 0.0


@dataclass(frozen=True)
class InputFreed(PanelEvent):
    KIND: ClassVar[str] = "input_freed"
    WORDS: ClassVar[str] = "{device} freed"
    stuck_for: float = 0.0
