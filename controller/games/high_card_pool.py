"""Red dog as the home game calls it, the high-card pool: five (or four) cards face down to each player, a bet up to
the pot that the hand holds a higher card of the suit the dealer turns, the forfeit of one chip, the pot refilled
when emptied, and the deal passing left.

Rules text 000_* ("Red Dog (High-Card Pool)"), with what the copy leaves open stated here:

- One pack, aces high. Every player antes `ante` to start the pot, and again whenever a player has bet the pot
  and won (the antes are put in when the next turn opens).
- Each deal is freshly shuffled. The dealer gives `hand_size` cards (five; four for more than eight players)
  one at a time face down to every player, from his left round to himself. A round is one player's turn, in the
  same order, the dealer last; then the deal passes left.
- The player bets 1 to the pot, or forfeits `forfeit` chip(s) to the pot (no card is turned then). The dealer
  turns the top card: a card of the same suit and higher rank in the hand wins the bet back plus as much from
  the pot, and only that card is shown (the lowest that beats); otherwise the whole hand is shown and the bet
  goes to the pot. Hands stay face down on the screens until shown.
"""

from __future__ import annotations

from enum import StrEnum

from dataclasses import dataclass, replace
from typing import Any

from controller.cards import Card, Composition
from controller.games._pot import DealerChanged, Pot, turn_order
from controller.games._round import Round
from controller.games._shoe import ShoeState, check_decision, check_range, deal_from_shoe
from controller.games.base import (
    BetsOpened, BoxResult, CardDealt, CardsRevealed, Decision, Effect, Effects, Event, Expected,
    GameSpec, IllegalEvent, NewShoe, OpenBets, Placed, RoundSettled, RoundVoided, RulesBase, RulesError,
    StakeChanged, VoidRound, Waiting, spot_actor,
)
from controller.games.bets import Bets

__all__ = ["GAME", "Rules", "State", "Phase", "BOXES", "new_table", "apply", "expected_next", "snapshot",
           "beating_card", "legal_bets", "BET", "FORFEIT"]

BET, FORFEIT = "bet", "forfeit"
BOXES = ("ante", BET, FORFEIT)


@dataclass(frozen=True)
class Rules(RulesBase):
    decks: int = 1
    spots: int = 6                  # players, 2 to 10; every one antes and takes a turn
    hand_size: int = 5              # four when there are more than eight players
    ante: int = 1
    forfeit: int = 1

    def validate(self) -> None:
        check_range("decks", self.decks, 1, 1, " (one pack)")
        check_range("spots", self.spots, 2, 10, " players")
        check_range("hand_size", self.hand_size, 4, 5, " cards")
        check_range("ante", self.ante, 1, 1_000_000, " credits")
        check_range("forfeit", self.forfeit, 1, 1_000_000, " credits")
        if self.spots * (self.hand_size + 1) > 52:
            raise RulesError(f"rules.hand_size: {self.spots} players of {self.hand_size} cards and a turned card each "
                             "need more than 52 cards: deal four cards each")


class Phase(StrEnum):
    """Where the round stands (the values are those of the journal, the snapshots and the views)."""

    SHUFFLING = "shuffling"
    IDLE = "idle"
    DEALING = "dealing"
    DECIDING = "deciding"
    TURNING = "turning"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: Phase = Phase.SHUFFLING
    dealer: int = 1
    turn: int = 0               # index into `turn_order` for this deal
    pot: Pot = Pot()
    hands: tuple[tuple[Card, ...], ...] = ()      # by turn order
    shown: tuple[tuple[Card, ...], ...] = ()      # cards shown, by turn order
    bet: int = 0
    forfeited: bool = False
    turned: Card | None = None
    shoe: ShoeState = ShoeState()


def new_table(rules: Rules) -> State:
    return State(rules)


def _order(state: State) -> tuple[int, ...]:
    return turn_order(state.rules.spots, state.dealer)


def player(state: State) -> int:
    return _order(state)[state.turn]


def beating_card(hand: tuple[Card, ...], turned: Card) -> Card | None:
    """The lowest card of the turned card's suit ranking above it, or None."""
    above = [c for c in hand if c.suit == turned.suit and c.rank > turned.rank]
    return min(above, key=lambda c: c.rank) if above else None


