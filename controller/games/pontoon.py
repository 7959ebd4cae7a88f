"""Pontoon, blackjack with a changing bank: one pack with a burned card, a player as the bank, naturals paid and
collected double, ties to the dealer, the five-card charlie doubling per extra card, three sevens and 8-7-6,
and the bank passing to a natural.

Rules text 000_* ("Blackjack with a Changing Bank ("Pontoon")"); the hands are played as in the casino game
(`controller/games/blackjack.py`, whose Hand/Seat, split and double this module reuses):

- One pack. After the shuffle the top card is shown and put face up at the bottom (the burn); when it is reached
  in a deal the discards are shuffled again (a `NewShoe` mid-round; the cards on the table stay out), a new card is
  burned, and the deal goes on.
- The bank is a spot (`banker`); the other spots bet 1 to 5 chips against it. Each player and then the dealer get
  a card face down, then a card face up, from the dealer's left round to himself.
- Naturals (an ace and a ten-card): a dealer's natural is shown at once and collects double every bet (the
  player puts a second bet's worth down), a player's natural against it only the bet. A player's natural
  against a dealer without one is shown and paid double (2:1).
- The players play in turn: hit, stand, double (on 9-11 by default) and split a pair, as in the casino game. A
  player who busts turns his card up and loses. There is no standing by itself at 21: the player says so (his
  face-down card is his own until the end). The dealer then turns his card up and draws or stands as he likes;
  if he busts he pays every player who stood; otherwise he pays a higher total and collects the same or lower
  ("ties pay the dealer").
- Bonuses, collected whatever the dealer holds: five cards totalling 21 or less 2:1, each card more doubling it
  (six cards 4:1, seven 8:1, ...); 21 with three sevens 3:1; 21 with 8-7-6 2:1. The dealer's own five cards or
  three sevens win him nothing extra.
- The bank passes, after the settlement, to the player with a natural when the dealer had none (the nearest the
  dealer's left if several); between rounds the dealer may pass it to his left.

Hidden cards stay hidden on the screens: a player's face-down card until he busts, splits or the round ends; the
actions offered to a player with a face-down card are those his visible cards allow (a double or split his hidden
card rules out is refused when asked); totals and bonus names of hidden hands are under "audit" only.
"""

from __future__ import annotations

from enum import StrEnum

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

from controller.cards import Card, Composition
from controller.games._round import Round, opens, shoe_bets
from controller.games._shoe import ShoeState, check_decision, check_range, deal_from_shoe, voided
from controller.games.base import (
    BoxResult, CardDealt, CardsRevealed, CloseBets, Decision, Effect, Effects, Event, Expected,
    GameSpec, IllegalEvent, NewShoe, Payout, PlaceBet, Placed, RemoveBet, RoundSettled, RulesBase, RulesError,
    Settlement, StakeChanged, VoidRound, Waiting, spot_actor,
)
from controller.games.bets import Bets, Limit, check_limits
from controller.games.blackjack import (
    DOUBLE, HIT, SPLIT, STAND, Hand, Seat, add_dealt_card, current_hand, first_deal_position, hand_label,
    hand_wanting_card, hand_words, layout, legal_actions, play_action, replace_hand, table_cards,
)
from controller.games.chemin_de_fer import BankerChanged
from controller.hands.points import blackjack_total

__all__ = ["GAME", "Rules", "State", "Phase", "BOXES", "new_table", "apply", "expected_next", "snapshot",
           "legal_bets", "bonus", "playable", "PASS"]

BOXES = ("main",)
PASS = "pass"


