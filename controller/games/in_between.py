"""In-between (acey-deucey) as a pot game: antes, two cards turned, a bet up to the pot on the third falling between
them, consecutive cards losing, a pair paying two chips (or three), the pot refilled when emptied, the deal going
round the table.

Rules text 000_* ("In-Between (Acey-Deucey, Red Dog)"), with what the copy leaves open stated here:

- One pack, aces high, twos low. Every player antes one chip (`ante`) to start the pot, and again whenever a
  player has taken the whole pot (the antes are put in when the next turn opens).
- A round is one player's turn, from the dealer's left round to the dealer, who plays last; then the deal passes
  left. The dealer turns two cards up (the spread); the player bets at least `min_bet`, at most the pot (or
  `max_bet` if the table sets one); the third card is turned: strictly between the two wins the bet back plus as
  much from the pot; outside them, or matching either, the bet goes to the pot.
- Two consecutive cards lose at once: the player's minimum bet goes to the pot and no third card is turned (the
  copy: "must always bet a minimum of one chip" and "automatically loses"). A pair pays `pair_pays` chips from the
  pot, no bet and no third card (at most what the pot holds).
- The pack is reshuffled between turns once fewer than three cards are left (the cut card `cards_behind_cut`).

`spread` and `between` are shared with the casino game (`red_dog.py`).
"""

from __future__ import annotations

from enum import StrEnum

from dataclasses import dataclass, replace
from typing import Any

from controller.cards import Card
from controller.games._pot import DealerChanged, Pot, turn_order
from controller.games._round import Round, shoe_between_rounds
from controller.games._shoe import ShoeState, check_decision, check_range, deal_from_shoe
from controller.games.base import (
    BetsOpened, BoxResult, CardDealt, Decision, Effect, Effects, Event, Expected, GameSpec,
    IllegalEvent, OpenBets, Placed, RoundSettled, RoundVoided, RulesBase, RulesError, StakeChanged, VoidRound,
    Waiting, spot_actor,
)
from controller.games.bets import Bets

__all__ = ["GAME", "Rules", "State", "Phase", "BOXES", "new_table", "apply", "expected_next", "snapshot", "spread",
           "between", "legal_bets", "BET"]

BOXES = ("ante", "bet", "pair")
BET = "bet"


def spread(first: Card, second: Card) -> int:
    """Ranks strictly between two cards (aces high): -1 for a pair, 0 for consecutive cards, 11 for ace-deuce."""
    return abs(first.rank - second.rank) - 1


def between(card: Card, first: Card, second: Card) -> bool:
    """Does `card` rank strictly between the two (matching either is not between)?"""
    low, high = sorted((first.rank, second.rank))
    return low < card.rank < high


@dataclass(frozen=True)
class Rules(RulesBase):
    decks: int = 1
    spots: int = 6                # players at the table, 2 to 10; every one antes and takes a turn
    ante: int = 1
    min_bet: int = 1
    max_bet: int = 0              # 0: the whole pot
    pair_pays: int = 2            # chips from the pot for a pair on the spread (some tables pay 3)
    cards_behind_cut: int = 3     # a turn needs three cards: reshuffle between turns once fewer are left

    def validate(self) -> None:
        check_range("decks", self.decks, 1, 2, " decks")
        check_range("spots", self.spots, 2, 10, " players")
        check_range("ante", self.ante, 1, 1_000_000, " credits")
        check_range("min_bet", self.min_bet, 1, 1_000_000, " credits")
        check_range("pair_pays", self.pair_pays, 0, 1_000_000, " credits")
        check_range("cards_behind_cut", self.cards_behind_cut, 3, self.decks * 26, " (a turn needs three cards)")
        if self.max_bet and self.max_bet < self.min_bet:
            raise RulesError(f"rules.max_bet: {self.max_bet} is under the min_bet of {self.min_bet} (0: the pot)")


