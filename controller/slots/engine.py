"""The pure spin: `spin(state, stops, bet) -> (state, outcome)`, plus the player's commands between spins (pick, cash in, next paytable) and the draws the runtime makes with controller/rng.py.

Nothing here draws randomness, reads a clock or does I/O: the stops (and a pick bonus's draw) come in
as arguments, so a journal of (stops, bet) and commands replays into exactly the same states and
outcomes. States and outcomes are frozen and round-trip through JSON (`to_json` / `from_json`).

Money is integer credits of the title's denomination. Every credit an outcome pays is a `LineWin`
(a paytable row) or an `Award` (a feature rule); every meter that moves is a `MeterChange`. A
progressive jackpot is flagged (`progressive_hit`) but paid by the runtime from its system-wide meter,
which the outcome feeds with `progressive_contribution` whole credits.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

from controller.slots.catalog import get_title
from controller.slots.counters import FREE_SPINS, FreeSpins, MeterChange
from controller.slots.title import LINES, Bet, LinePay, SlotError, Title

if TYPE_CHECKING:
    from controller.rng import Rng

__all__ = [
    "SCHEMA_VERSION", "FreeSpins", "State", "LineWin", "Award", "MeterChange", "Outcome", "SpinContext",
    "new_state", "spin", "draw_stops", "pick", "draw_pick", "cash_in", "next_paytable", "select_paytable",
    "line_wins", "wins",
]

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class State:
    """Everything a cabinet carries from one spin to the next for its title: the feature meters (piggy bank,
    safe clicks, snowman, loss meter, light-speed level, ...), free spins to play, a pick bonus waiting for
    the player, the selected paytable and the sub-credit remainder of the progressive contribution."""

    title: Title
    meters: Mapping[str, int]
    free: FreeSpins | None = None
    pending: str | None = None     # feature kind of a pick bonus waiting for the player's choice
    paytable: int = 0
    progressive_carry: int = 0     # in 1/10,000 credit

    def __post_init__(self) -> None:
        object.__setattr__(self, "meters", MappingProxyType(dict(self.meters)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]

    def to_json(self) -> dict[str, Any]:
        return {"v": SCHEMA_VERSION, "title": self.title.id, "digest": self.title.digest,
                "meters": dict(self.meters), "free": self.free.to_json() if self.free else None,
                "pending": self.pending, "paytable": self.paytable, "progressive_carry": self.progressive_carry}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], title: Title | None = None) -> State:
        """Rebuild a journaled state. The title file must be the one that wrote it (same digest)."""
        if data.get("v") != SCHEMA_VERSION:
            raise SlotError(f"state schema version {data.get('v')!r} is not {SCHEMA_VERSION}")
        if title is None:
            title = get_title(data["title"])
        if data["title"] != title.id or data["digest"] != title.digest:
            raise SlotError(f"this state was written by title {data['title']!r} digest {data['digest'][:12]}, "
                            f"not by the loaded {title.id!r} digest {title.digest[:12]}: the title file changed")
        state = cls(title, {str(k): int(v) for k, v in data["meters"].items()},
                    FreeSpins.from_json(data["free"]) if data["free"] else None, data["pending"],
                    int(data["paytable"]), int(data["progressive_carry"]))
        _check_state(state)
        return state


@dataclass(frozen=True, slots=True)
class LineWin:
    line: int                      # payline number, 1-based (1 is the centre line)
    symbols: tuple[str, str, str]  # as shown on the payline
    combo: str                     # the paytable row, as written in the title file
    row: int                       # its index in the selected paytable
    coins: int
    multiplier: int                # wilds times any feature multiplier (light speed)
    credits: int                   # paid for this line
    morph: str | None = None       # what the substituting wilds turn into on screen (cosmetic)
    wilds: tuple[int, ...] = ()    # reels (0-based) where a wild stood in

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "symbols": list(self.symbols), "combo": self.combo, "row": self.row,
                "coins": self.coins, "multiplier": self.multiplier, "credits": self.credits,
                "morph": self.morph, "wilds": list(self.wilds)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> LineWin:
        s = d["symbols"]
        return cls(int(d["line"]), (s[0], s[1], s[2]), d["combo"], int(d["row"]), int(d["coins"]),
                   int(d["multiplier"]), int(d["credits"]), d["morph"], tuple(d["wilds"]))


@dataclass(frozen=True, slots=True)
class Award:
    feature: str   # feature kind ("piggy_bank", "safe", ...)
    what: str      # the rule, in words for the screen and the audit
    credits: int

    def to_json(self) -> dict[str, Any]:
        return {"feature": self.feature, "what": self.what, "credits": self.credits}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Award:
        return cls(d["feature"], d["what"], int(d["credits"]))


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one spin (or one command) did. `won` = line wins + awards, in credits; `cost` is what the spin
    took from the credit meter (0 for a free spin or a command)."""

    kind: str                                   # "spin", "pick", "cash_in" or "paytable"
    title: str
    stops: tuple[int, ...] | None = None        # virtual stops, as drawn
    physical: tuple[int, ...] | None = None     # physical stops the reels rest on
    window: tuple[tuple[str, str, str], ...] | None = None
    bet: Bet | None = None
    cost: int = 0
    free_spin: bool = False
    paytable: int = 0
    line_wins: tuple[LineWin, ...] = ()
    awards: tuple[Award, ...] = ()
    meters: tuple[MeterChange, ...] = ()
    free_spins_left: int = 0
    pending: str | None = None
    progressive_hit: bool = False
    progressive_contribution: int = 0
    won: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "won", sum(w.credits for w in self.line_wins) + sum(a.credits for a in self.awards))

    def to_json(self) -> dict[str, Any]:
        return {"v": SCHEMA_VERSION, "kind": self.kind, "title": self.title,
                "stops": list(self.stops) if self.stops is not None else None,
                "physical": list(self.physical) if self.physical is not None else None,
                "window": [list(r) for r in self.window] if self.window is not None else None,
                "bet": self.bet.to_json() if self.bet else None, "cost": self.cost, "free_spin": self.free_spin,
                "paytable": self.paytable, "line_wins": [w.to_json() for w in self.line_wins],
                "awards": [a.to_json() for a in self.awards], "meters": [m.to_json() for m in self.meters],
                "free_spins_left": self.free_spins_left, "pending": self.pending,
                "progressive_hit": self.progressive_hit, "progressive_contribution": self.progressive_contribution,
                "won": self.won}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Outcome:
        if d.get("v") != SCHEMA_VERSION:
            raise SlotError(f"outcome schema version {d.get('v')!r} is not {SCHEMA_VERSION}")
        out = cls(d["kind"], d["title"], tuple(d["stops"]) if d["stops"] is not None else None,
                  tuple(d["physical"]) if d["physical"] is not None else None,
                  tuple((r[0], r[1], r[2]) for r in d["window"]) if d["window"] is not None else None,
                  Bet.from_json(d["bet"]) if d["bet"] else None, int(d["cost"]), bool(d["free_spin"]),
                  int(d["paytable"]), tuple(LineWin.from_json(w) for w in d["line_wins"]),
                  tuple(Award.from_json(a) for a in d["awards"]), tuple(MeterChange.from_json(m) for m in d["meters"]),
                  int(d["free_spins_left"]), d["pending"], bool(d["progressive_hit"]), int(d["progressive_contribution"]))
        if out.won != d["won"]:
            raise SlotError(f"outcome says it won {d['won']} but its wins add up to {out.won}")
        return out


