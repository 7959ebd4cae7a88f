"""A cabinet's state types (credits, slot state, payouts, lockups, meters, progressive) and the effects of its fold (controller/cabinetstate.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.slots import Bet, Outcome, State, Title

__all__ = [
    "RECALL", "LOCKUPS", "Settings", "Payout", "Lockup", "Progressive", "CabinetMeters", "CabinetState",
    "Spun", "Picked", "Credited", "PayoutStarted", "CoinPaid", "PayoutDone", "LockupRaised", "LockupCleared",
    "DoorChanged", "LinkChanged", "ProgressiveHit", "ProgressiveWon", "SlotChanged",
    "Escrow", "TicketOut", "DEVICE_LOCKUPS", "MONEY_SHOWN", "NoteTaken", "TicketPaid", "ItemEscrowed", "TicketValidated",
]

RECALL = 10  # games kept in the state for the attendant's recall screen (croupier recall replays for more)

# Lockup kinds: the roles that may clear each one, its clearing actions, and what the display says.
LOCKUPS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    "hand_pay": (("attendant",), ("paid",), "HAnd PAY"),
    "jackpot": (("attendant",), ("paid",), "JACPOt"),
    "coin_in_jam": (("attendant", "ops"), ("clear",), "COIn JAN"),
    "reverse_coin": (("attendant", "ops"), ("clear",), "COIn rEV"),
    "hopper_empty": (("attendant", "ops"), ("refill", "hand_pay"), "HOPPEr E"),
    "hopper_jam": (("attendant", "ops"), ("refill", "hand_pay"), "HOPPEr J"),
    "hopper_runaway": (("ops",), ("clear",), "HOPPEr r"),
    "reel_misindex": (("ops",), ("clear",), "rEEL Err"),
    "floor_offline": (("ops",), ("clear",), "no FLOOr"),  # [floor] stop_play_after: cleared when the floor is back
    # Notes and tickets (issue 41). An item in doubt (power lost while stacking): the attendant counts the stacker.
    "note_in_doubt": (("attendant", "ops"), ("credit", "no_credit"), "bILL ?"),
    "ticket_in_doubt": (("attendant", "ops"), ("credit", "no_credit"), "tICt ?"),
    # Device lockups: raised by a DeviceFault and gone with its DeviceCleared (the device says it is fixed); the
    # role is who is sent to fix it. A cheat stays until ops clears it once the validator reports it gone.
    # Validator faults lock money in (the game plays on what is on the meter); printer faults lock ticket out
    # (a cash out then goes to the hopper or a hand pay).
    "validator_jam": (("attendant", "ops"), ("clear",), "bILL JAN"),
    "validator_stacker_full": (("attendant", "ops"), ("clear",), "StAC FUL"),
    "validator_stacker_open": (("attendant", "ops"), ("clear",), "StAC OPn"),
    "validator_cheat": (("ops",), ("clear",), "bILL CHt"),
    "validator_failure": (("ops",), ("clear",), "bILL Err"),
    "validator_offline": (("ops",), ("clear",), "bILL OFF"),
    "printer_paper_out": (("attendant", "ops"), ("clear",), "PAPEr"),
    "printer_jam": (("attendant", "ops"), ("clear",), "Prt JAN"),
    "printer_head_open": (("attendant", "ops"), ("clear",), "Prt OPn"),
    "printer_offline": (("ops",), ("clear",), "Prt OFF"),
}

# The device lockups: they block their device's part of the money (money in, ticket out), not play.
DEVICE_LOCKUPS = frozenset(k for k in LOCKUPS if k.startswith(("validator_", "printer_")))
MONEY_SHOWN = 6  # notes and tickets kept in the state for the attendant page


@dataclass(frozen=True, slots=True)
class Settings:
    """What the cabinet's config decides about money, as journaled in each start record."""

    hand_pay_limit: int = 1200 * 100   # credits: a cash out above this is paid by an attendant
    jackpot_limit: int = 1200 * 100    # credits: a single win at or above this locks up for a hand pay
    coin_credits: int = 1              # credits per coin (acceptor and hopper)
    hopper: bool = True                # False: every cash out is a hand pay
    progressive: str = "none"          # "none", "standalone" (the cabinet's own pool) or "link"

    def json(self) -> dict[str, Any]:
        return {"hand_pay_limit": self.hand_pay_limit, "jackpot_limit": self.jackpot_limit,
                "coin_credits": self.coin_credits, "hopper": self.hopper, "progressive": self.progressive}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Settings:
        return cls(int(data["hand_pay_limit"]), int(data["jackpot_limit"]), int(data["coin_credits"]),
                   bool(data["hopper"]), str(data["progressive"]))


