"""The table's journal record kinds (controller/tablestate.py folds them; controller/table.py writes them).

Each class's docstring is its line in the listing of kinds (`croupier journal kinds table`, controller/bus.md).
Payloads that have a schema of their own stay JSON objects: a game event (controller/games/base.py's
`event_from_json`), an alert (tablestate's `Alert`), the camera tracker's event (controller/camera.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from controller.records import ABSENT, JSON, Absent, DoorSwitch, Record, Refusal, opt, typed_record

__all__ = ["TableRecord", "Start", "Game", "AlertRecord", "Resolve", "Refused", "ShoeLink", "ShoeFlags", "ShoeShuffle",
           "DeckCheck", "CounterReset", "ManualEntry", "SimOrder", "Door", "CameraStarted", "CameraDown",
           "CameraUp", "Seen", "DealerSignIn", "RatingStart", "RatingStop", "RatingMove", "SlipEntered",
           "SlipConfirmed", "table_record"]


@dataclass(frozen=True, slots=True)
class TableRecord(Record):
    FAMILY: ClassVar[str] = "table"


def table_record(data: Any, where: str = "record") -> TableRecord:
    """The typed table record of a journal row; RecordError naming `where` when it is not one."""
    return typed_record(TableRecord, data, where)


@dataclass(frozen=True, slots=True)
class Start(TableRecord):
    """the service started (counts a power-up); new rules start a fresh table, only between rounds"""
    KIND: ClassVar[str] = "start"
    game: str
    rules: JSON
    version: str | None = opt()


@dataclass(frozen=True, slots=True)
class Game(TableRecord):
    """a game event; via: shoe, dealer, spot:N, panel, timer, autoplay, camera or shuffler; draw: [shoe_id, draw]
    of a card the shoe read; closes_at: epoch s when open bets close (null: no timer)"""
    KIND: ClassVar[str] = "game"
    event: JSON
    via: str | None = opt()
    draw: tuple[int, int] | None = opt()
    closes_at: float | None | Absent = opt(ABSENT)


@dataclass(frozen=True, slots=True)
class AlertRecord(TableRecord):
    """a dealer alert that pauses dealing: alert {id, kind, text, card, options, [zone] where the camera saw the
    card}; draw: the shoe's draw it holds"""
    KIND: ClassVar[str] = "alert"
    alert: JSON
    draw: tuple[int, int] | None = opt()


@dataclass(frozen=True, slots=True)
class Resolve(TableRecord):
    """the dealer resolved an alert; reassign [dealt card, true card] (swap: the two traded places) rebuilds the
    round; dealt: the camera's card, dealt by the game record that follows"""
    KIND: ClassVar[str] = "resolve"
    alert: int
    action: str
    by: str | None = opt()
    reason: str | None = opt()
    reassign: tuple[str, str] | None = opt()
    swap: bool | None = opt()
    dealt: str | None = opt()


@dataclass(frozen=True, slots=True)
class Refused(TableRecord, Refusal):
    __doc__ = Refusal.__doc__
    KIND: ClassVar[str] = "refused"


@dataclass(frozen=True, slots=True)
class ShoeLink(TableRecord):
    """the shoe's link came up (its identity and serial) or went down (its reason)"""
    KIND: ClassVar[str] = "shoe"
    WHAT: ClassVar[str | None] = "link"
    up: bool
    identity: str | None = opt()
    serial: str | None = opt()
    reason: str | None = opt()


@dataclass(frozen=True, slots=True)
class ShoeFlags(TableRecord):
    """the shoe's status flags changed (CUT_CARD or EMPTY make the shuffle due)"""
    KIND: ClassVar[str] = "shoe"
    WHAT: ClassVar[str | None] = "flags"
    flags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ShoeShuffle(TableRecord):
    """the shuffler started or finished"""
    KIND: ClassVar[str] = "shoe"
    WHAT: ClassVar[str | None] = "shuffle"
    started: bool


@dataclass(frozen=True, slots=True)
class DeckCheck(TableRecord):
    """a deck check; short_of_table: short of exactly the cards on the table (the discards reshuffled in mid-round)"""
    KIND: ClassVar[str] = "shoe"
    WHAT: ClassVar[str | None] = "deck_check"
    complete: bool
    decks: int
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    truncated: bool
    short_of_table: bool | None = opt()


