"""The slot cabinet's journal record kinds (controller/cabinetstate.py folds them; controller/cabinet.py and controller/sas.py write them).

Each class's docstring is its line in the listing of kinds (README.md, `python -m controller.records cabinet`).
Money is integer credits of the cabinet's denomination (the progressive's `cents` excepted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from controller.records import JSON, DoorSwitch, Record, Refusal, opt, typed_record

__all__ = ["CabinetRecord", "cabinet_record", "CabinetStart", "Credit", "CoinRefused", "BetRecord", "SpinRecord",
           "PickRecord", "CashIn", "NextPaytable", "Cashout", "CoinOut", "LockupRecord", "Clear", "CabinetDoor",
           "Link", "ProgressiveAck", "ProgressiveWin", "Fault", "CabinetRefused", "SasDisable", "SasEnable",
           "SasSound", "SasRte", "SasTime", "SasSignature", "SasAck",
           "NoteEscrow", "NoteStacking", "NoteStacked", "NoteReturned", "NoteRejected", "NoteInDoubt",
           "TicketOutRequested", "TicketOutValidation", "TicketOutPrinted", "TicketOutFailed",
           "TicketInInserted", "TicketInAuthorised", "TicketInRefused", "TicketInStacked", "TicketInReturned",
           "DeviceFault", "DeviceCleared", "SasValidationId", "SasBills"]


@dataclass(frozen=True, slots=True)
class CabinetRecord(Record):
    FAMILY: ClassVar[str] = "cabinet"


def cabinet_record(data: Any, where: str = "record") -> CabinetRecord:
    """The typed cabinet record of a journal row; RecordError naming `where` when it is not one."""
    return typed_record(CabinetRecord, data, where)


@dataclass(frozen=True, slots=True)
class CabinetStart(CabinetRecord):
    """the service started (a power reset): the title, its digest, the denomination and the settings"""
    KIND: ClassVar[str] = "start"
    title: str
    denomination: int
    settings: JSON
    version: str | None = opt()
    digest: str | None = opt()


@dataclass(frozen=True, slots=True)
class Credit(CabinetRecord):
    """money in, by coin or operator (refused while money in is disabled); tax: a SAS legacy bonus's tax status"""
    KIND: ClassVar[str] = "credit"
    source: str
    credits: int
    by: str | None = opt()
    tax: int | None = opt()


@dataclass(frozen=True, slots=True)
class CoinRefused(CabinetRecord):
    """a coin pulse while money in was disabled (metered, not credited)"""
    KIND: ClassVar[str] = "coin_refused"
    credits: int
    reason: str | None = opt()


@dataclass(frozen=True, slots=True)
class BetRecord(CabinetRecord):
    """the player's bet selection"""
    KIND: ClassVar[str] = "bet"
    coins: int
    lines: int | None = opt()


@dataclass(frozen=True, slots=True)
class SpinRecord(CabinetRecord):
    """one game: stops drawn by controller/rng.py, journaled before they are shown"""
    KIND: ClassVar[str] = "spin"
    game: int
    stops: tuple[int, ...]
    bet: JSON


@dataclass(frozen=True, slots=True)
class PickRecord(CabinetRecord):
    """a pick bonus settled: the player's choice and the draw"""
    KIND: ClassVar[str] = "pick"
    game: int
    choice: str
    draw: int


@dataclass(frozen=True, slots=True)
class CashIn(CabinetRecord):
    """It's Good to be Bad's Cash In!"""
    KIND: ClassVar[str] = "cash_in"


@dataclass(frozen=True, slots=True)
class NextPaytable(CabinetRecord):
    """Operation M.Y.O.W.'s Next Paytable"""
    KIND: ClassVar[str] = "paytable"


@dataclass(frozen=True, slots=True)
class Cashout(CabinetRecord):
    """credits leave the credit meter, via hopper (coins) or hand_pay"""
    KIND: ClassVar[str] = "cashout"
    credits: int
    via: str
    coins: int | None = opt()


@dataclass(frozen=True, slots=True)
class CoinOut(CabinetRecord):
    """one coin past the hopper's coin-out sensor (beyond the payout: a runaway coin)"""
    KIND: ClassVar[str] = "coin_out"


@dataclass(frozen=True, slots=True)
class LockupRecord(CabinetRecord):
    """an error or a hand pay locks the game: lockup {id, kind, text, [credits]}"""
    KIND: ClassVar[str] = "lockup"
    lockup: JSON


@dataclass(frozen=True, slots=True)
class Clear(CabinetRecord):
    """a lockup cleared, by a role allowed for its kind"""
    KIND: ClassVar[str] = "clear"
    lockup: int
    action: str
    by: str


@dataclass(frozen=True, slots=True)
class CabinetDoor(CabinetRecord, DoorSwitch):
    __doc__ = DoorSwitch.__doc__
    KIND: ClassVar[str] = "door"


@dataclass(frozen=True, slots=True)
class Link(CabinetRecord):
    """the progressive link came up or went down"""
    KIND: ClassVar[str] = "link"
    up: bool


