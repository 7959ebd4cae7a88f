"""Faro with its casekeeper: the spade layout, bets on a rank to win or coppered to lose, soda, turns of two cards,
splits, bets that stay until their rank shows, calling the turn with the last three cards, and the hock.

Rules text 000_* ("Faro", "Stuss"); where the copy is silent the usual American rules are used and said here:

- One deck. After the shuffle the first card, soda, is shown and counts for nothing. Each turn then shows the
  loser (the banker's card) and the winner (the player's card). A bet on a rank (box "K") wins 1:1 when the rank
  comes as the winner and loses when it comes as the loser; a coppered bet (box "copper:K") the other way round.
  A bet that neither card touches stays on the layout, turn after turn, until its rank shows (the settlement
  lists it only in the turn that decides it; `Settlement.carried_in/out` trace the rest).
- Split: both cards of a turn of one rank; the house takes half of every bet on that rank, coppered or not (an
  odd credit to the house), and the rest goes back.
- The last three cards (soda leaves 51: 24 turns, then a turn of three): the loser, the winner and the hock,
  which neither wins nor loses (bets left on its rank go back). Calling the turn (box "call:K73": loser K,
  winner 7, hock 3) pays 4:1, or 2:1 on a cat-hop (two of the three of one rank); three of a rank cannot be called.
- The casekeeper: cards of each rank out (soda counted) and left, in every snapshot, so the screens show it.
- Betting: while bets are open a player adds to the layout or takes back what he placed this turn; between turns
  (before bets open) he may take down a bet that stayed. A bet on a rank with no card left is refused.
- Stuss (`controller/games/stuss.py`) is these rules with no soda (26 turns of two, no hock), no calling the turn,
  and a split taking the whole bet.
"""

from __future__ import annotations

from enum import StrEnum

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from itertools import permutations
from types import MappingProxyType
from typing import Any, ClassVar, Literal, Mapping

from controller.cards import RANKS, Card, Composition
from controller.games._round import Round, bet_steps, open_round
from controller.games._shoe import ShoeState, card_target, check_range
from controller.games.base import (
    BetsClosed, BoxResult, CardDealt, CardPlaced, Effects, Event, Expected, GameSpec, IllegalEvent, NewShoe,
    OpenBets, Payout, PlaceBet, Placed, RemoveBet, RoundSettled, RoundVoided, Rounding, RulesBase, RulesError,
    Settlement, StakeChanged, VoidRound, Waiting,
)
from controller.games.bets import Bets, Limit, check_limits

__all__ = ["GAME", "Rules", "State", "Phase", "BOXES", "RANK_BOXES", "new_table", "apply", "expected_next",
           "snapshot", "casekeeper", "call_boxes", "legal_bets", "rank_char"]

_RANK_CHARS = "23456789TJQKA"


def rank_char(rank: int) -> str:
    return _RANK_CHARS[rank - 2]


RANK_BOXES = tuple(rank_char(r) for r in RANKS)
COPPER = "copper:"
CALL = "call:"
BOXES = RANK_BOXES + tuple(COPPER + r for r in RANK_BOXES) + ("call",)   # "call" stands for every "call:XYZ"
LIMIT_KEYS = ("rank", "copper", "call")


@dataclass(frozen=True)
class Rules(RulesBase):
    NAME: ClassVar[str] = "faro"
    decks: int = 1
    spots: int = 10
    soda: bool = True                       # the first card is shown and counts for nothing (leaves the hock)
    split_takes: Literal["half", "all"] = "half"
    split_rounding: Rounding = Rounding.UP  # the house's half of an odd bet: the odd credit to the house
    call_the_turn: bool = True
    call_pays: Payout = Payout(4, 1)
    cat_hop_pays: Payout = Payout(2, 1)
    limits: Mapping[str, Limit] = field(default_factory=lambda: MappingProxyType(
        {"rank": Limit(1, 500), "copper": Limit(1, 500), "call": Limit(1, 100)}))

    def validate(self) -> None:
        check_range("decks", self.decks, 1, 1, " (faro is dealt from one deck)")
        check_range("spots", self.spots, 1, 20, " spots")
        if self.call_the_turn and not self.soda:
            raise RulesError("rules.call_the_turn: calling the turn needs the soda (it leaves three cards for the last "
                             "turn)")
        check_limits(self.limits, LIMIT_KEYS)

    @property
    def box_limits(self) -> Mapping[str, Limit]:
        """The limit of every fixed box (a call box takes the "call" limit)."""
        out = {r: self.limits["rank"] for r in RANK_BOXES}
        out |= {COPPER + r: self.limits["copper"] for r in RANK_BOXES}
        return MappingProxyType(out)