class SpinContext:
    """The working record of one spin that the title's features read and amend, in order.

    Features change meters only through `set_meter`, pay only through `award`, and move free spins only
    through `add_free_spins` / `end_free_spins`, so every change lands in the outcome."""

    def __init__(self, state: State, bet: Bet, window: tuple[tuple[str, str, str], ...],
                 line_wins: list[LineWin]) -> None:
        self.title = state.title
        self.state = state
        self.bet = bet
        self.window = window
        self.centre = window[1]
        self.line_wins = line_wins
        self.paid = state.free is None
        self.awards: list[Award] = []
        self.changes: list[MeterChange] = []
        self.meters = dict(state.meters)
        self.free = state.free
        self.pending: str | None = None
        self.progressive_hit = False
        if self.free is not None:
            self._set_free(self.free.remaining - 1, "free spin played")

    @property
    def qualifies(self) -> bool:
        """Whether this spin is at the maximum bet (what the max-bet features need)."""
        return self.bet == self.title.max_bet

    @property
    def line_credits(self) -> int:
        return sum(w.credits for w in self.line_wins)

    def set_meter(self, meter: str, value: int, why: str) -> None:
        if value != self.meters[meter]:
            self._record(meter, self.meters[meter], value, why)
            self.meters[meter] = value

    def _record(self, meter: str, before: int, after: int, why: str) -> None:
        for i, change in enumerate(self.changes):
            if change.meter == meter:  # one entry per meter per spin: first value, last value, every reason
                self.changes[i] = MeterChange(meter, change.before, after, f"{change.why}; {why}")
                return
        self.changes.append(MeterChange(meter, before, after, why))

    def award(self, feature: str, what: str, credits: int) -> None:
        if credits < 0:
            raise AssertionError(f"{feature} tried to award {credits} credits")
        self.awards.append(Award(feature, what, credits))

    def add_free_spins(self, count: int, feature: str, guaranteed: bool, why: str) -> None:
        if self.free is None:
            self.free = FreeSpins(0, self.bet, guaranteed, feature)
        self._set_free(self.free.remaining + count, why)

    def end_free_spins(self, why: str) -> None:
        if self.free is not None and self.free.remaining:
            self._set_free(0, why)

    def _set_free(self, remaining: int, why: str) -> None:
        assert self.free is not None
        self._record(FREE_SPINS, self.free.remaining, remaining, why)
        self.free = replace(self.free, remaining=remaining)