@dataclass(frozen=True, slots=True)
class ProgressiveAck(CabinetRecord):
    """the link controller acknowledged the contributions of these games"""
    KIND: ClassVar[str] = "progressive_ack"
    games: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ProgressiveWin(CabinetRecord):
    """the link controller awarded a hit of this game: cents, and its hit number"""
    KIND: ClassVar[str] = "progressive_win"
    game: int
    cents: int
    hit: JSON


@dataclass(frozen=True, slots=True)
class Fault(CabinetRecord):
    """a rejected input worth keeping (noise on the coin line)"""
    KIND: ClassVar[str] = "fault"
    what: str
    reason: str | None = opt()


@dataclass(frozen=True, slots=True)
class CabinetRefused(CabinetRecord, Refusal):
    __doc__ = Refusal.__doc__
    KIND: ClassVar[str] = "refused"


@dataclass(frozen=True, slots=True)
class SasDisable(CabinetRecord):
    """the floor's SAS host disabled play and money in"""
    KIND: ClassVar[str] = "sas"
    WHAT: ClassVar[str | None] = "disable"


@dataclass(frozen=True, slots=True)
class SasEnable(CabinetRecord):
    """the floor's SAS host enabled play and money in again"""
    KIND: ClassVar[str] = "sas"
    WHAT: ClassVar[str | None] = "enable"


@dataclass(frozen=True, slots=True)
class SasSound(CabinetRecord):
    """SAS: the host switched the sound on or off"""
    KIND: ClassVar[str] = "sas"
    WHAT: ClassVar[str | None] = "sound"
    on: bool


@dataclass(frozen=True, slots=True)
class SasRte(CabinetRecord):
    """SAS: the host switched real-time event reporting on or off"""
    KIND: ClassVar[str] = "sas"
    WHAT: ClassVar[str | None] = "rte"
    on: bool


@dataclass(frozen=True, slots=True)
class SasTime(CabinetRecord):
    """SAS: the host set the time (ISO 8601) and its offset from the cabinet's clock"""
    KIND: ClassVar[str] = "sas"
    WHAT: ClassVar[str | None] = "time"
    set: str
    offset: JSON


@dataclass(frozen=True, slots=True)
class SasSignature(CabinetRecord):
    """SAS: a ROM signature over so many bytes from a seed, and why it was taken"""
    KIND: ClassVar[str] = "sas"
    WHAT: ClassVar[str | None] = "signature"
    seed: int
    signature: int
    bytes: int
    why: str | None = opt()


@dataclass(frozen=True, slots=True)
class SasAck(CabinetRecord):
    """SAS: the host acknowledged these queued exceptions (ids), by their code"""
    KIND: ClassVar[str] = "sas"
    WHAT: ClassVar[str | None] = "ack"
    ids: tuple[str, ...]
    code: JSON = opt()


# ---------------------------------------------------------------------------------------------- notes and tickets
# Notes and tickets are valued in cents (what is printed on them); `credits` is their value on the credit meter
# at the cabinet's denomination. A note or ticket is credited only by its `stacked` record: escrow and stacking
# are journaled before the validator is told, so a power loss at any step neither loses nor doubles it.

@dataclass(frozen=True, slots=True)
class NoteEscrow(CabinetRecord):
    """bill validator: a note of this value is held in escrow (not yet credited)"""
    KIND: ClassVar[str] = "note"
    WHAT: ClassVar[str | None] = "escrow"
    cents: int


@dataclass(frozen=True, slots=True)
class NoteStacking(CabinetRecord):
    """bill validator: the cabinet told the validator to stack the note in escrow"""
    KIND: ClassVar[str] = "note"
    WHAT: ClassVar[str | None] = "stacking"
    cents: int


@dataclass(frozen=True, slots=True)
class NoteStacked(CabinetRecord):
    """bill validator: the note is in the stacker: its credits go on the credit meter, its denomination is metered"""
    KIND: ClassVar[str] = "note"
    WHAT: ClassVar[str | None] = "stacked"
    cents: int
    credits: int


@dataclass(frozen=True, slots=True)
class NoteReturned(CabinetRecord):
    """bill validator: the note in escrow went back to the player, and why"""
    KIND: ClassVar[str] = "note"
    WHAT: ClassVar[str | None] = "returned"
    cents: int
    reason: str


@dataclass(frozen=True, slots=True)
class NoteRejected(CabinetRecord):
    """bill validator: an item it refused by itself (not a note it knows, a note disabled, a bad read), metered"""
    KIND: ClassVar[str] = "note"
    WHAT: ClassVar[str | None] = "rejected"
    reason: str


@dataclass(frozen=True, slots=True)
class NoteInDoubt(CabinetRecord):
    """bill validator: after a power loss while stacking, the validator cannot say where the note went: a lockup
    until an attendant counts the stacker (credited or not by the clear)"""
    KIND: ClassVar[str] = "note"
    WHAT: ClassVar[str | None] = "in_doubt"
    cents: int