@dataclass(frozen=True, slots=True)
class CounterReset(TableRecord):
    """the shoe was swapped or reset: its draws count from `draws`, and a complete deck check is due"""
    KIND: ClassVar[str] = "shoe"
    WHAT: ClassVar[str | None] = "counter_reset"
    shoe_id: int
    draws: int
    detail: str


@dataclass(frozen=True, slots=True)
class ManualEntry(TableRecord):
    """the dealer switched manual card entry on or off"""
    KIND: ClassVar[str] = "shoe"
    WHAT: ClassVar[str | None] = "manual"
    on: bool
    by: str


@dataclass(frozen=True, slots=True)
class SimOrder(TableRecord):
    """the simulated shuffler's order: its seed, the draw it starts after, the cards left out of it"""
    KIND: ClassVar[str] = "shoe"
    WHAT: ClassVar[str | None] = "sim_order"
    seed: int
    draw: tuple[int, int]
    by: str
    out: tuple[str, ...] | None = opt()


@dataclass(frozen=True, slots=True)
class Door(TableRecord, DoorSwitch):
    __doc__ = DoorSwitch.__doc__
    KIND: ClassVar[str] = "door"


@dataclass(frozen=True, slots=True)
class CameraStarted(TableRecord):
    """the camera witness started (what it saw before is forgotten); model: the readers in use"""
    KIND: ClassVar[str] = "camera"
    WHAT: ClassVar[str | None] = "started"
    source: JSON = opt()
    model: str | None = opt()


@dataclass(frozen=True, slots=True)
class CameraDown(TableRecord):
    """the camera's frames stopped coming"""
    KIND: ClassVar[str] = "camera"
    WHAT: ClassVar[str | None] = "down"
    reason: str


@dataclass(frozen=True, slots=True)
class CameraUp(TableRecord):
    """the camera's frames came again"""
    KIND: ClassVar[str] = "camera"
    WHAT: ClassVar[str | None] = "up"


@dataclass(frozen=True, slots=True)
class Seen(TableRecord):
    """the camera's tracker reported a card (event: card_appeared, card_moved or card_removed); model: which
    readers named it, base:<digest> or enrolled:<id>"""
    KIND: ClassVar[str] = "seen"
    event: JSON
    model: str | None = opt()


# Table analytics' records (controller/tableanalytics.py reads them).


@dataclass(frozen=True, slots=True)
class DealerSignIn(TableRecord):
    """a dealer signed in at the table (dealer: the id the pit knows them by) or out (dealer: null)"""
    KIND: ClassVar[str] = "dealer"
    dealer: str | None


@dataclass(frozen=True, slots=True)
class RatingStart(TableRecord):
    """a rated player sat at a spot (player: the player card number; at: whole epoch seconds by the table's clock, which stamps
    the journal row too; by: the role) (controller/rating.py)"""
    KIND: ClassVar[str] = "rating"
    WHAT: ClassVar[str | None] = "start"
    spot: int
    player: str
    at: int
    by: str


@dataclass(frozen=True, slots=True)
class RatingStop(TableRecord):
    """the rated player at a spot left: the session ends"""
    KIND: ClassVar[str] = "rating"
    WHAT: ClassVar[str | None] = "stop"
    spot: int
    at: int
    by: str


@dataclass(frozen=True, slots=True)
class RatingMove(TableRecord):
    """the rated player at `spot` moved to spot `to`: the same session goes on there"""
    KIND: ClassVar[str] = "rating"
    WHAT: ClassVar[str | None] = "move"
    spot: int
    to: int
    at: int
    by: str


@dataclass(frozen=True, slots=True)
class SlipEntered(TableRecord):
    """a paperwork slip entered (controller/paperwork.py): slip (its number), form (opener, closer, fill, credit,
    drop), day (the gaming day, YYYY-MM-DD), chips {denomination: count} (drop: amount, in credits), by (the role);
    it counts once a second, different role confirms it"""
    KIND: ClassVar[str] = "slip"
    WHAT: ClassVar[str | None] = "entered"
    slip: int
    form: str
    day: str
    by: str
    at: int
    chips: JSON = opt()
    amount: int | None = opt()


@dataclass(frozen=True, slots=True)
class SlipConfirmed(TableRecord):
    """a second role confirmed a paperwork slip: from here it counts in its gaming day's win"""
    KIND: ClassVar[str] = "slip"
    WHAT: ClassVar[str | None] = "confirmed"
    slip: int
    by: str
    at: int