def new_state(title: Title, paytable: int = 0) -> State:
    """A cabinet's state before the first spin of `title`: every meter at its starting value."""
    meters: dict[str, int] = {}
    for feature in title.features:
        meters.update(feature.meters)
    if not 0 <= paytable < len(title.paytables):
        raise SlotError(f"{title.name} has paytables 0..{len(title.paytables) - 1}, not {paytable}")
    return State(title, meters, paytable=paytable)


def line_wins(title: Title, paytable: int, window: tuple[tuple[str, str, str], ...], bet: Bet) -> list[LineWin]:
    """The paying lines among the first `bet.lines` paylines, at `bet.coins` coins each."""
    out = []
    rows = title.paytables[paytable].rows
    for line in range(1, bet.lines + 1):
        rws = LINES[line - 1]
        triple = (window[rws[0]][0], window[rws[1]][1], window[rws[2]][2])
        pay: LinePay | None = title.line_eval(triple, paytable).by_coins[bet.coins - 1]
        if pay is not None:
            out.append(LineWin(line, triple, rows[pay.row].text, pay.row, bet.coins, pay.multiplier, pay.credits,
                               pay.morph, pay.wilds))
    return out


def wins(title: Title, paytable: int, stops: tuple[int, ...], bet: Bet) -> bool:
    """Whether these stops pay at least one line at `bet` (what a free winning spin needs)."""
    return bool(line_wins(title, paytable, title.window(title.physical(stops)), bet))


def spin(state: State, stops: tuple[int, ...], bet: Bet) -> tuple[State, Outcome]:
    """One spin of the reels at virtual `stops` (drawn by `draw_stops`). A free spin must be played at the
    bet that won it (`state.free.bet`); it costs nothing."""
    title = state.title
    if state.pending is not None:
        raise SlotError(f"the {state.pending} bonus is waiting for the player's pick")
    if state.free is not None:
        if bet != state.free.bet:
            raise SlotError(f"free spins are played at {state.free.bet.coins} coin(s) on {state.free.bet.lines} "
                            f"line(s), the bet that won them")
    else:
        title.check_bet(bet)
    stops = tuple(stops)
    physical = title.physical(stops)
    window = title.window(physical)
    paid_lines = line_wins(title, state.paytable, window, bet)
    if state.free is not None and state.free.guaranteed and not paid_lines:
        raise SlotError("a free winning spin must win: draw its stops with draw_stops()")
    ctx = SpinContext(state, bet, window, paid_lines)
    for feature in title.features:
        feature.apply(ctx)
    carry, contribution = state.progressive_carry, 0
    if title.progressive is not None and ctx.paid and ctx.qualifies:
        carry += bet.total * title.progressive.contribution_bp
        contribution, carry = divmod(carry, 10_000)
    free = ctx.free if ctx.free is not None and ctx.free.remaining > 0 else None
    new = State(title, ctx.meters, free, ctx.pending, state.paytable, carry)
    outcome = Outcome("spin", title.id, stops, physical, window, bet, bet.total if ctx.paid else 0, not ctx.paid,
                      state.paytable, tuple(ctx.line_wins), tuple(ctx.awards), tuple(ctx.changes),
                      free.remaining if free else 0, ctx.pending, ctx.progressive_hit, contribution)
    return new, outcome


