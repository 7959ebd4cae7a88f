"""The slot cabinet's journal record kinds (controller/cabinetstate.py folds them; controller/cabinet.py and controller/sas.py write them).

Each class's docstring is its line in the listing of kinds (README.md, `python -m controller.records cabinet`).
Money is integer credits of the cabinet's denomination (the progressive's `cents` excepted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from controller.records import ABSENT, JSON, Record, opt, typed_record

__all__ = ["CabinetRecord", "cabinet_record", "CabinetStart", "Credit", "CoinRefused", "BetRecord", "SpinRecord",
           "PickRecord", "CashIn", "NextPaytable", "Cashout", "CoinOut", "LockupRecord", "Clear", "CabinetDoor",
           "Link", "ProgressiveAck", "ProgressiveWin", "Fault", "CabinetRefused", "SasDisable", "SasEnable",
           "SasSound", "SasRte", "SasTime", "SasSignature", "SasAck"]


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
class CabinetDoor(CabinetRecord):
    """a door switch opened or closed"""
    KIND: ClassVar[str] = "door"
    name: str
    open: bool


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
class CabinetRefused(CabinetRecord):
    """a refused command (audit only); left_out: refusals of a peer not journaled one by one"""
    KIND: ClassVar[str] = "refused"
    who: str | None = opt()
    reason: str | None = opt()
    request: JSON = opt(ABSENT)   # null for a refusal that answers no request
    left_out: JSON = opt()


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