@dataclass(frozen=True, slots=True)
class TicketOutRequested(CabinetRecord):
    """cash out by ticket: these credits (cashable or restricted) leave the credit meter for a ticket not yet printed"""
    KIND: ClassVar[str] = "ticket_out"
    WHAT: ClassVar[str | None] = "requested"
    credits: int
    cents: int
    restricted: bool
    number: int                  # the cabinet's ticket sequence number, from 1


@dataclass(frozen=True, slots=True)
class TicketOutValidation(CabinetRecord):
    """cash out by ticket: the ticket's validation number, from the SAS host (system) or computed (enhanced)"""
    KIND: ClassVar[str] = "ticket_out"
    WHAT: ClassVar[str | None] = "validation"
    number: int
    validation: str              # 18 digits
    by: str                      # "system" or "enhanced"
    expires: int | None = opt()  # days, where the host set them


@dataclass(frozen=True, slots=True)
class TicketOutPrinted(CabinetRecord):
    """cash out by ticket: the printer reported the ticket printed: paid out, metered"""
    KIND: ClassVar[str] = "ticket_out"
    WHAT: ClassVar[str | None] = "printed"
    number: int


@dataclass(frozen=True, slots=True)
class TicketOutFailed(CabinetRecord):
    """cash out by ticket: the ticket could not be printed: its credits go back to the credit meter (or a hand pay)"""
    KIND: ClassVar[str] = "ticket_out"
    WHAT: ClassVar[str | None] = "failed"
    number: int
    reason: str


@dataclass(frozen=True, slots=True)
class TicketInInserted(CabinetRecord):
    """ticket in: the validator holds a ticket with this validation number in escrow; the SAS host is asked"""
    KIND: ClassVar[str] = "ticket_in"
    WHAT: ClassVar[str | None] = "inserted"
    validation: str


@dataclass(frozen=True, slots=True)
class TicketInAuthorised(CabinetRecord):
    """ticket in: the SAS host authorised the redemption of this ticket for this amount (cashable or restricted)"""
    KIND: ClassVar[str] = "ticket_in"
    WHAT: ClassVar[str | None] = "authorised"
    validation: str
    cents: int
    restricted: bool
    code: int                    # the host's transfer code (SAS long poll 71)
    pool: int | None = opt()     # restricted: the host's pool id
    expires: str | None = opt()  # restricted: the expiration the host gave


@dataclass(frozen=True, slots=True)
class TicketInRefused(CabinetRecord):
    """ticket in: the SAS host (or the cabinet: no host, a timeout, an odd amount) refused the ticket, and why"""
    KIND: ClassVar[str] = "ticket_in"
    WHAT: ClassVar[str | None] = "refused"
    validation: str
    reason: str
    code: int | None = opt()     # the host's code, where it gave one


@dataclass(frozen=True, slots=True)
class TicketInStacked(CabinetRecord):
    """ticket in: the authorised ticket is in the stacker: its credits go on the credit meter (restricted apart)"""
    KIND: ClassVar[str] = "ticket_in"
    WHAT: ClassVar[str | None] = "stacked"
    validation: str
    cents: int
    credits: int
    restricted: bool


@dataclass(frozen=True, slots=True)
class TicketInReturned(CabinetRecord):
    """ticket in: the ticket went back to the player, and why"""
    KIND: ClassVar[str] = "ticket_in"
    WHAT: ClassVar[str | None] = "returned"
    validation: str
    reason: str


@dataclass(frozen=True, slots=True)
class DeviceFault(CabinetRecord):
    """the bill validator or the ticket printer reported a fault (jam, stacker full/open, cheat, paper low/out, head
    open, offline, ...): a lockup or a warning as controller/cabinetstate.py lists it"""
    KIND: ClassVar[str] = "device"
    WHAT: ClassVar[str | None] = "fault"
    device: str                  # "validator" or "printer"
    code: str


@dataclass(frozen=True, slots=True)
class DeviceCleared(CabinetRecord):
    """the device reports the fault gone"""
    KIND: ClassVar[str] = "device"
    WHAT: ClassVar[str | None] = "cleared"
    device: str
    code: str


@dataclass(frozen=True, slots=True)
class SasValidationId(CabinetRecord):
    """SAS (long poll 4C): the host set the cabinet's secure-enhanced validation id and sequence number"""
    KIND: ClassVar[str] = "sas"
    WHAT: ClassVar[str | None] = "validation_id"
    machine: int                 # the 3-byte validation id
    sequence: int                # the next ticket's sequence number


@dataclass(frozen=True, slots=True)
class SasBills(CabinetRecord):
    """SAS (long polls 06, 07, 08): the host enabled or disabled the bill validator, or set the notes it takes"""
    KIND: ClassVar[str] = "sas"
    WHAT: ClassVar[str | None] = "bills"
    enabled: bool
    notes: tuple[int, ...] | None = opt()   # cents of the notes enabled; None: unchanged