# ---------------------------------------------------------------------------------------------------
# State


class Phase(StrEnum):
    """Where the round stands (the values are those of the journal, the snapshots and the views)."""

    SHUFFLING = "shuffling"
    SODA = "soda"
    IDLE = "idle"
    BETTING = "betting"
    DEALING = "dealing"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: Phase = Phase.SHUFFLING
    bets: Bets = Bets()             # everything on the layout, bets that stayed included
    opened: Bets = Bets()           # the layout when this turn's bets opened (what a void goes back to)
    soda: Card | None = None
    turns: tuple[tuple[Card, ...], ...] = ()   # every turn dealt so far: (loser, winner[, hock])
    turn: tuple[Card, ...] = ()     # this turn's cards so far
    deck: ShoeState = ShoeState()


def new_table(rules: Rules) -> State:
    return State(rules)


def _left(state: State) -> Composition:
    assert state.deck.left is not None
    return state.deck.left


def rank_left(state: State, rank: int) -> int:
    """Cards of `rank` still in the dealing box."""
    first = (rank - 2) * 4                   # card indices are rank-major: the four suits of a rank are adjacent
    return sum(_left(state).counts[first:first + 4])


def casekeeper(state: State) -> dict[str, dict[str, int]]:
    """Per rank, cards out (the soda and every turned card) and left in the box."""
    if state.deck.left is None:
        return {r: {"out": 0, "left": 4} for r in RANK_BOXES}
    return {rank_char(r): {"out": 4 - rank_left(state, r), "left": rank_left(state, r)} for r in RANKS}


def _deal_over(state: State) -> bool:
    """Too few cards are left for another turn (only after a voided last turn: a deal otherwise ends on a turn)."""
    return state.deck.remaining < 2 and not state.turn


def _last_turn(state: State) -> bool:
    """This turn deals the last three cards (loser, winner, hock)."""
    cards_at_turn_start = state.deck.remaining + len(state.turn)
    return state.rules.soda and cards_at_turn_start == 3


def call_boxes(state: State) -> dict[str, Payout]:
    """The orders the last turn can come in, as call boxes, with their payout (none for three of a rank)."""
    r = state.rules
    if not (r.call_the_turn and _last_turn(state)) or state.turn:
        return {}
    ranks = [rank_char(c.rank) for c in _left(state).cards()]
    orders = sorted(set(permutations(ranks)))
    if len(orders) == 1:
        return {}
    pays = r.call_pays if len(orders) == 6 else r.cat_hop_pays
    return {CALL + "".join(o): pays for o in orders}


def _turn_roles(state: State) -> tuple[str, ...]:
    return ("loser", "winner", "hock") if _last_turn(state) else ("loser", "winner")