def _hands_dealt(state: State) -> int:
    return sum(len(h) for h in state.hands)


def expected_next(state: State) -> Expected:
    r = state.rules
    if state.phase is Phase.SHUFFLING:
        return Expected(Waiting.SHUFFLING, f"shuffle the pack for spot {state.dealer}'s deal (new shoe of 1 deck)",
                        actions=("new_shoe",))
    spot = player(state)
    if state.phase is Phase.IDLE:
        return Expected(Waiting.IDLE, f"spot {spot}'s turn (spot {state.dealer} deals): open the turn",
                        actions=("open_bets",))
    if state.phase is Phase.DEALING:
        n = _hands_dealt(state)
        to = _order(state)[n % r.spots]
        return Expected(Waiting.DEALING, f"card {n // r.spots + 1} to spot {to}, face down", card_to=spot_actor(to),
                        face_up=False)
    if state.phase is Phase.DECIDING:
        return Expected(Waiting.DECIDING, f"spot {spot}: bet 1 to {state.pot.chips} or forfeit {r.forfeit}",
                        actor=spot_actor(spot), actions=(BET, FORFEIT), amount_range=(1, state.pot.chips))
    if state.phase is Phase.TURNING:
        return Expected(Waiting.DEALING, "turn the top card", card_to="turn", face_up=True)
    return Expected(Waiting.SETTLING, _result_text(state) + ": settle", actions=("settle",))


def _result_text(state: State) -> str:
    if state.forfeited:
        return f"spot {player(state)} forfeits"
    assert state.turned is not None
    best = beating_card(state.hands[state.turn], state.turned)
    if best is None:
        return f"spot {player(state)} cannot beat {state.turned.symbol}"
    return f"spot {player(state)} beats {state.turned.symbol} with {best.symbol}"


# ---------------------------------------------------------------------------------------------------
# Events


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _new_pack(state: State, event: NewShoe) -> tuple[State, Effects]:
    if state.phase is not Phase.SHUFFLING:
        raise IllegalEvent("the pack is shuffled for each deal, before its first turn")
    if event.decks != 1 or event.cut is not None:
        raise IllegalEvent("the high-card pool is dealt from one pack with no cut card")
    return replace(state, phase=Phase.IDLE, shoe=ShoeState(1, 52, 0, Composition.of(1))), ()


def _open(state: State, event: OpenBets) -> tuple[State, Effects]:
    if state.phase is not Phase.IDLE:
        raise IllegalEvent(f"cannot open a turn now: {expected_next(state).text}")
    pot, antes = state.pot.open(state.rules.spots, state.rules.ante)
    phase = Phase.DEALING if not state.hands else Phase.DECIDING
    return replace(state, round=state.round + 1, phase=phase, pot=pot), (BetsOpened(state.round + 1),) + antes


def _void(state: State, event: VoidRound) -> tuple[State, Effects]:
    """Cancel the turn: antes and bet go back. A misdeal of the hands means a new shuffle and the same deal again;
    a later turn is played again by the same player with the same hand."""
    if state.phase not in (Phase.DEALING, Phase.DECIDING, Phase.TURNING, Phase.SETTLING):
        raise IllegalEvent("no turn in progress to void")
    pot, back = state.pot.void()
    spot = player(state)
    if state.bet:
        back += (StakeChanged(spot, BET, 0, -state.bet),)
    if state.forfeited:
        back += (StakeChanged(spot, FORFEIT, 0, -state.rules.forfeit),)
    returned = -sum(e.delta for e in back if isinstance(e, StakeChanged))
    if state.phase is Phase.DEALING:
        new = State(state.rules, state.round, Phase.SHUFFLING, state.dealer, state.turn, pot)
    else:
        new = replace(state, phase=Phase.IDLE, pot=pot, bet=0, forfeited=False, turned=None)
    return new, back + (RoundVoided(state.round, event.reason, returned),)