def draw_stops(state: State, rng: Rng) -> tuple[int, int, int]:
    """The next spin's virtual stops: `randbelow` over each reel's virtual stops. For a free *winning*
    spin, draws again until the stops win, which is exactly a uniform draw among the winning stops."""
    reels = state.title.reels
    while True:
        stops = (rng.randbelow(reels[0].virtual_size), rng.randbelow(reels[1].virtual_size),
                 rng.randbelow(reels[2].virtual_size))
        free = state.free
        if free is None or not free.guaranteed or wins(state.title, state.paytable, stops, free.bet):
            return stops


def _feature(state: State, capability: str, kind: str | None = None) -> Any:
    for feature in state.title.features:
        if hasattr(feature, capability) and (kind is None or feature.kind == kind):
            return feature
    raise SlotError(f"{state.title.name} has no {capability.replace('_', ' ')}")


def draw_pick(state: State, rng: Rng) -> int:
    """The random part of the waiting pick bonus (for the bullfight: who wins, 0 or 1), drawn by the runtime
    and journaled with the player's choice."""
    if state.pending is None:
        raise SlotError("no pick bonus is waiting")
    return rng.randbelow(_feature(state, "resolve", state.pending).draws)


def pick(state: State, choice: str, draw: int) -> tuple[State, Outcome]:
    """Settle the waiting pick bonus with the player's `choice` and the runtime's `draw` (from draw_pick)."""
    if state.pending is None:
        raise SlotError("no pick bonus is waiting")
    feature = _feature(state, "resolve", state.pending)
    what, credits = feature.resolve(choice, draw)
    award = Award(feature.kind, what, credits)
    return (replace(state, pending=None),
            Outcome("pick", state.title.id, paytable=state.paytable, awards=(award,),
                    free_spins_left=state.free.remaining if state.free else 0))


def cash_in(state: State) -> tuple[State, Outcome]:
    """The Cash In! button: turn the banked free winning spins into spins to play now (see the title's feature)."""
    if state.pending is not None:
        raise SlotError(f"the {state.pending} bonus is waiting for the player's pick")
    if state.free is not None:
        raise SlotError("finish the free spins being played before cashing in more")
    feature = _feature(state, "cash_in")
    meters, free, changes = feature.cash_in(state)
    new = replace(state, meters=meters, free=free)
    return new, Outcome("cash_in", state.title.id, paytable=state.paytable, meters=tuple(changes),
                        free_spins_left=free.remaining)


def select_paytable(state: State, index: int) -> tuple[State, Outcome]:
    """Play on paytable `index` from the next spin (between spins only; the reels stay the same)."""
    title = state.title
    if state.pending is not None or state.free is not None:
        raise SlotError("the paytable can change only between paid spins")
    if not isinstance(index, int) or not 0 <= index < len(title.paytables):
        raise SlotError(f"{title.name} has paytables 0..{len(title.paytables) - 1}, not {index!r}")
    change = MeterChange("paytable", state.paytable, index, f"paytable {title.paytables[index].name}")
    return replace(state, paytable=index), Outcome("paytable", title.id, paytable=index,
                                                   meters=(change,) if index != state.paytable else ())


def next_paytable(state: State) -> tuple[State, Outcome]:
    """The Next Paytable button: the following paytable, wrapping round."""
    return select_paytable(state, (state.paytable + 1) % len(state.title.paytables))


def _check_state(state: State) -> None:
    title = state.title
    expected = new_state(title).meters
    if set(state.meters) != set(expected):
        raise SlotError(f"{title.name} keeps meters {sorted(expected)}, the state has {sorted(state.meters)}")
    if not 0 <= state.paytable < len(title.paytables):
        raise SlotError(f"paytable {state.paytable} is outside 0..{len(title.paytables) - 1}")
    if not 0 <= state.progressive_carry < 10_000:
        raise SlotError("the progressive carry is a fraction of a credit (0..9999)")
    if state.free is not None:
        title.check_bet(state.free.bet)
        if state.free.remaining < 1:
            raise SlotError("a state with free spins has at least one to play")
    if state.pending is not None:
        _feature(state, "resolve", state.pending)