def expected_next(state: State) -> Expected:
    if state.phase is Phase.SHUFFLING:
        return Expected(Waiting.SHUFFLING, "shuffle a deck into the dealing box (new shoe of 1 deck)",
                        actions=("new_shoe",))
    if state.phase is Phase.SODA:
        # the soda is a burn card shown face up (no round is in progress while it is shown)
        return Expected(Waiting.DEALING, "soda: burn the first card face up", card_to="burn", face_up=True)
    if state.phase is Phase.IDLE:
        if _deal_over(state):
            return Expected(Waiting.IDLE, "the deal is over: open the last round to give back the bets that stayed",
                            actions=("open_bets",))
        return Expected(Waiting.IDLE, "open bets for the next turn (or take down a bet that stayed)",
                        actions=("open_bets", "remove_bet", "new_shoe"))
    if state.phase is Phase.BETTING:
        calls = " and call the turn" if call_boxes(state) else ""
        return Expected(Waiting.BETTING, f"bets open: on a rank to win, coppered to lose{calls}",
                        actions=("place_bet", "remove_bet", "close_bets"))
    if state.phase is Phase.DEALING:
        role = _turn_roles(state)[len(state.turn)]
        return Expected(Waiting.DEALING, f"turn {len(state.turns) + 1}: the {role}", card_to=role, face_up=True)
    return Expected(Waiting.SETTLING, _turn_text(state) + ": settle", actions=("settle",))


def _turn_text(state: State) -> str:
    if not state.turn:
        return "the deal is over: the bets that stayed go back"
    loser, winner = state.turn[0], state.turn[1]
    text = f"{loser.rank_char} loses, {winner.rank_char} wins"
    if loser.rank == winner.rank:
        text = f"split on {loser.rank_char}"
    if len(state.turn) == 3:
        text += f", hock {state.turn[2].rank_char}"
    return text


# ---------------------------------------------------------------------------------------------------
# Events


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _new_deck(state: State, event: NewShoe) -> tuple[State, Effects]:
    if state.phase not in (Phase.SHUFFLING, Phase.IDLE) or (state.phase is Phase.IDLE and state.bets):
        raise IllegalEvent("a new deck goes in when the deal is over (or before any bet is on the layout)")
    if event.decks != 1 or event.cut is not None:
        raise IllegalEvent("faro is dealt from one deck with no cut card")
    deck = ShoeState(1, 52, 0, Composition.of(1))
    return State(state.rules, state.round, Phase.SODA if state.rules.soda else Phase.IDLE, deck=deck), ()


def _open(state: State, event: OpenBets) -> tuple[State, Effects]:
    opened = Phase.SETTLING if _deal_over(state) else Phase.BETTING
    return open_round(state, expected_next, Phase.IDLE, opened, opened=state.bets)


def _close(state: State) -> tuple[State, Effects]:
    if state.phase is not Phase.BETTING:
        raise IllegalEvent("bets are not open")
    _check_minimums(state)
    return replace(state, phase=Phase.DEALING), (BetsClosed(state.round),)


def _settle(state: State) -> tuple[State, Effects]:
    settlement, bets = settle_turn(state)
    phase = Phase.SHUFFLING if state.deck.remaining < 2 else Phase.IDLE
    turns = state.turns + ((state.turn,) if state.turn else ())
    new = replace(state, phase=phase, bets=bets, opened=Bets(), turns=turns, turn=())
    return new, (RoundSettled(state.round, settlement),)


def _limit_for(state: State, box: str) -> Mapping[str, Limit]:
    """The limits `Bets` checks a bet on `box` against (a call box only in the last turn, in a possible order)."""
    r = state.rules
    if box.startswith(CALL):
        calls = call_boxes(state)
        if box not in calls:
            if not calls:
                raise IllegalEvent("the turn can be called only with the last three cards, not three of a rank")
            raise IllegalEvent(f"{box} is not an order the last three cards can come in ({', '.join(calls)})")
        return {box: r.limits["call"]}
    limits = r.box_limits
    if box in limits:
        rank = RANKS[RANK_BOXES.index(box.removeprefix(COPPER))]
        if rank_left(state, rank) == 0:
            raise IllegalEvent(f"no {box.removeprefix(COPPER)} is left in the box: the rank is dead")
    return limits


def _place(state: State, event: PlaceBet) -> tuple[State, Effects]:
    if state.phase is not Phase.BETTING:
        raise IllegalEvent("bets are not open")
    bets, changed = state.bets.place(event, state.rules.spots, _limit_for(state, event.box))
    return replace(state, bets=bets), (changed,)