@dataclass(frozen=True)
class Rules(RulesBase):
    decks: int = 1
    spots: int = 7                      # the banker's seat included
    first_banker: int = 1
    natural_pays: Payout = Payout(2, 1)             # a player's natural: the dealer pays double
    dealer_natural_collects: int = 2                # a dealer's natural collects this many bets...
    natural_against_natural_collects: int = 1       # ...but only the bet from a player's natural
    five_card_pays: Payout = Payout(2, 1)           # five cards totalling 21 or under
    extra_card_doubles: bool = True                 # six cards 4:1, seven 8:1, ...
    three_sevens_pays: Payout = Payout(3, 1)
    eight_seven_six_pays: Payout = Payout(2, 1)
    # the casino game's play (blackjack.legal_actions reads these)
    double: Literal["any", "9-11", "10-11", "none"] = "9-11"
    double_after_split: bool = False
    max_hands: int = 2                  # one split (1: no splits)
    resplit_aces: bool = False
    split_unlike_tens: bool = False     # the seed's "same denomination, such as two jacks"
    late_surrender: bool = False
    limits: Mapping[str, Limit] = field(default_factory=lambda: MappingProxyType({"main": Limit(1, 5)}))

    def validate(self) -> None:
        check_range("decks", self.decks, 1, 1, " (pontoon is dealt from one pack)")
        check_range("spots", self.spots, 2, 10, " spots, the banker's included")
        check_range("first_banker", self.first_banker, 1, self.spots, f" (a spot of the {self.spots})")
        check_range("dealer_natural_collects", self.dealer_natural_collects, 1, 10, " bets")
        check_range("natural_against_natural_collects", self.natural_against_natural_collects, 0,
                    self.dealer_natural_collects, " bets")
        check_range("max_hands", self.max_hands, 1, 4, " hands (1: no splits)")
        if self.late_surrender:
            raise RulesError("rules.late_surrender: pontoon has no surrender")
        check_limits(self.limits, BOXES)


class Phase(StrEnum):
    """Where the round stands (the values are those of the journal, the snapshots and the views)."""

    SHUFFLING = "shuffling"
    BURNING = "burning"
    IDLE = "idle"
    BETTING = "betting"
    DEAL = "deal"
    PLAY = "play"
    DEALER = "dealer"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: Phase = Phase.SHUFFLING
    banker: int = 1
    bets: Bets = Bets()
    seats: tuple[Seat, ...] = ()
    dealer: tuple[Card, ...] = ()
    shown: tuple[int, ...] = ()         # spots whose face-down card is turned up
    dealer_shown: bool = False
    dealer_drawing: bool = False        # the dealer asked for a card
    burned: Card | None = None          # the card shown and put at the bottom of the pack
    resume: Phase | None = None         # the phase a mid-round reshuffle returns to
    shoe: ShoeState = ShoeState()


def new_table(rules: Rules) -> State:
    return State(rules, banker=rules.first_banker)


# ---------------------------------------------------------------------------------------------------
# Hands


def _natural(cards: tuple[Card, ...]) -> bool:
    return blackjack_total(cards).blackjack


def bonus(rules: Rules, hand: Hand) -> tuple[Payout, str] | None:
    """The bonus line a finished (not bust) hand collects whatever the dealer holds, or None."""
    total = blackjack_total(hand.cards)
    if total.bust:
        return None
    n = len(hand.cards)
    if n >= 5:
        pays = rules.five_card_pays
        if rules.extra_card_doubles:
            pays = Payout(pays.win * 2 ** (n - 5), pays.per)
        return pays, ("five-card charlie" if n == 5 else f"{n}-card charlie")
    if n == 3 and total.total == 21:
        ranks = sorted(c.rank for c in hand.cards)
        if ranks == [7, 7, 7]:
            return rules.three_sevens_pays, "three sevens"
        if ranks == [6, 7, 8]:
            return rules.eight_seven_six_pays, "8-7-6"
    return None


def _live(rules: Rules, hand: Hand) -> bool:
    """A hand the dealer must play against: stood or doubled, not bust, not a natural, no bonus."""
    return hand.done in ("stood", "doubled") and bonus(rules, hand) is None


def _hidden(state: State, seat: Seat) -> bool:
    """Is this spot's first card still face down?"""
    return seat.spot not in state.shown


def playable(state: State) -> tuple[str, ...]:
    """What the player in turn may really do (the engine's knowledge, hidden card included: for autoplay and tests)."""
    si, hi = current_hand(state)  # type: ignore[misc]
    seat = state.seats[si]
    return tuple(a for a in legal_actions(state.rules, seat, seat.hands[hi]) if a != "surrender")


