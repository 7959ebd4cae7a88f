"""The interface between a bill validator driver and the cabinet: the events a validator reports and the commands it takes.

Every validator driver (ID-003 on a serial line, the simulator behind it) keeps this interface; the cabinet's
runtime knows nothing else of the device. An item is a note (`note_cents`) or a ticket (`barcode`, the 18-digit
validation number); exactly one of the two is set. Events are handed to the runtime on its loop's thread, in
the order the validator reported them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Union

__all__ = ["Escrowed", "Stacked", "Returned", "Rejected", "ValidatorFault", "ValidatorCleared", "PoweredUp",
           "ValidatorEvent", "ValidatorLink", "VALIDATOR_FAULTS"]

# The faults a validator reports (ValidatorFault.code); each is a lockup of the cabinet until it clears.
VALIDATOR_FAULTS = ("jam", "stacker_full", "stacker_open", "cheat", "failure", "offline")


@dataclass(frozen=True)
class Escrowed:
    """An item is held in escrow: the cabinet answers with `stack()` or `return_item()`."""
    note_cents: int | None = None
    barcode: str | None = None


@dataclass(frozen=True)
class Stacked:
    """The item in escrow is in the stacker (ID-003: vend valid, then stacked)."""
    note_cents: int | None = None
    barcode: str | None = None


@dataclass(frozen=True)
class Returned:
    """The item in escrow went back to the player (the cabinet asked, or the validator could not stack it)."""
    note_cents: int | None = None
    barcode: str | None = None
    reason: str = "returned"


@dataclass(frozen=True)
class Rejected:
    """The validator refused an item by itself (never escrowed); `reason` names why, in words."""
    reason: str


@dataclass(frozen=True)
class ValidatorFault:
    """A fault (one of VALIDATOR_FAULTS): the validator takes nothing until it clears."""
    code: str


@dataclass(frozen=True)
class ValidatorCleared:
    """The fault `code` is gone."""
    code: str


@dataclass(frozen=True)
class PoweredUp:
    """The validator (re)started; `holding` says where an item was when its power went: "none", "acceptor" (it
    will be returned) or "stacker" (it was stacked)."""
    holding: str = "none"


ValidatorEvent = Union[Escrowed, Stacked, Returned, Rejected, ValidatorFault, ValidatorCleared, PoweredUp]


class ValidatorLink(Protocol):
    """What the cabinet asks of a validator driver (each call returns at once; the outcome comes as an event)."""

    def stack(self) -> None:
        """Stack the item in escrow."""

    def return_item(self) -> None:
        """Return the item in escrow to the player."""

    def enable(self, notes: frozenset[int], tickets: bool) -> None:
        """Take these notes (cents) and tickets or not; nothing enabled inhibits the validator."""

    async def stop(self) -> None:
        """Close the line."""
