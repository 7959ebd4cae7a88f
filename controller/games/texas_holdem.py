"""Texas hold'em for a poker room, dealer-assist: blinds, antes, four betting rounds under no-limit, pot-limit or fixed limit, side pots, showdown, split pots and the house's rake (seeds 001_*, 002_*).

The players play each other; the house deals and takes the rake. The table tracks each seat's chips
(`stack`, a buy-in is a `place_bet` on box "stack", a cash-out a `remove_bet`, both between hands), and a
round is one hand:

- Seating (bets open): buy-ins and add-ons up to the table's maximum; the first buy-in at least the
  minimum. Closing bets deals the hand to every seat with chips (at least two).
- The button moves to the next seat dealt in, clockwise (spot numbers run clockwise). The seats left of
  it post the small and the big blind (heads-up the button posts the small blind); every seat posts the
  ante first when there is one. A seat short of a blind or the ante puts in what it has, all in; the big
  blind's full amount is still the bet to call (the usual room rule; 001_*: "the big blind ... regarded a
  live bet").
- Cards: two hole cards each, face down, one at a time from the seat left of the button; then a burn
  (face down) before the flop (three cards), the turn and the river, each face up (002_*).
- Betting: preflop from the seat left of the big blind (heads-up the button first), later rounds from the
  first seat left of the button still in. Decisions: `fold`, `check`, `call`, `bet`, `raise`, `all_in`;
  `amount` is the player's whole bet on this round after the action ("raise to"), 0 allowed for fold,
  check, call and all-in. No-limit: the minimum raise is the last full raise of the round (at least the
  big blind), the maximum the stack. Pot-limit: the maximum raise is the pot after calling. Fixed limit:
  bets and raises of the small bet (preflop, flop) or the big bet (turn, river), a bet and three raises a
  round (`raise_cap`; preflop the big blind is the bet), every bet or raise counting, all-ins too.
- An all-in raise smaller than a full raise does not reopen the betting: a seat that has acted since the
  last full raise may only call or fold unless it now faces at least a full raise in all, short all-ins
  added up, or in fixed limit at least half a bet (TDA rule 47).
  A bet nobody calls comes back to its owner at the end of the round.
- Side pots: one pot per all-in level, a pot to the seats in for that level; folded seats' chips stay in.
- Showdown: the last seat to bet or raise on the river shows first, else the first seat left of the
  button; then clockwise. Every hand still in is turned up (cards speak).
- Split pots: every pot split on its own into equal shares; the odd chips one each (no one gets two) from
  the first winner left of the button (`odd_chip = "left_of_button"`, the rule for button games), or from
  the winner with the highest hole card by rank, then suit spades > hearts > diamonds > clubs
  (`"high_card"`, the stud rule).
- Rake: `rake_percent` of the whole pot, rounded down, at most `rake_cap`, taken from the main pot first,
  then the side pots in order; no flop, no drop (`no_flop_no_drop`).

Money: every chip into the pot is a StakeChanged on box "pot" (a returned uncalled bet a negative one);
the settlement has one row per seat and pot ("main_pot", "side_pot_1", ...): the seat's chips in that
pot as its stake, and for a winner its share of the pot as paid, the rake it bears as commission and
the share less rake as returned. So stakes = returned + rake, and every credit names its pot.
Buy-ins and cash-outs are `StackChanged` effects: they move chips on and off the table, not into a pot.
"""

from __future__ import annotations

from collections.abc import Mapping
import enum
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, ClassVar

from controller.cards import Card
from controller.games._holdem_betting import (
    FLOP, PREFLOP, RIVER, TURN, Options, Structure, call_level, full_raise, options, reopened,
)
from controller.games._holdem_pots import OddChip, Pot, hand_value, pots, settle, showdown_order, split
from controller.games._house_poker import Phases, place_card, reveal
from controller.games._round import Round, bet_steps
from controller.games.base import (
    BetsClosed, BetsOpened, CardDealt, Decision, Effect, Effects, Event, Expected, GameSpec, IllegalEvent, OpenBets,
    PlaceBet, Placed, RemoveBet, RoundSettled, RoundVoided, RulesBase, RulesError, StakeChanged, VoidRound, Waiting,
    spot_actor,
)
from controller.games.bets import Limit, check_limits
from controller.hands import poker