def _offered(state: State, seat: Seat, hand: Hand) -> tuple[str, ...]:
    """The actions shown for a hand: the legal ones, except that with a face-down card a double or split is offered
    whenever the visible cards allow one (the hidden card decides when it is asked for)."""
    if not _hidden(state, seat):
        return playable(state)
    r = state.rules
    actions = [HIT, STAND]
    if len(hand.cards) == 2:
        if r.double != "none":
            actions.append(DOUBLE)
        if len(seat.hands) < r.max_hands:
            actions.append(SPLIT)
    return tuple(actions)


# ---------------------------------------------------------------------------------------------------
# What comes next


def _order(state: State) -> list[int]:
    """Spots from the dealer's left round the table (the dealer not among them)."""
    n = state.rules.spots
    return [(state.banker + i - 1) % n + 1 for i in range(1, n)]


def _card_wanted(state: State) -> tuple[str, bool] | None:
    if state.phase is Phase.DEAL:
        position = first_deal_position(state)    # the first round face down, the second face up, for everyone
        return None if position is None else (position[0], position[1] == 1)
    if state.phase is Phase.PLAY:
        to = hand_wanting_card(state)
        if to is not None:
            return to, True
    if state.phase is Phase.DEALER and state.dealer_drawing:
        return "dealer", True
    return None


def expected_next(state: State) -> Expected:
    r = state.rules
    banker = spot_actor(state.banker)
    if state.phase is Phase.SHUFFLING:
        return Expected(Waiting.SHUFFLING, "shuffle the pack (new shoe of 1 deck)", actions=("new_shoe",))
    if state.phase is Phase.BURNING:
        return Expected(Waiting.DEALING, "burn: show the top card and put it face up at the bottom", card_to="burn",
                        face_up=True)
    if state.phase is Phase.IDLE:
        return Expected(Waiting.IDLE, f"spot {state.banker} holds the bank: open bets (or the banker passes the bank)",
                        actor=banker, actions=("open_bets", PASS, "new_shoe"))
    if state.phase is Phase.BETTING:
        return Expected(Waiting.BETTING, f"bets against spot {state.banker}'s bank, {r.limits['main'].min} to "
                        f"{r.limits['main'].max}", actions=("place_bet", "remove_bet", "close_bets"))
    if state.phase is Phase.SETTLING:
        return Expected(Waiting.SETTLING, "settle the round", actions=("settle",))
    wanted = _card_wanted(state)
    if wanted is not None:
        to, up = wanted
        if state.shoe.remaining == 0:
            return Expected(
                Waiting.SHUFFLING, "the burned card is reached: shuffle the discards (new shoe), then deal on",
                actions=("new_shoe",))
        return Expected(Waiting.DEALING, f"card to {hand_words(to)}, face {'up' if up else 'down'}", card_to=to,
                        face_up=up)
    if state.phase is Phase.DEALER:
        total = blackjack_total(state.dealer)
        return Expected(Waiting.DECIDING, f"dealer (spot {state.banker}) with {total}: hit or stand", actor=banker,
                        actions=(HIT, STAND))
    si, hi = current_hand(state)  # type: ignore[misc]
    seat = state.seats[si]
    hand = seat.hands[hi]
    actions = _offered(state, seat, hand)
    return Expected(Waiting.DECIDING, f"{hand_words(hand_label(seat, hi))}: {', '.join(actions)}",
                    actor=spot_actor(seat.spot), hand=hi, actions=actions)


# ---------------------------------------------------------------------------------------------------
# Events


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _no_bet_on_the_bank(state: State, event: PlaceBet | RemoveBet | CloseBets) -> None:
    if isinstance(event, PlaceBet) and event.spot == state.banker and state.phase is Phase.BETTING:
        raise IllegalEvent(f"spot {state.banker} holds the bank: the banker does not bet against it")


def _close(state: State, bets: Bets) -> State:
    seats = tuple(Seat(s, bets.get(s, "main"), (Hand("main", (), bets.get(s, "main")),))
                  for s in _order(state) if bets.get(s, "main"))
    return replace(state, phase=Phase.DEAL, seats=seats)