class Phase(StrEnum):
    """Where the round stands (the values are those of the journal, the snapshots and the views)."""

    SHUFFLING = "shuffling"
    IDLE = "idle"
    DEALING = "dealing"
    DECIDING = "deciding"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: Phase = Phase.SHUFFLING
    dealer: int = 1
    turn: int = 0               # index of the player in `turn_order` for this deal
    pot: Pot = Pot()
    bet: int = 0                # the player's bet on the layout this turn
    cards: tuple[Card, ...] = ()   # the spread, then the third card
    shoe: ShoeState = ShoeState()


def new_table(rules: Rules) -> State:
    return State(rules)


def player(state: State) -> int:
    return turn_order(state.rules.spots, state.dealer)[state.turn]


def _bet_range(state: State) -> tuple[int, int]:
    """The least and most the player may bet: never more than the pot holds (it pays the wins), so a pot under
    the minimum bet lowers the minimum to the pot."""
    cap = state.pot.chips
    top = min(cap, state.rules.max_bet) if state.rules.max_bet else cap
    return min(state.rules.min_bet, top), top


def expected_next(state: State) -> Expected:
    r = state.rules
    if state.phase is Phase.SHUFFLING:
        return Expected(Waiting.SHUFFLING, f"shuffle the pack (new shoe of {r.decks} deck)", actions=("new_shoe",))
    spot = player(state)
    if state.phase is Phase.IDLE:
        return Expected(Waiting.IDLE, f"spot {spot}'s turn (spot {state.dealer} deals): open the turn",
                        actions=("open_bets", "new_shoe"))
    if state.phase is Phase.DEALING:
        if len(state.cards) < 2:
            return Expected(Waiting.DEALING, f"spread card {len(state.cards) + 1}, face up", card_to="spread",
                            face_up=True)
        return Expected(Waiting.DEALING, "the third card, face up, between the two", card_to="middle", face_up=True)
    if state.phase is Phase.DECIDING:
        low, high = sorted(state.cards, key=lambda c: c.rank)
        lo, hi = _bet_range(state)
        return Expected(Waiting.DECIDING, f"spot {spot}: bet {lo} to {hi} on a card between {low.rank_char} and "
                        f"{high.rank_char}", actor=spot_actor(spot), actions=(BET,), amount_range=(lo, hi))
    return Expected(Waiting.SETTLING, _result_text(state) + ": settle", actions=("settle",))


def _result_text(state: State) -> str:
    first, second = state.cards[:2]
    gap = spread(first, second)
    if gap == -1:
        return f"pair of {first.rank_char}s: spot {player(state)} takes {min(state.rules.pair_pays, state.pot.chips)}"
    if gap == 0:
        return f"{first.rank_char}-{second.rank_char} consecutive: spot {player(state)} loses"
    third = state.cards[2]
    return f"{third.rank_char} {'falls between' if between(third, first, second) else 'is not between'}"


# ---------------------------------------------------------------------------------------------------
# Events


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _void(state: State, event: VoidRound) -> tuple[State, Effects]:
    if state.phase not in (Phase.DEALING, Phase.DECIDING, Phase.SETTLING):
        raise IllegalEvent("no turn in progress to void")
    pot, back = state.pot.void()
    if state.bet:
        back += (StakeChanged(player(state), BET, 0, -state.bet),)
    new = replace(state, phase=Phase.SHUFFLING if state.shoe.cut_reached else Phase.IDLE, pot=pot, bet=0, cards=())
    return new, back + (RoundVoided(state.round, event.reason, state.bet + state.pot.antes.total),)


def _open(state: State, event: OpenBets) -> tuple[State, Effects]:
    if state.phase is not Phase.IDLE:
        raise IllegalEvent(f"cannot open a turn now: {expected_next(state).text}")
    pot, antes = state.pot.open(state.rules.spots, state.rules.ante)
    return replace(state, round=state.round + 1, phase=Phase.DEALING, pot=pot), (BetsOpened(state.round + 1),) + antes


def _decide(state: State, event: Decision) -> tuple[State, Effects]:
    check_decision(expected_next(state), event, (BET,))
    return (replace(state, phase=Phase.DEALING, bet=event.amount),
            (StakeChanged(player(state), BET, event.amount, event.amount),))