__all__ = ["GAME", "Rules", "State", "Phase", "Structure", "OddChip", "StackChanged", "Options", "Pot", "BOXES",
           "new_table", "apply", "expected_next", "snapshot", "legal_bets", "options", "pots", "showdown_order",
           "autoplay_decision", "reopened", "split"]

NAME = "texas-holdem"
BOXES = ("stack",)
STREETS = ("preflop", "flop", "turn", "river")
BOARD_AFTER = {FLOP: 3, TURN: 4, RIVER: 5}


@dataclass(frozen=True, slots=True)
class StackChanged(Effect):
    """A seat's chips on the table changed by a buy-in, an add-on (delta > 0) or a cash-out (delta < 0)."""
    KIND: ClassVar[str] = "stack_changed"
    spot: int
    stack: int
    delta: int


@dataclass(frozen=True)
class Rules(RulesBase):
    """A cash game; defaults: no-limit 1/2 blinds, no ante, 10% rake up to 5, buy-in 40 to 400."""

    spots: int = 9
    structure: Structure = Structure.NO_LIMIT
    small_blind: int = 1
    big_blind: int = 2
    ante: int = 0
    small_bet: int = 0        # fixed limit: the bet preflop and on the flop (0: the big blind)
    big_bet: int = 0          # fixed limit: the bet on the turn and river (0: twice the small bet)
    raise_cap: int = 3        # fixed limit: raises after the bet each round
    odd_chip: OddChip = OddChip.LEFT_OF_BUTTON
    rake_percent: int = 10
    rake_cap: int = 5
    no_flop_no_drop: bool = True
    limits: Mapping[str, Limit] = field(default_factory=lambda: MappingProxyType({"stack": Limit(40, 400)}))

    def validate(self) -> None:
        if not 2 <= self.spots <= 10:
            raise RulesError(f"rules.spots: 2 to 10 seats, got {self.spots}")
        if not 1 <= self.small_blind <= self.big_blind:
            raise RulesError(f"rules.small_blind: 1 to the big blind ({self.big_blind}), got {self.small_blind}")
        for key in ("ante", "small_bet", "big_bet", "raise_cap"):
            if getattr(self, key) < 0:
                raise RulesError(f"rules.{key}: 0 or more, got {getattr(self, key)}")
        if not 0 <= self.rake_percent <= 10:
            raise RulesError(f"rules.rake_percent: 0 to 10, got {self.rake_percent}")
        if self.rake_cap < 0:
            raise RulesError(f"rules.rake_cap: 0 or more credits, got {self.rake_cap}")
        if self.structure is Structure.FIXED_LIMIT and self.raise_cap < 1:
            raise RulesError("rules.raise_cap: at least 1 raise in fixed limit")
        check_limits(self.limits, BOXES)

    def bet_size(self, street: int) -> int:
        """Fixed limit: the size of a bet or raise on `street`."""
        small = self.small_bet or self.big_blind
        return small if street <= FLOP else (self.big_bet or 2 * small)


class Phase(enum.StrEnum):
    """Where a hand of hold'em stands (the values are those of the journal, the snapshots and the views)."""

    IDLE = "idle"
    SEATING = "seating"
    DEALING = "dealing"
    ACTING = "acting"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: Phase = Phase.IDLE
    stacks: tuple[tuple[int, int], ...] = ()   # (spot, chips behind) of every seated spot
    button: int = 0
    prior_button: int = 0      # the button before this hand (a void puts it back)
    players: tuple[int, ...] = ()   # spots dealt in, from the first left of the button: the button is last
    put: tuple[int, ...] = ()       # chips each player has put in the pot this hand
    street_bets: tuple[int, ...] = ()
    folded: tuple[bool, ...] = ()
    street: int = PREFLOP
    cards: tuple[tuple[str, Placed], ...] = ()
    queue: tuple[int, ...] = ()     # players still to act this round, in order (indices into players)
    acted: tuple[bool, ...] = ()    # acted since the last full bet or raise
    last_full: int = 0              # the last full bet or raise of this round
    raises: int = 0                 # bets and raises this round
    aggressor: int = -1             # the last to bet or raise this round
    river_aggressor: int = -1
    log: tuple[tuple[str, int, str, int], ...] = ()   # (street, spot, action, bet after it)

    def stack(self, spot: int) -> int:
        return next((chips for s, chips in self.stacks if s == spot), 0)

    def with_stack(self, spot: int, chips: int) -> State:
        rest = [(s, c) for s, c in self.stacks if s != spot]
        return replace(self, stacks=tuple(sorted(rest + [(spot, chips)])))

    def hole(self, spot: int) -> tuple[Card, ...]:
        to = spot_actor(spot)
        return tuple(p.card for where, p in self.cards if where == to)

    @property
    def board(self) -> tuple[Card, ...]:
        return tuple(p.card for where, p in self.cards if where == "board")

    def live(self) -> list[int]:
        """Players (indices) not folded."""
        return [i for i, f in enumerate(self.folded) if not f]