@dataclass(frozen=True, slots=True)
class Payout:
    """A cash out in progress: by the hopper (coin by coin) or by hand (one lockup)."""

    via: str          # "hopper" or "hand_pay"
    credits: int      # what left the credit meter
    coins: int = 0    # coins due from the hopper
    paid: int = 0     # coins paid so far

    def owed(self, coin_credits: int) -> int:
        """Credits still owed to the player."""
        return self.credits if self.via == "hand_pay" else (self.coins - self.paid) * coin_credits

    def json(self) -> dict[str, Any]:
        return {"via": self.via, "credits": self.credits, "coins": self.coins, "paid": self.paid}


@dataclass(frozen=True, slots=True)
class Lockup:
    id: int
    kind: str
    text: str
    credits: int = 0  # a hand pay's or jackpot's amount

    @property
    def clear_by(self) -> tuple[str, ...]:
        return LOCKUPS[self.kind][0]

    @property
    def options(self) -> tuple[str, ...]:
        return LOCKUPS[self.kind][1]

    @property
    def display(self) -> str:
        return LOCKUPS[self.kind][2]

    def json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "text": self.text, "credits": self.credits,
                "clear_by": list(self.clear_by), "options": list(self.options)}


@dataclass(frozen=True, slots=True)
class Progressive:
    """The progressive as the cabinet sees it: its own pool (standalone), or the link's status and the
    contributions and hit the link controller has not acknowledged yet."""

    mode: str = "none"
    pool: int = 0                                   # standalone: the pool in credits
    up: bool = False                                # link: heard from the controller lately
    unacked: tuple[tuple[int, int], ...] = ()       # link: (game, cents) contributions not yet acknowledged
    pending_hit: int | None = None                  # link: the game whose hit waits for the controller's award

    def json(self) -> dict[str, Any]:
        return {"mode": self.mode, "pool": self.pool, "up": self.up, "unacked": [list(u) for u in self.unacked],
                "pending_hit": self.pending_hit}


def _bump(pairs: tuple[tuple[str, Any], ...], key: str, add: Any) -> tuple[tuple[str, Any], ...]:
    d = dict(pairs)
    if isinstance(add, tuple):
        old = d.get(key, (0,) * len(add))
        d[key] = tuple(a + b for a, b in zip(old, add))
    else:
        d[key] = d.get(key, 0) + add
    return tuple(sorted(d.items()))