def _card(state: State, event: CardDealt) -> tuple[State, Effects]:
    to, shoe, effects = deal_from_shoe(state.shoe, expected_next(state), event)
    new = replace(state, shoe=shoe, cards=state.cards + (event.card,))
    if len(new.cards) == 2:
        gap = spread(*new.cards)
        if gap == -1:
            new = replace(new, phase=Phase.SETTLING)
        elif gap == 0:
            # consecutive: the player's minimum bet goes down and loses, no third card
            new = replace(new, phase=Phase.SETTLING, bet=_bet_range(state)[0])
            effects += (StakeChanged(player(state), BET, new.bet, new.bet),)
        else:
            new = replace(new, phase=Phase.DECIDING)
    elif len(new.cards) == 3:
        new = replace(new, phase=Phase.SETTLING)
    return new, effects


def _settle(state: State) -> tuple[State, Effects]:
    r = state.rules
    spot = player(state)
    first, second = state.cards[:2]
    gap = spread(first, second)
    if gap == -1:
        paid = min(r.pair_pays, state.pot.chips)
        result = BoxResult(spot, "pair", 0, "win", paid, 0, paid,
                           f"pair of {first.rank_char}s on the spread: {paid} chip(s) from the pot")
    elif gap == 0:
        result = BoxResult(spot, BET, state.bet, "lose", 0, 0, 0,
                           f"{first.rank_char}-{second.rank_char} consecutive: the minimum bet goes to the pot")
    elif between(state.cards[2], first, second):
        result = BoxResult(spot, BET, state.bet, "win", state.bet, 0, 2 * state.bet,
                           f"{state.cards[2].rank_char} between {first.rank_char} and {second.rank_char}: "
                           "1:1 from the pot")
    else:
        result = BoxResult(spot, BET, state.bet, "lose", 0, 0, 0,
                           f"{state.cards[2].rank_char} not between {first.rank_char} and {second.rank_char}: "
                           "the bet goes to the pot")
    pot, settlement = state.pot.settle((result,))
    effects: list[Effect] = [RoundSettled(state.round, settlement)]
    dealer, turn = state.dealer, state.turn + 1
    if turn == r.spots:
        dealer, turn = dealer % r.spots + 1, 0
        effects.append(DealerChanged(dealer, f"every player has had a turn: the deal passes to spot {dealer}"))
    new = State(r, state.round, Phase.SHUFFLING if state.shoe.cut_reached else Phase.IDLE, dealer, turn, pot,
                shoe=state.shoe)
    return new, tuple(effects)


# ---------------------------------------------------------------------------------------------------
# View


def _layout(state: State) -> Bets:
    bets = state.pot.antes
    return bets.with_amount(player(state), BET, state.bet) if state.bet else bets


def snapshot(state: State) -> dict[str, Any]:
    """Every card is face up; the pot, who deals and whose turn it is are public."""
    cards = [{"role": role, **Placed(c, True).json()} for role, c in zip(("spread", "spread", "middle"), state.cards)]
    return {"game": "in-between", "round": state.round, "phase": expected_next(state).phase.value,
            "stage": state.phase.value, "bets": _layout(state).json(), "pot": state.pot.chips, "dealer": state.dealer,
            "player": player(state),
            "turn_order": list(turn_order(state.rules.spots, state.dealer)), "cards": cards,
            "spread": spread(*state.cards[:2]) if len(state.cards) >= 2 else None, "shoe": state.shoe.json()}


_ROUND: Round[State] = Round(
    "in-between", expected_next, _settle, Phase.SETTLING,
    new_shoe=shoe_between_rounds((Phase.SHUFFLING, Phase.IDLE), Phase.IDLE, "the pack is reshuffled between turns"),
    void=_void, open_bets=_open, card=_card, decision=_decide)
GAME = GameSpec("in-between", "In-between (acey-deucey)", Rules, new_table, apply, expected_next, snapshot, BOXES)


def legal_bets(rules: Rules, rng: Any) -> list[Event]:
    """No bets are placed while bets are open in a pot game: the bet is a decision after the spread."""
    return []