def new_table(rules: Rules) -> State:
    return State(rules)


# ---------------------------------------------------------------------------------------------------
# The flow of a hand


def _next_card(state: State) -> tuple[str, bool]:
    n = len(state.players)
    holes = sum(1 for where, _ in state.cards if where.startswith("spot:"))
    if holes < 2 * n:
        return spot_actor(state.players[holes % n]), False
    burns = sum(1 for where, _ in state.cards if where == "burn")
    return ("burn", False) if burns < state.street else ("board", True)


def _post(state: State, i: int, chips: int, into_bet: bool) -> tuple[State, Effect]:
    spot = state.players[i]
    chips = min(chips, state.stack(spot))
    put = list(state.put)
    put[i] += chips
    bets = list(state.street_bets)
    if into_bet:
        bets[i] += chips
    new = replace(state.with_stack(spot, state.stack(spot) - chips), put=tuple(put), street_bets=tuple(bets))
    return new, StakeChanged(spot, "pot", put[i], chips)


def _deal_in(state: State) -> tuple[State, Effects]:
    """Close of seating: move the button, post antes and blinds, start the deal."""
    r = state.rules
    seated = [s for s, chips in state.stacks if chips > 0]
    if len(seated) < 2:
        raise IllegalEvent("a hand needs at least two seats with chips")
    button = next((s for s in seated if s > state.button), seated[0])
    at = seated.index(button)
    players = tuple(seated[at + 1:] + seated[:at + 1])
    n = len(players)
    state = replace(state, phase=Phase.DEALING, prior_button=state.button, button=button, players=players,
                    put=(0,) * n, street_bets=(0,) * n, folded=(False,) * n, street=PREFLOP, cards=(),
                    acted=(False,) * n, last_full=r.big_blind, raises=0, aggressor=-1, river_aggressor=-1, log=())
    effects: list[Effect] = [BetsClosed(state.round)]
    if r.ante:
        for i in range(n):
            state, eff = _post(state, i, r.ante, False)
            effects.append(eff)
    small, big = (1, 0) if n == 2 else (0, 1)
    for i, chips in ((small, r.small_blind), (big, r.big_blind)):
        state, eff = _post(state, i, chips, True)
        effects.append(eff)
    return state, tuple(effects)


def _start_round(state: State) -> tuple[State, Effects]:
    """Open the betting round of state.street, or go straight on when nobody can bet."""
    n = len(state.players)
    if state.street != PREFLOP:
        state = replace(state, street_bets=(0,) * n, last_full=0)
    state = replace(state, acted=(False,) * n, raises=0, aggressor=-1)
    first = (1 if n == 2 else 2 % n) if state.street == PREFLOP else 0
    can_act = [(first + k) % n for k in range(n)
               if not state.folded[(first + k) % n] and state.stack(state.players[(first + k) % n]) > 0]
    level = call_level(state)
    if not can_act or (len(can_act) == 1 and state.street_bets[can_act[0]] >= level):
        return _end_round(replace(state, queue=()))
    return replace(state, phase=Phase.ACTING, queue=tuple(can_act)), ()


def _end_round(state: State) -> tuple[State, Effects]:
    """Every bet is called (or nobody can act): return an uncalled bet, then the next street or the showdown."""
    effects: list[Effect] = []
    ordered = sorted(state.street_bets, reverse=True)
    if len(ordered) > 1 and ordered[0] > ordered[1]:
        i = state.street_bets.index(ordered[0])
        back = ordered[0] - ordered[1]
        spot = state.players[i]
        put, bets = list(state.put), list(state.street_bets)
        put[i] -= back
        bets[i] -= back
        state = replace(state.with_stack(spot, state.stack(spot) + back), put=tuple(put), street_bets=tuple(bets))
        effects.append(StakeChanged(spot, "pot", put[i], -back))
    if state.street == RIVER and state.aggressor >= 0:
        state = replace(state, river_aggressor=state.aggressor)
    if len(state.live()) == 1:
        return replace(state, phase=Phase.SETTLING, queue=()), tuple(effects)
    if state.street == RIVER:
        return _showdown(replace(state, queue=()), effects)
    return replace(state, phase=Phase.DEALING, street=state.street + 1, queue=()), tuple(effects)