@dataclass(frozen=True, slots=True)
class CabinetMeters:
    """The electronic meters, derived from the journal and never cleared. Amounts are credits of the
    cabinet's denomination; counts are counts."""

    coin_in: int = 0                 # credits bet
    coin_out: int = 0                # credits won to the credit meter
    jackpot_handpaid: int = 0        # attendant-paid jackpots
    cancelled_handpaid: int = 0      # attendant-paid cancelled credits (cash outs by hand)
    hopper_out: int = 0              # credits paid by the hopper
    drop: int = 0                    # credits of the coins accepted
    credits_added: int = 0           # credits added by the operator's command
    coins_in: int = 0
    coins_out: int = 0
    coins_refused: int = 0           # credits of coins that arrived while money in was disabled
    hopper_extra: int = 0            # credits of coins a runaway hopper paid beyond the payout
    games_played: int = 0
    games_won: int = 0
    games_lost: int = 0
    free_games: int = 0
    power_resets: int = 0
    refused: int = 0
    faults: int = 0
    progressive_hits: int = 0
    progressive_won: int = 0         # credits
    progressive_contributed: int = 0  # credits
    door_opens: tuple[tuple[str, int], ...] = ()
    lockups: tuple[tuple[str, int], ...] = ()
    features: tuple[tuple[str, tuple[int, int]], ...] = ()  # feature -> (awards, credits)
    # Notes and tickets (issue 41): amounts in cents, as printed on them; counts are counts.
    notes_in: tuple[tuple[int, int], ...] = ()       # note value in cents -> notes stacked
    notes_in_cents: int = 0
    notes_rejected: int = 0
    tickets_in_cashable: int = 0
    tickets_in_cashable_cents: int = 0
    tickets_in_restricted: int = 0
    tickets_in_restricted_cents: int = 0
    tickets_out_cashable: int = 0
    tickets_out_cashable_cents: int = 0
    tickets_out_restricted: int = 0
    tickets_out_restricted_cents: int = 0
    # ... and the same money in credits of the denomination, for the balance (every note and ticket the cabinet
    # takes or prints is a whole number of credits).
    notes_credits: int = 0
    tickets_in_credits: int = 0
    tickets_out_credits: int = 0

    @property
    def credits_in(self) -> int:
        return self.drop + self.credits_added + self.notes_credits + self.tickets_in_credits

    @property
    def credits_out(self) -> int:
        return self.hopper_out + self.cancelled_handpaid + self.tickets_out_credits

    def json(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, name) for name in (
            "coin_in", "coin_out", "jackpot_handpaid", "cancelled_handpaid", "hopper_out", "drop", "credits_added",
            "coins_in", "coins_out", "coins_refused", "hopper_extra", "games_played", "games_won", "games_lost",
            "free_games", "power_resets", "refused", "faults", "progressive_hits", "progressive_won",
            "progressive_contributed", "notes_in_cents", "notes_rejected", "tickets_in_cashable",
            "tickets_in_cashable_cents", "tickets_in_restricted", "tickets_in_restricted_cents", "tickets_out_cashable",
            "tickets_out_cashable_cents", "tickets_out_restricted", "tickets_out_restricted_cents", "notes_credits",
            "tickets_in_credits", "tickets_out_credits")}
        out["notes_in"] = {str(cents): n for cents, n in self.notes_in}
        out["credits_in"] = self.credits_in
        out["credits_out"] = self.credits_out
        out["door_opens"] = dict(self.door_opens)
        out["lockups"] = dict(self.lockups)
        out["features"] = {k: {"awards": n, "credits": c} for k, (n, c) in self.features}
        return out


@dataclass(frozen=True, slots=True)
class Escrow:
    """The item the bill validator holds: a note (validation None) or a ticket, and how far it got.

    stage: a note "escrow" -> "stacking" (-> "in_doubt"); a ticket "inserted" -> "authorised" | "refused"
    (-> "in_doubt")."""

    stage: str
    cents: int = 0
    validation: str | None = None
    restricted: bool = False

    @property
    def ticket(self) -> bool:
        return self.validation is not None

    def json(self) -> dict[str, Any]:
        return {"item": "ticket" if self.ticket else "note", "stage": self.stage, "cents": self.cents,
                "validation": self.validation, "restricted": self.restricted}


@dataclass(frozen=True, slots=True)
class TicketOut:
    """A cash-out ticket requested and not yet printed (or failed): its credits are off the meter."""

    number: int
    credits: int
    cents: int
    restricted: bool
    validation: str | None = None  # set once journaled: only then may it print
    by: str | None = None
    expires: int | None = None

    def json(self) -> dict[str, Any]:
        return {"number": self.number, "credits": self.credits, "cents": self.cents, "restricted": self.restricted,
                "validation": self.validation, "by": self.by, "expires": self.expires}