def _new_shoe(state: State, event: NewShoe) -> tuple[State, Effects]:
    if event.decks != 1 or event.cut is not None:
        raise IllegalEvent("pontoon is dealt from one pack with no cut card (the burned card marks its end)")
    if state.phase in (Phase.SHUFFLING, Phase.IDLE):
        resume, on_table = None, []
    elif state.phase in (Phase.DEAL, Phase.PLAY, Phase.DEALER) and state.shoe.remaining == 0 and _card_wanted(state):
        resume, on_table = state.phase, table_cards(state)
    else:
        raise IllegalEvent("the pack is shuffled between rounds, or when the burned card is reached")
    left = Composition.of(1).remove_all(on_table)
    # no cut card: the burned card at the bottom ends the pack, so the cut is never reached
    shoe = ShoeState(1, left.size + 1, 0, left)
    return replace(state, phase=Phase.BURNING, resume=resume, burned=None, shoe=shoe), ()


def _void(state: State, event: VoidRound) -> tuple[State, Effects]:
    if state.phase in (Phase.SHUFFLING, Phase.IDLE) or (state.phase is Phase.BURNING and state.resume is None):
        raise IllegalEvent("no round in progress to void")
    return _between_rounds(state, state.banker), voided(state.round, layout(state), event.reason)


def _between_rounds(state: State, banker: int) -> State:
    phase = Phase.SHUFFLING if state.shoe.remaining == 0 else Phase.IDLE
    return State(state.rules, state.round, phase, banker, burned=state.burned, shoe=state.shoe)


def _card(state: State, event: CardDealt) -> tuple[State, Effects]:
    to, shoe, effects = deal_from_shoe(state.shoe, expected_next(state), event)
    state = replace(state, shoe=shoe)
    if state.phase is Phase.BURNING:
        phase = Phase.IDLE if state.resume is None else state.resume
        return replace(state, phase=phase, resume=None, burned=event.card), effects
    if state.phase is Phase.DEAL:
        state = add_dealt_card(state, to, event.card)
        if first_deal_position(state) is None:
            state, more = _after_deal(state)
            effects += more
        return state, effects
    if state.phase is Phase.DEALER:
        state = replace(state, dealer=state.dealer + (event.card,), dealer_drawing=False)
        if blackjack_total(state.dealer).bust:
            state, more = _to_settling(state)
            effects += more
        return state, effects
    si, hi = current_hand(state)  # type: ignore[misc]
    seat = state.seats[si]
    hand = replace(seat.hands[hi], cards=seat.hands[hi].cards + (event.card,), drawing=False)
    if blackjack_total(hand.cards).bust:
        hand = replace(hand, done="bust")
        if seat.spot not in state.shown:    # the player declares and turns his card up
            state = replace(state, shown=state.shown + (seat.spot,))
            effects += (CardsRevealed(spot_actor(seat.spot), hand.cards),)
    elif hand.doubled:
        hand = replace(hand, done="doubled")
    elif hand.split_aces and SPLIT not in legal_actions(state.rules, seat, hand):
        hand = replace(hand, done="stood")  # one card to each split ace
    state, more = _advance_play(replace_hand(state, si, hi, hand))
    return state, effects + more


def _after_deal(state: State) -> tuple[State, Effects]:
    r = state.rules
    if _natural(state.dealer):
        # the dealer's natural is shown and collects double, a natural only the bet: every player puts down
        # what he owes now (a second bet's worth where it is double)
        effects: list[Effect] = [CardsRevealed("dealer", state.dealer)]
        seats = []
        for seat in state.seats:
            hand = seat.hands[0]
            owed = r.natural_against_natural_collects if _natural(hand.cards) else r.dealer_natural_collects
            stake = hand.stake * max(owed, 1)     # owing 0 is a push on the bet as it is
            if stake > hand.stake:
                effects.append(StakeChanged(seat.spot, hand.box, stake, stake - hand.stake))
            seats.append(replace(seat, hands=(replace(hand, stake=stake, done="dealer natural"),)))
            effects.append(CardsRevealed(spot_actor(seat.spot), hand.cards))
        shown = tuple(s.spot for s in state.seats)
        return replace(state, phase=Phase.SETTLING, seats=tuple(seats), shown=shown, dealer_shown=True), tuple(effects)
    effects = []
    seats = []
    shown_spots = list(state.shown)
    for seat in state.seats:
        hand = seat.hands[0]
        if _natural(hand.cards):
            hand = replace(hand, done="natural")
            shown_spots.append(seat.spot)
            effects.append(CardsRevealed(spot_actor(seat.spot), hand.cards))
        seats.append(replace(seat, hands=(hand,)))
    state, more = _advance_play(replace(state, seats=tuple(seats), shown=tuple(shown_spots)))
    return state, tuple(effects) + more