def _showdown(state: State, effects: list[Effect]) -> tuple[State, Effects]:
    state, shown = reveal(state, [spot_actor(spot) for spot in showdown_order(state)])
    return replace(state, phase=Phase.SETTLING), tuple(effects) + shown


def _card(state: State, event: CardDealt) -> tuple[State, Effects]:
    if state.phase is not Phase.DEALING:
        raise IllegalEvent(f"no card expected now: {expected_next(state).text}")
    state, placed = place_card(state, event, *_next_card(state), phases=_PHASES)
    n = len(state.players)
    holes = sum(1 for where, _ in state.cards if where.startswith("spot:"))
    if (state.street == PREFLOP and holes == 2 * n) or (
            state.street > PREFLOP and len(state.board) == BOARD_AFTER[state.street]):
        state, more = _start_round(state)
        return state, placed + more
    return state, placed


def _act(state: State, event: Decision) -> tuple[State, Effects]:
    if state.phase is not Phase.ACTING:
        raise IllegalEvent(f"no decision expected now: {expected_next(state).text}")
    o = options(state)
    if event.actor != spot_actor(o.spot):
        raise IllegalEvent(f"spot {o.spot} is to act, not {event.actor!r}")
    if event.action not in o.actions:
        raise IllegalEvent(f"spot {o.spot} may {', '.join(o.actions)}, not {event.action!r}")
    if event.hand != 0 or isinstance(event.amount, bool) or not isinstance(event.amount, int):
        raise IllegalEvent("a poker decision has one hand and a whole amount")
    p, spot = o.player, o.spot
    action, to = event.action, event.amount
    if action == "all_in":
        if to not in (0, o.all_in_to):
            raise IllegalEvent(f"spot {spot} all in is {o.all_in_to}, not {to}")
        to = o.all_in_to
        action = "call" if to <= o.call_to else (o.raise_name or "raise")
    elif action in ("bet", "raise"):
        if not o.min_to <= to <= o.max_to:
            raise IllegalEvent(f"spot {spot} may {action} to {o.min_to}"
                               f"{'' if o.min_to == o.max_to else f' to {o.max_to}'}, not {to}")
    elif action == "call":
        if to not in (0, o.call_to):
            raise IllegalEvent(f"spot {spot} calls to {o.call_to}, not {to}")
        to = o.call_to
    elif to != 0:
        raise IllegalEvent(f"{action} takes no amount")
    effects: list[Effect] = []
    acted = list(state.acted)
    acted[p] = True
    queue = list(state.queue[1:])
    if action == "fold":
        folded = list(state.folded)
        folded[p] = True
        state = replace(state, folded=tuple(folded))
    elif action in ("call", "bet", "raise"):
        bet = state.street_bets[p]
        if action != "call":
            level = call_level(state)
            increment = to - level
            n = len(state.players)
            if increment >= full_raise(state):
                acted = [False] * n
                acted[p] = True
                state = replace(state, last_full=increment)
            state = replace(state, raises=state.raises + 1, aggressor=p)
            queue = [(p + k) % n for k in range(1, n)
                     if not state.folded[(p + k) % n] and state.stack(state.players[(p + k) % n]) > 0]
        state, eff = _post(state, p, to - bet, True)
        effects.append(eff)
    state = replace(state, acted=tuple(acted), queue=tuple(queue),
                    log=state.log + ((STREETS[state.street], spot, event.action, state.street_bets[p]),))
    if state.queue and len(state.live()) > 1:
        return state, tuple(effects)
    state, more = _end_round(state)
    return state, tuple(effects) + more