@dataclass(frozen=True)
class CabinetState:
    cabinet_id: str
    title: Title = field(repr=False, compare=False)
    denomination: int                                 # cents per credit
    slot: State
    settings: Settings = Settings()
    seq: int = 0
    credits: int = 0
    bet: Bet = Bet()
    games: int = 0                                    # games played: the last game's number
    payout: Payout | None = None
    lockups: tuple[Lockup, ...] = ()
    next_lockup: int = 1
    doors_open: tuple[str, ...] = ()
    progressive: Progressive = Progressive()
    meters: CabinetMeters = CabinetMeters()
    recall: tuple[dict[str, Any], ...] = ()
    recall_size: int = RECALL
    last_win: int = 0                                 # what the win meter shows
    host_disabled: bool = False                       # the floor's SAS host shut the game down (long poll 01)
    # Notes and tickets (issue 41)
    restricted: int = 0                               # of `credits`, the restricted (non-cashable) ones: bet first
    escrow: Escrow | None = None                      # the item in the bill validator
    ticket_out: TicketOut | None = None               # the cash-out ticket in progress
    tickets: int = 0                                  # the last cash-out ticket's number
    validation_id: tuple[int, int] | None = None      # secure-enhanced validation: (validation id, next sequence)
    bills: tuple[bool, tuple[int, ...] | None] = (True, None)  # SAS: validator enabled, notes (cents; None: all)
    device_faults: tuple[tuple[str, str], ...] = ()   # (device, code) the validator and printer report now
    money: tuple[dict[str, Any], ...] = ()            # the last notes and tickets (attendant page)
    money_since: tuple[dict[str, Any], ...] = ()      # notes and tickets since the last game (its recall)

    @property
    def owed(self) -> int:
        """Credits of a payout in progress still owed to the player."""
        return self.payout.owed(self.settings.coin_credits) if self.payout else 0

    @property
    def cashable(self) -> int:
        """Credits on the meter that may be cashed out as cash (restricted ones may not)."""
        return self.credits - self.restricted

    @property
    def pending(self) -> int:
        """Credits off the meter and not yet paid: a payout still owed and a ticket not yet printed."""
        return self.owed + (self.ticket_out.credits if self.ticket_out else 0)


# --------------------------------------------------------------------------------------------------- effects

@dataclass(frozen=True, slots=True)
class Spun:
    game: int
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Picked:
    game: int
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class SlotChanged:
    """Cash In! or Next Paytable changed the title's state."""

    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Credited:
    credits: int
    source: str


@dataclass(frozen=True, slots=True)
class PayoutStarted:
    payout: Payout


@dataclass(frozen=True, slots=True)
class CoinPaid:
    extra: bool  # beyond the payout: a runaway coin


@dataclass(frozen=True, slots=True)
class PayoutDone:
    payout: Payout


@dataclass(frozen=True, slots=True)
class LockupRaised:
    lockup: Lockup


@dataclass(frozen=True, slots=True)
class LockupCleared:
    lockup: Lockup
    action: str


@dataclass(frozen=True, slots=True)
class DoorChanged:
    name: str
    open: bool


@dataclass(frozen=True, slots=True)
class LinkChanged:
    up: bool


@dataclass(frozen=True, slots=True)
class ProgressiveHit:
    game: int


@dataclass(frozen=True, slots=True)
class ItemEscrowed:
    """The validator holds a note or ticket (the runtime decides: stack, ask the host, or return)."""

    escrow: Escrow


@dataclass(frozen=True, slots=True)
class TicketValidated:
    """A cash-out ticket has its validation number journaled: print it."""

    ticket: TicketOut


@dataclass(frozen=True, slots=True)
class NoteTaken:
    cents: int
    credits: int


@dataclass(frozen=True, slots=True)
class TicketPaid:
    """A ticket went in (stacked: `inward`) or out (printed)."""

    inward: bool
    validation: str
    cents: int
    restricted: bool


@dataclass(frozen=True, slots=True)
class ProgressiveWon:
    game: int
    credits: int