def _advance_play(state: State) -> tuple[State, Effects]:
    if current_hand(state) is not None:
        return replace(state, phase=Phase.PLAY), ()
    reveal: Effects = () if state.dealer_shown else (CardsRevealed("dealer", state.dealer),)
    state = replace(state, dealer_shown=True)
    if any(_live(state.rules, h) for s in state.seats for h in s.hands):
        return replace(state, phase=Phase.DEALER), reveal
    state, more = _to_settling(state)
    return state, reveal + more


def _to_settling(state: State) -> tuple[State, Effects]:
    """The round is decided: every card still face down is turned up."""
    hidden = [seat for seat in state.seats if seat.spot not in state.shown]
    reveal = tuple(CardsRevealed(spot_actor(seat.spot), seat.hands[0].cards) for seat in hidden)
    shown = state.shown + tuple(seat.spot for seat in hidden)
    return replace(state, phase=Phase.SETTLING, shown=shown), reveal


def _decision(state: State, event: Decision) -> tuple[State, Effects]:
    if state.phase is Phase.IDLE and event.action == PASS:
        if event.actor not in ("dealer", spot_actor(state.banker)) or event.amount or event.hand:
            raise IllegalEvent(f"only the banker (spot {state.banker}) or the croupier passes the bank")
        nxt = state.banker % state.rules.spots + 1
        return replace(state, banker=nxt), (BankerChanged(nxt, f"spot {state.banker} passed the bank"),)
    check_decision(expected_next(state), event)
    if state.phase is Phase.DEALER:
        if event.action == HIT:
            return replace(state, dealer_drawing=True), ()
        return _to_settling(state)
    if event.action not in playable(state):
        # the face-down card rules it out; say so without saying what the card is
        raise IllegalEvent(f"{event.action} is not allowed with this hand")
    si, hi = current_hand(state)  # type: ignore[misc]
    seat = state.seats[si]
    new, effects = play_action(state, event.action, _advance_play)
    if event.action == SPLIT and seat.spot not in state.shown:     # splitting turns the face-down card up
        new = replace(new, shown=state.shown + (seat.spot,))
        effects += (CardsRevealed(spot_actor(seat.spot), seat.hands[hi].cards),)
    return new, effects


# ---------------------------------------------------------------------------------------------------
# Settlement


def _hand_result(rules: Rules, spot: int, hand: Hand, dealer: tuple[Card, ...]) -> BoxResult:
    stake, box = hand.stake, hand.box
    mine = blackjack_total(hand.cards)
    if hand.done == "dealer natural":
        if not _natural(hand.cards):
            return BoxResult(spot, box, stake, "lose", 0, 0, 0,
                             f"the dealer's natural collects {rules.dealer_natural_collects} bets")
        if rules.natural_against_natural_collects == 0:
            return BoxResult(spot, box, stake, "push", 0, 0, stake, "natural against the dealer's natural: push")
        return BoxResult(spot, box, stake, "lose", 0, 0, 0,
                         f"natural against the dealer's natural: collects {rules.natural_against_natural_collects} "
                         "bet(s)")
    if hand.done == "natural":
        paid = rules.natural_pays.on(stake)
        return BoxResult(spot, box, stake, "natural", paid, 0, stake + paid, f"natural {rules.natural_pays}")
    if mine.bust:
        return BoxResult(spot, box, stake, "lose", 0, 0, 0, f"bust with {mine.total}")
    extra = bonus(rules, hand)
    if extra is not None:
        pays, name = extra
        paid = pays.on(stake)
        return BoxResult(spot, box, stake, "bonus", paid, 0, stake + paid, f"{name} {pays}")
    theirs = blackjack_total(dealer)
    if theirs.bust:
        return BoxResult(spot, box, stake, "win", stake, 0, 2 * stake, f"win 1:1, the dealer busts with {theirs.total}")
    if mine.total > theirs.total:
        return BoxResult(spot, box, stake, "win", stake, 0, 2 * stake, f"win 1:1, {mine.total} beats {theirs.total}")
    if mine.total == theirs.total:
        return BoxResult(spot, box, stake, "lose", 0, 0, 0, f"ties pay the dealer: {mine.total} each")
    return BoxResult(spot, box, stake, "lose", 0, 0, 0, f"lose, {theirs.total} beats {mine.total}")