def _seat(state: State, event: PlaceBet | RemoveBet) -> tuple[State, Effects]:
    r = state.rules
    if state.phase is not Phase.SEATING:
        raise IllegalEvent("chips go on or off the table between hands, while seating is open")
    if isinstance(event.spot, bool) or not isinstance(event.spot, int) or not 1 <= event.spot <= r.spots:
        raise IllegalEvent(f"no spot {event.spot!r} at this table (spots 1 to {r.spots})")
    if event.box != "stack":
        raise IllegalEvent(f"no box {event.box!r} in hold'em: buy in or cash out on 'stack'")
    if isinstance(event.amount, bool) or not isinstance(event.amount, int) or event.amount < 1:
        raise IllegalEvent(f"an amount is a whole number of credits above zero, not {event.amount!r}")
    have = state.stack(event.spot)
    limit = r.limits["stack"]
    if isinstance(event, PlaceBet):
        new = have + event.amount
        if new > limit.max:
            raise IllegalEvent(f"spot {event.spot}: {new} would be over the table's maximum buy-in of {limit.max}")
        if have == 0 and event.amount < limit.min:
            raise IllegalEvent(f"spot {event.spot}: the minimum buy-in is {limit.min}")
    else:
        if event.amount > have:
            raise IllegalEvent(f"spot {event.spot} has {have} on the table, cannot cash out {event.amount}")
        new = have - event.amount
    return state.with_stack(event.spot, new), (StackChanged(event.spot, new, new - have),)


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _open(state: State, event: OpenBets) -> tuple[State, Effects]:
    if state.phase is not Phase.IDLE:
        raise IllegalEvent(f"a hand is already in progress: {expected_next(state).text}")
    return replace(state, round=state.round + 1, phase=Phase.SEATING), (BetsOpened(state.round + 1),)


def _close(state: State) -> tuple[State, Effects]:
    if state.phase is not Phase.SEATING:
        raise IllegalEvent("seating is not open")
    return _deal_in(state)


def _settle(state: State) -> tuple[State, Effects]:
    settlement = settle(state)
    for row in settlement.results:
        state = state.with_stack(row.spot, state.stack(row.spot) + row.returned)
    return _between_hands(state, state.button), (RoundSettled(state.round, settlement),)


def _between_hands(state: State, button: int) -> State:
    return State(state.rules, state.round, stacks=state.stacks, button=button)


def _void(state: State, event: VoidRound) -> tuple[State, Effects]:
    if state.phase is Phase.IDLE:
        raise IllegalEvent("no hand to void")
    effects: list[Effect] = []
    returned = 0
    for i, chips in enumerate(state.put):
        if chips:
            spot = state.players[i]
            state = state.with_stack(spot, state.stack(spot) + chips)
            effects.append(StakeChanged(spot, "pot", 0, -chips))
            returned += chips
    button = state.prior_button if state.players else state.button
    effects.append(RoundVoided(state.round, event.reason, returned))
    return _between_hands(state, button), tuple(effects)


# ---------------------------------------------------------------------------------------------------
# What the table waits for, and the picture


def expected_next(state: State) -> Expected:
    if state.phase is Phase.IDLE:
        return Expected(Waiting.IDLE, "open the next hand (seating)", actions=("open_bets",))
    if state.phase is Phase.SEATING:
        return Expected(Waiting.BETTING, "seating: buy in or cash out on 'stack'; close to deal",
                        actions=("place_bet", "remove_bet", "close_bets"))
    if state.phase is Phase.DEALING:
        to, up = _next_card(state)
        what = {"burn": "burn card, face down", "board": f"{STREETS[state.street]} card, face up"}.get(
            to, f"hole card to {to.replace(':', ' ')}, face down")
        return Expected(Waiting.DEALING, what, card_to=to, face_up=up)
    if state.phase is Phase.ACTING:
        o = options(state)
        words = []
        for a in o.actions:
            if a == "call":
                words.append(f"call {o.call_to - state.street_bets[o.player]}")
            elif a in ("bet", "raise"):
                words.append(f"{a} to {o.min_to}" + ("" if o.min_to == o.max_to else f"-{o.max_to}"))
            elif a == "all_in":
                words.append(f"all in ({o.all_in_to})")
            else:
                words.append(a)
        pot = sum(state.put)
        return Expected(
            Waiting.DECIDING, f"{STREETS[state.street]}, spot {o.spot} to act: {', '.join(words)}; pot {pot}",
            actor=spot_actor(o.spot), actions=o.actions,
            amount_range=(o.min_to, o.max_to) if o.raise_name else None)
    return Expected(Waiting.SETTLING, "settle: award the pots", actions=("settle",))