def _card(state: State, event: CardDealt) -> tuple[State, Effects]:
    to, shoe, placed = deal_from_shoe(state.shoe, expected_next(state), event)
    if state.phase is Phase.DEALING:
        index = _hands_dealt(state) % state.rules.spots
        hands = list(state.hands) or [()] * state.rules.spots
        hands[index] += (event.card,)
        new = replace(state, shoe=shoe, hands=tuple(hands), shown=state.shown or ((),) * state.rules.spots)
        if _hands_dealt(new) == state.rules.spots * state.rules.hand_size:
            new = replace(new, phase=Phase.DECIDING)
        return new, placed
    # the turned card: the player shows the card that beats it, or his whole hand
    hand = state.hands[state.turn]
    best = beating_card(hand, event.card)
    show = (best,) if best is not None else hand
    shown = state.shown[:state.turn] + (show,) + state.shown[state.turn + 1:]
    new = replace(state, shoe=shoe, turned=event.card, shown=shown, phase=Phase.SETTLING)
    return new, placed + (CardsRevealed(spot_actor(player(state)), show),)


def _decide(state: State, event: Decision) -> tuple[State, Effects]:
    check_decision(expected_next(state), event, (BET,))
    spot = player(state)
    if event.action == FORFEIT:
        forfeit = state.rules.forfeit
        return replace(state, phase=Phase.SETTLING, forfeited=True), (StakeChanged(spot, FORFEIT, forfeit, forfeit),)
    return replace(state, phase=Phase.TURNING, bet=event.amount), (StakeChanged(spot, BET, event.amount, event.amount),)


def _settle(state: State) -> tuple[State, Effects]:
    r = state.rules
    spot = player(state)
    if state.forfeited:
        result = BoxResult(spot, FORFEIT, r.forfeit, "forfeit", 0, 0, 0, f"forfeit: {r.forfeit} chip(s) to the pot")
    else:
        assert state.turned is not None
        best = beating_card(state.hands[state.turn], state.turned)
        if best is not None:
            result = BoxResult(spot, BET, state.bet, "win", state.bet, 0, 2 * state.bet,
                               f"{best} beats {state.turned}: 1:1 from the pot")
        else:
            result = BoxResult(spot, BET, state.bet, "lose", 0, 0, 0,
                               f"nothing above {state.turned} in its suit: the bet goes to the pot")
    pot, settlement = state.pot.settle((result,))
    effects: list[Effect] = [RoundSettled(state.round, settlement)]
    turn = state.turn + 1
    if turn < r.spots:
        new = replace(state, phase=Phase.IDLE, turn=turn, pot=pot, bet=0, forfeited=False, turned=None)
    else:
        dealer = state.dealer % r.spots + 1
        effects.append(DealerChanged(dealer, f"every player has bet: the deal passes to spot {dealer}"))
        new = State(r, state.round, Phase.SHUFFLING, dealer, 0, pot)
    return new, tuple(effects)


# ---------------------------------------------------------------------------------------------------
# View


def _layout(state: State) -> Bets:
    bets = state.pot.antes
    if state.bet:
        bets = bets.with_amount(player(state), BET, state.bet)
    if state.forfeited:
        bets = bets.with_amount(player(state), FORFEIT, state.rules.forfeit)
    return bets


def snapshot(state: State) -> dict[str, Any]:
    """Hands are face down until shown (the beating card, or the whole hand of a loser); the turned card is up."""
    order = _order(state)
    hands = []
    for i, hand in enumerate(state.hands):
        shown = state.shown[i] if state.shown else ()
        hands.append({"spot": order[i], "cards": [Placed(c, c in shown).json() for c in hand]})
    return {"game": "high-card-pool", "round": state.round, "phase": expected_next(state).phase.value,
            "stage": state.phase.value, "bets": _layout(state).json(), "pot": state.pot.chips, "dealer": state.dealer,
            "player": player(state), "turn_order": list(order), "hands": hands,
            "turned": Placed(state.turned, True).json() if state.turned else None,
            "cards_left": state.shoe.remaining}


_ROUND: Round[State] = Round("the high-card pool", expected_next, _settle, Phase.SETTLING, new_shoe=_new_pack,
                             void=_void, open_bets=_open, card=_card, decision=_decide)
GAME = GameSpec("high-card-pool", "Red dog (high-card pool)", Rules, new_table, apply, expected_next, snapshot, BOXES)


def legal_bets(rules: Rules, rng: Any) -> list[Event]:
    """No bets are placed while bets are open in a pot game: the bet is a decision after the deal."""
    return []