def _settle(state: State) -> tuple[State, Effects]:
    r = state.rules
    results = tuple(_hand_result(r, seat.spot, hand, state.dealer) for seat in state.seats for hand in seat.hands)
    effects: list[Effect] = [RoundSettled(state.round, Settlement(results, banker=state.banker))]
    banker = state.banker
    naturals = [seat.spot for seat in state.seats if seat.hands[0].done == "natural"]
    if naturals:    # seats are in order from the dealer's left: the first natural takes the bank
        banker = naturals[0]
        effects.append(BankerChanged(banker, f"spot {banker} was dealt a natural against a dealer without one"))
    return _between_rounds(state, banker), tuple(effects)


# ---------------------------------------------------------------------------------------------------
# View


def snapshot(state: State) -> dict[str, Any]:
    """Every player's first card and the dealer's are face-down Placed objects until shown; totals and bonus names
    of a hand with a face-down card, and the dealer's total before his card is turned, are under "audit" only."""
    seats = []
    audit_hands = []
    for seat in state.seats:
        hidden = _hidden(state, seat)
        hands = []
        for i, h in enumerate(seat.hands):
            cards = [Placed(c, not (hidden and i == 0 and j == 0)).json() for j, c in enumerate(h.cards)]
            status = h.done or "in play"
            hands.append({"box": h.box, "stake": h.stake, "cards": cards, "status": status,
                          "total": None if hidden or not h.cards else str(blackjack_total(h.cards))})
            extra = bonus(state.rules, h) if h.done else None
            audit_hands.append({"spot": seat.spot, "box": h.box, "total": str(blackjack_total(h.cards)) if h.cards
                                else None, "bonus": extra[1] if extra else None})
        seats.append({"spot": seat.spot, "hands": hands})
    dealer_up = state.dealer_shown
    dealer_cards = [Placed(c, dealer_up or i > 0).json() for i, c in enumerate(state.dealer)]
    return {
        "game": "pontoon", "round": state.round, "phase": expected_next(state).phase.value,
        "stage": state.phase.value, "banker": state.banker,
        "bets": [{"spot": s, "box": b, "amount": a} for s, b, a in layout(state)],
        "spots": seats,
        "dealer": {"spot": state.banker, "cards": dealer_cards,
                   "total": str(blackjack_total(state.dealer)) if dealer_up and state.dealer else None},
        "burned": Placed(state.burned, True).json() if state.burned else None,
        "cards_left": state.shoe.remaining,
        "audit": {"hands": audit_hands,
                  "dealer_total": str(blackjack_total(state.dealer)) if state.dealer else None},
    }


_ROUND: Round[State] = Round("pontoon", expected_next, _settle, Phase.SETTLING, new_shoe=_new_shoe, void=_void,
                             open_bets=opens(expected_next, Phase.IDLE, Phase.BETTING),
                             bets=shoe_bets(Phase.BETTING, _close, _no_bet_on_the_bank), card=_card, decision=_decision)
GAME = GameSpec("pontoon", "Pontoon (blackjack with a changing bank)", Rules, new_table, apply, expected_next,
                snapshot, BOXES)


def legal_bets(state: State, rng: Any) -> list[Event]:
    """Bets a table might see in one round against the bank in play (for the property-test harness)."""
    limit = state.rules.limits["main"]
    spots = [s for s in _order(state) if rng.randbelow(3)] or [_order(state)[0]]
    return [PlaceBet(s, "main", limit.min + rng.randbelow(limit.max - limit.min + 1)) for s in spots]