def _remove(state: State, event: RemoveBet) -> tuple[State, Effects]:
    if state.phase is Phase.BETTING:
        stayed = state.opened.get(event.spot, event.box)
        placed = state.bets.get(event.spot, event.box) - stayed
        if stayed and isinstance(event.amount, int) and event.amount > placed:
            raise IllegalEvent(f"spot {event.spot} placed {placed} on {event.box} this turn; the {stayed} that "
                               "stayed from earlier turns is taken down between turns")
    elif state.phase is not Phase.IDLE:
        raise IllegalEvent("bets are not open (a bet that stayed is taken down between turns)")
    limits = {event.box: Limit()} if event.box.startswith(CALL) else state.rules.box_limits
    bets, changed = state.bets.remove(event, state.rules.spots, limits)
    return replace(state, bets=bets), (changed,)


def _check_minimums(state: State) -> None:
    for spot, box, amount in state.bets:
        key = "call" if box.startswith(CALL) else "copper" if box.startswith(COPPER) else "rank"
        if amount < state.rules.limits[key].min:
            raise IllegalEvent(f"spot {spot} {box}: {amount} is under the table minimum of "
                               f"{state.rules.limits[key].min}")


def _void(state: State, event: VoidRound) -> tuple[State, Effects]:
    """Cancel the turn: what was placed this turn goes back; bets that stayed stay. Cards already shown stay out
    (they are on the casekeeper) and settle nothing; the deal goes on, or ends if too few cards are left."""
    if state.phase not in (Phase.BETTING, Phase.DEALING, Phase.SETTLING):
        raise IllegalEvent("no turn in progress to void")
    back = []
    bets = state.bets
    for spot, box, amount in state.bets:
        before = state.opened.get(spot, box)
        if amount > before:
            back.append(StakeChanged(spot, box, before, before - amount))
            bets = bets.with_amount(spot, box, before)
    returned = -sum(e.delta for e in back)
    # With fewer than two cards left no turn can follow: bets that stayed go back in one more round, opened and
    # settled with no cards ("the deal is over"), so that every round still returns only what it took.
    phase = Phase.SHUFFLING if state.deck.remaining < 2 and not bets else Phase.IDLE
    turns = state.turns + ((state.turn,) if state.turn else ())
    new = replace(state, phase=phase, bets=bets, opened=Bets(), turns=turns, turn=())
    return new, tuple(back) + (RoundVoided(state.round, event.reason, returned),)


def _card(state: State, event: CardDealt) -> tuple[State, Effects]:
    exp = expected_next(state)
    to = card_target(exp, event)
    deck, done = state.deck.take(event.card)
    placed = CardPlaced(event.card, to, True)
    if state.phase is Phase.SODA:
        return replace(state, phase=Phase.IDLE, deck=deck, soda=event.card), (placed,)
    turn = state.turn + (event.card,)
    new = replace(state, deck=deck, turn=turn)
    if len(turn) == len(_turn_roles(state)):
        new = replace(new, phase=Phase.SETTLING)
    return new, (placed,) + done


# ---------------------------------------------------------------------------------------------------
# Settlement