def snapshot(state: State) -> dict[str, Any]:
    """Seats, chips, bets, pots, the board and whose action it is; hole cards face down until the showdown,
    and a hand's name only once its cards are up (else under "audit")."""
    seats = []
    audit: dict[str, str] = {}
    index = {s: i for i, s in enumerate(state.players)}
    # Bets stay in front of the seats while their round is on (and the blinds while the hole cards are dealt).
    in_front = state.phase is Phase.ACTING or (state.phase is Phase.DEALING and state.street == PREFLOP)
    for spot, chips in state.stacks:
        seat: dict[str, Any] = {"spot": spot, "stack": chips, "button": spot == state.button}
        i = index.get(spot)
        if i is not None and state.phase is not Phase.IDLE:
            placed = [p for where, p in state.cards if where == spot_actor(spot)]
            seat |= {"in_hand": True, "folded": state.folded[i], "all_in": chips == 0 and not state.folded[i],
                     "bet": state.street_bets[i] if in_front else 0, "put": state.put[i],
                     "cards": [p.json() for p in placed]}
            if len(placed) == 2 and len(state.board) >= 3 and not state.folded[i]:
                name = poker.describe(hand_value(state, i) if len(state.board) == 5 else
                                      poker.best_value([p.card for p in placed] + list(state.board)))
                if all(p.up for p in placed):
                    seat["hand"] = name
                else:
                    audit[spot_actor(spot)] = name
        seats.append(seat)
    collected = [a - (b if in_front else 0) for a, b in zip(state.put, state.street_bets)]
    shown = [{"name": p.name, "amount": p.amount, "eligible": [state.players[i] for i in p.eligible]}
             for p in pots(collected, state.folded)]
    picture: dict[str, Any] = {
        "game": NAME, "round": state.round, "phase": expected_next(state).phase.value,
        "stage": state.phase.value, "structure": state.rules.structure.value,
        "blinds": [state.rules.small_blind, state.rules.big_blind],
        "ante": state.rules.ante, "button": state.button or None,
        "bets": [{"spot": s, "box": "pot", "amount": a} for s, a in zip(state.players, state.put) if a],
        "street": STREETS[state.street] if state.players else None, "seats": seats,
        "board": [p.json() for where, p in state.cards if where == "board"],
        "burns": [p.json() for where, p in state.cards if where == "burn"],
        "pots": shown, "pot_total": sum(state.put), "actions": [list(a) for a in state.log],
        "to_act": None, "audit": {"hands": audit}}
    if state.phase is Phase.ACTING:
        o = options(state)
        picture["to_act"] = {"spot": o.spot, "actions": list(o.actions),
                             "call": o.call_to - state.street_bets[o.player],
                             "min_to": o.min_to or None, "max_to": o.max_to or None, "all_in_to": o.all_in_to}
    if state.phase is Phase.SETTLING and len(state.live()) > 1:
        picture["showdown_order"] = showdown_order(state)
    return picture


_PHASES = Phases(Phase.IDLE, Phase.SEATING, Phase.DEALING)
_ROUND: Round[State] = Round("hold'em", expected_next, _settle, Phase.SETTLING, void=_void, open_bets=_open,
                             bets=bet_steps(_seat, _seat, _close), card=_card, decision=_act)
GAME = GameSpec(NAME, "Texas Hold'em (dealer-assist)", Rules, new_table, apply, expected_next, snapshot, BOXES)


def legal_bets(state: State, rng: Any) -> list[Event]:
    """Buy-ins that seat enough players for a hand (for the property-test harness and the demo)."""
    r = state.rules
    limit = r.limits["stack"]
    bets: list[Event] = []
    for spot in range(1, r.spots + 1):
        have = state.stack(spot)
        if have < limit.min and rng.randbelow(3):
            amount = max(limit.min - have, 1) + rng.randbelow(limit.max - max(have, limit.min) + 1)
            bets.append(PlaceBet(spot, "stack", min(amount, limit.max - have)))
    seated = {s for s, c in state.stacks if c > 0} | {e.spot for e in bets if isinstance(e, PlaceBet)}
    for spot in range(1, r.spots + 1):
        if len(seated) >= 2:
            break
        if spot not in seated and state.stack(spot) == 0:
            bets.append(PlaceBet(spot, "stack", limit.min))
            seated.add(spot)
    return bets


def autoplay_decision(state: State, exp: Expected, rng: Any) -> tuple[str, int]:
    """The demo's players: mostly check or call, sometimes bet or raise (a random legal size), now and then fold."""
    o = options(state)
    roll = rng.randbelow(10)
    if o.raise_name and roll >= 8:
        return o.raise_name, o.min_to + rng.randbelow(o.max_to - o.min_to + 1)
    if "fold" in o.actions and roll == 0:
        return "fold", 0
    return ("call" if "call" in o.actions else "check"), 0