def settle_turn(state: State) -> tuple[Settlement, Bets]:
    """The bets this turn decides, and the layout that stays for the next turn (nothing once the deal is over)."""
    r = state.rules
    if not state.turn:   # the deal ended on a voided turn: nothing left can decide a bet
        back = tuple(BoxResult(spot, box, stake, "push", 0, 0, stake, "the deal is over: the bet goes back")
                     for spot, box, stake in state.bets)
        return Settlement(back, carried_in=state.opened.total), Bets()
    loser, winner = state.turn[0], state.turn[1]
    hock = state.turn[2] if len(state.turn) == 3 else None
    over = state.deck.remaining < 2               # no further turn: whatever is left cannot be decided
    split = loser.rank == winner.rank
    order = "".join(c.rank_char for c in state.turn)
    call_pays = r.call_pays if len(set(order)) == 3 else r.cat_hop_pays
    results = []
    stays = Bets()
    for spot, box, stake in state.bets:
        if box.startswith(CALL):
            if box == CALL + order:
                paid = call_pays.on(stake)
                cat_hop = " (cat-hop)" if len(set(order)) == 2 else ""
                results.append(BoxResult(spot, box, stake, "win", paid, 0, stake + paid,
                                         f"calling the turn {call_pays}{cat_hop}: {order}"))
            else:
                results.append(BoxResult(spot, box, stake, "lose", 0, 0, 0,
                                         f"the turn came {order}, not {box[len(CALL):]}"))
            continue
        coppered = box.startswith(COPPER)
        rank = box.removeprefix(COPPER)
        if split and rank == loser.rank_char:
            take = stake if r.split_takes == "all" else r.split_rounding.divide(stake, 2)
            what = "the house takes the bet" if r.split_takes == "all" else "the house takes half"
            results.append(BoxResult(spot, box, stake, "split", 0, 0, stake - take, f"split on {rank}: {what}"))
        elif rank in (loser.rank_char, winner.rank_char):
            wins = (rank == winner.rank_char) != coppered
            side = "winner" if rank == winner.rank_char else "loser"
            what = f"{rank}{' coppered' if coppered else ''} comes as the {side}"
            if wins:
                results.append(BoxResult(spot, box, stake, "win", stake, 0, 2 * stake, f"1:1, {what}"))
            else:
                results.append(BoxResult(spot, box, stake, "lose", 0, 0, 0, f"lose, {what}"))
        elif over:
            line = (f"hock {hock.rank_char}: the last card neither wins nor loses" if hock is not None
                    else f"the deal is over with no {rank} to decide the bet: it goes back")
            results.append(BoxResult(spot, box, stake, "push", 0, 0, stake, line))
        else:
            stays = stays.with_amount(spot, box, stake)
    return Settlement(tuple(results), carried_in=state.opened.total, carried_out=stays.total), stays


# ---------------------------------------------------------------------------------------------------
# View


def snapshot(state: State) -> dict[str, Any]:
    """Every faro card is face up; the casekeeper, the turns so far and the callable orders are public."""
    return {
        "game": state.rules.NAME, "round": state.round, "phase": expected_next(state).phase.value,
        "stage": state.phase.value, "bets": state.bets.json(),
        "soda": Placed(state.soda, True).json() if state.soda else None,
        "turn": [{"role": role, **Placed(c, True).json()} for role, c in zip(("loser", "winner", "hock"), state.turn)],
        "turns": [[Placed(c, True).json() for c in t] for t in state.turns],
        "casekeeper": casekeeper(state), "cards_left": state.deck.remaining,
        "last_turn": state.deck.loaded and _last_turn(state),
        "calls": {box[len(CALL):]: str(p) for box, p in call_boxes(state).items()} if state.deck.loaded else {},
    }


_ROUND: Round[State] = Round(lambda state: state.rules.NAME, expected_next, _settle, Phase.SETTLING,
                             new_shoe=_new_deck, void=_void, open_bets=_open, bets=bet_steps(_place, _remove, _close),
                             card=_card)
GAME = GameSpec("faro", "Faro", Rules, new_table, apply, expected_next, snapshot, BOXES)


def legal_bets(state: State, rng: Any) -> list[Event]:
    """Bets a layout might get before a turn (for the property-test harness): live ranks, calls on the last turn."""
    r = state.rules
    bets: list[Event] = []
    live = [c for c in RANK_BOXES if rank_left(state, RANKS[RANK_BOXES.index(c)])]
    calls = sorted(call_boxes(state))
    for spot in range(1, r.spots + 1):
        if rng.randbelow(3) == 0 and live:
            box = rng.choice(live)
            kind = "rank"
            if rng.randbelow(3) == 0:
                box, kind = COPPER + box, "copper"
            limit = r.limits[kind]
            amount = limit.min + rng.randbelow(max(1, min(limit.max - limit.min, 9 * limit.min)))
            if state.bets.get(spot, box) + amount <= limit.max:
                bets.append(PlaceBet(spot, box, amount))
        if calls and rng.randbelow(2) == 0:
            bets.append(PlaceBet(spot, rng.choice(calls), r.limits["call"].min))
    return bets
