"""Blackjack with a permanent bank: the deal, peek, insurance, hit/stand/double/split/surrender, the dealer's
draw and settlement, on 1 to 8 decks, for up to seven spots.

Rules text 000_*/001_* with the options casinos post on the layout (defaults: the common six-deck shoe game):

- Deal: one card face up to each spot in turn, one up to the dealer, a second to each spot, the dealer's
  second (the hole card) face down. Every later card is dealt face up, a double's card too (the rules
  text's face-down double card belongs to the hand-held game).
- Peek: with an ace or a ten-card up the dealer checks the hole card for blackjack before anyone plays; a
  dealer blackjack takes every main bet except a player blackjack, which pushes.
- Insurance (with an ace up, before the peek): up to half the main bet, pays 2:1 if the dealer has blackjack.
- Player options: hit, stand, double (on any two cards, or on 9-11 / 10-11 only), split a pair (up to
  `max_hands` hands; a pair of ten-cards of different ranks too unless `split_unlike_tens` is off; split aces get
  one card each, resplit only if `resplit_aces`), double after split (`double_after_split`), late surrender
  (half the bet back, first two cards only, after the peek). An ace and a ten-card after a split is 21,
  not a blackjack, and pays 1:1. A hand reaching 21 stands by itself.
- Dealer: stands on 17, or hits soft 17 (`dealer_hits_soft_17`); draws only if some hand is still live.
- Pays: blackjack 3:2 (or 6:5), win 1:1, insurance 2:1; fractions of a credit stay with the house
  (3:2 on 5 pays 7; surrendering 5 gives back 2).
- Shoe: the cut card goes `penetration`% into the shoe; when it comes out this round is the last.
  If the shoe runs out mid-round the discards are reshuffled (a `NewShoe`, the cards on the table stay out).
"""

from __future__ import annotations

from enum import StrEnum

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Callable, Literal, Protocol, TypeVar

from controller.cards import ACE, TEN, Card
from controller.games._round import Round, opens, shoe_bets, void_step
from controller.games._shoe import ShoeState, check_decision, check_range, deal_from_shoe, load_shoe
from controller.games.base import (
    BoxResult, CardDealt, CardsRevealed, Decision, Effects, Event, Expected, GameSpec,
    IllegalEvent, NewShoe, Payout, PlaceBet, Placed, RoundSettled, RulesBase, RulesError, Settlement, StakeChanged,
    Waiting, spot_actor,
)
from controller.games.bets import Bets, Limit, check_limits
from controller.hands.points import BlackjackTotal, blackjack_total

__all__ = ["GAME", "Rules", "State", "Phase", "Seat", "Hand", "BOXES", "new_table", "apply", "expected_next",
           "snapshot", "legal_actions", "legal_bets", "INSURANCE_PAYS", "current_hand", "replace_hand", "hand_label",
           "hand_words", "double_down", "split_pair", "is_pair", "first_deal_position", "add_dealt_card",
           "hand_wanting_card", "layout", "table_cards", "play_action"]

BOXES = ("main",)
_S = TypeVar("_S")
INSURANCE_PAYS = Payout(2, 1)
HIT, STAND, DOUBLE, SPLIT, SURRENDER = "hit", "stand", "double", "split", "surrender"
INSURE, DECLINE = "insure", "decline"


@dataclass(frozen=True)
class Rules(RulesBase):
    decks: int = 6
    spots: int = 7
    dealer_hits_soft_17: bool = False             # rules text: the dealer stands on a soft 17
    blackjack_pays: Payout = Payout(3, 2)
    double: Literal["any", "9-11", "10-11"] = "any"  # on which first two cards a double is allowed
    double_after_split: bool = True
    max_hands: int = 4                            # split and resplit up to this many hands (1: no splits)
    resplit_aces: bool = False
    split_unlike_tens: bool = True                # e.g. a jack and a queen may be split
    late_surrender: bool = False
    insurance: bool = True
    penetration: int = 75                         # % of the shoe dealt before the cut card comes out
    limits: Mapping[str, Limit] = field(default_factory=lambda: MappingProxyType({"main": Limit(10, 1_000)}))

    def validate(self) -> None:
        check_range("decks", self.decks, 1, 8, " decks")
        check_range("spots", self.spots, 1, 7, " spots")
        if self.blackjack_pays.win < self.blackjack_pays.per:
            raise RulesError(f"rules.blackjack_pays: a blackjack pays at least 1:1, got {self.blackjack_pays}")
        check_range("max_hands", self.max_hands, 1, 8, " hands (1: no splits)")
        check_range("penetration", self.penetration, 25, 90, " percent of the shoe before the cut card")
        check_limits(self.limits, BOXES)

    @property
    def cards_behind_cut(self) -> int:
        return self.decks * 52 - self.decks * 52 * self.penetration // 100


# ---------------------------------------------------------------------------------------------------
# State


@dataclass(frozen=True, slots=True)
class Hand:
    box: str                    # "main" for the first hand, "split:1", "split:2", ... for hands split off it
    cards: tuple[Card, ...]
    stake: int
    split: bool = False         # made by a split: no blackjack, no surrender
    split_aces: bool = False    # one card only
    doubled: bool = False
    drawing: bool = False       # a hit or a double is waiting for its card
    done: str = ""              # "" while in play; "stood", "bust", "blackjack", "doubled", "surrendered"

    @property
    def total(self) -> BlackjackTotal:
        return blackjack_total(self.cards)


@dataclass(frozen=True, slots=True)
class Seat:
    spot: int
    bet: int                    # the main bet as placed (insurance is up to half of it)
    hands: tuple[Hand, ...]
    insurance: int = 0
    answered: bool = False      # the spot has answered the insurance offer


class Phase(StrEnum):
    """Where the round stands (the values are those of the journal, the snapshots and the views)."""

    SHUFFLING = "shuffling"
    IDLE = "idle"
    BETTING = "betting"
    DEAL = "deal"
    INSURANCE = "insurance"
    PLAY = "play"
    DEALER = "dealer"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: Phase = Phase.SHUFFLING
    bets: Bets = Bets()
    seats: tuple[Seat, ...] = ()
    dealer: tuple[Card, ...] = ()
    hole_shown: bool = False
    shoe: ShoeState = ShoeState()


def new_table(rules: Rules) -> State:
    return State(rules)


def _ten(card: Card) -> bool:
    return card.rank >= TEN and card.rank != ACE


def _dealer_blackjack(state: State) -> bool:
    return len(state.dealer) == 2 and blackjack_total(state.dealer).blackjack


def _dealer_draws(state: State) -> bool:
    t = blackjack_total(state.dealer)
    return t.total < 17 or (state.rules.dealer_hits_soft_17 and t.total == 17 and t.soft)


def _live(hand: Hand) -> bool:
    """A hand the dealer must beat: stood or doubled, not bust, surrendered or paid as a blackjack."""
    return hand.done in ("stood", "doubled")


def hand_label(seat: Seat, index: int) -> str:
    """Where a card for this hand goes: 'spot:3', or 'spot:3/hand:1' once the spot has split (hands from 0)."""
    return spot_actor(seat.spot) if len(seat.hands) == 1 else f"{spot_actor(seat.spot)}/hand:{index}"


def hand_words(label: str) -> str:
    """'spot:3/hand:1' -> 'spot 3, hand 2' (hands counted from 1 for the dealer)."""
    spot, _, hand = label.partition("/hand:")
    return spot.replace(":", " ") + (f", hand {int(hand) + 1}" if hand else "")


def current_hand(state: Any) -> tuple[int, int] | None:
    """(seat index, hand index) of the hand in play, or None when every hand is done (any state whose `seats` are
    Seats: pontoon's too)."""
    for si, seat in enumerate(state.seats):
        for hi, hand in enumerate(seat.hands):
            if not hand.done:
                return si, hi
    return None


class PlayRules(Protocol):
    """The rules that decide a player's actions on a hand (blackjack's Rules and pontoon's have them)."""

    @property
    def double(self) -> str: ...
    @property
    def double_after_split(self) -> bool: ...
    @property
    def max_hands(self) -> int: ...
    @property
    def resplit_aces(self) -> bool: ...
    @property
    def split_unlike_tens(self) -> bool: ...
    @property
    def late_surrender(self) -> bool: ...


def is_pair(rules: PlayRules, hand: Hand) -> bool:
    a, b = hand.cards
    return a.rank == b.rank or (rules.split_unlike_tens and _ten(a) and _ten(b))


def legal_actions(rules: PlayRules, seat: Seat, hand: Hand) -> tuple[str, ...]:
    """What the player may do with `hand` (two or more cards, in play)."""
    two = len(hand.cards) == 2
    can_split = (two and is_pair(rules, hand) and len(seat.hands) < rules.max_hands
                 and (not hand.split_aces or rules.resplit_aces))
    if hand.split_aces:  # one card to a split ace; only a resplit of a second ace remains
        return (SPLIT, STAND) if can_split else (STAND,)
    actions = [HIT, STAND]
    total = hand.total.total
    if two and (not hand.split or rules.double_after_split) and (
            rules.double == "any" or (rules.double == "9-11" and 9 <= total <= 11)
            or (rules.double == "10-11" and 10 <= total <= 11)):
        actions.append(DOUBLE)
    if can_split:
        actions.append(SPLIT)
    if two and rules.late_surrender and not hand.split and len(seat.hands) == 1:
        actions.append(SURRENDER)
    return tuple(actions)


# ---------------------------------------------------------------------------------------------------
# What comes next


def _deal_position(state: State) -> tuple[str, bool] | None:
    """During the first deal: where the next card goes and whether face up (all but the hole card); None once it
    is complete."""
    position = first_deal_position(state)
    if position is None:
        return None
    to, deal_round = position
    return to, not (to == "dealer" and deal_round == 1)


def first_deal_position(state: Any) -> tuple[str, int] | None:
    """During the first deal of any game with `seats` and a `dealer` hand: where the next card goes ("spot:3" or
    "dealer": the seats in order, the dealer last) and in which round of the deal (0 or 1); None once complete."""
    n = len(state.seats)
    dealt = sum(len(s.hands[0].cards) for s in state.seats) + len(state.dealer)
    if dealt >= 2 * n + 2:
        return None
    k = dealt % (n + 1)
    return ("dealer" if k == n else spot_actor(state.seats[k].spot)), dealt // (n + 1)


def add_dealt_card(state: _S, to: str, card: Card) -> _S:
    """The state with a card of the first deal added to the dealer's hand or to a seat's first hand."""
    if to == "dealer":
        return replace(state, dealer=state.dealer + (card,))  # type: ignore[attr-defined,type-var]
    seats = tuple(replace(s, hands=(replace(s.hands[0], cards=s.hands[0].cards + (card,)),))
                  if spot_actor(s.spot) == to else s for s in state.seats)  # type: ignore[attr-defined]
    return replace(state, seats=seats)  # type: ignore[type-var]


def hand_wanting_card(state: Any) -> str | None:
    """Where the hand in play wants its card ("spot:3", "spot:3/hand:1"), if it is waiting for one."""
    cur = current_hand(state)
    if cur is None:
        return None
    seat = state.seats[cur[0]]
    hand = seat.hands[cur[1]]
    return hand_label(seat, cur[1]) if len(hand.cards) == 1 or hand.drawing else None


def _card_wanted(state: State) -> tuple[str, bool] | None:
    if state.phase is Phase.DEAL:
        return _deal_position(state)
    if state.phase is Phase.PLAY:
        to = hand_wanting_card(state)
        if to is not None:
            return to, True
    if state.phase is Phase.DEALER:
        return "dealer", True
    return None


def expected_next(state: State) -> Expected:
    r = state.rules
    phase = state.phase
    if phase is Phase.SHUFFLING:
        return Expected(Waiting.SHUFFLING, f"load a new shoe of {r.decks} deck(s)", actions=("new_shoe",))
    if phase is Phase.IDLE:
        return Expected(Waiting.IDLE, "open bets", actions=("open_bets", "new_shoe"))
    if phase is Phase.BETTING:
        return Expected(Waiting.BETTING, "bets open", actions=("place_bet", "remove_bet", "close_bets"))
    if phase is Phase.SETTLING:
        return Expected(Waiting.SETTLING, "settle the round", actions=("settle",))
    wanted = _card_wanted(state)
    if wanted is not None:
        to, up = wanted
        if state.shoe.remaining == 0:
            return Expected(Waiting.SHUFFLING, "the shoe is empty: reshuffle the discards (new shoe), then deal on",
                            actions=("new_shoe",))
        return Expected(Waiting.DEALING, f"card to {hand_words(to)}, face {'up' if up else 'down'}", card_to=to,
                        face_up=up)
    up_card = state.dealer[0]
    if phase is Phase.INSURANCE:
        seat = next(s for s in state.seats if not s.answered)
        return Expected(
            Waiting.DECIDING, f"spot {seat.spot}: insurance against the dealer's ace, up to {seat.bet // 2}",
            actor=spot_actor(seat.spot), actions=(INSURE, DECLINE), amount_range=(1, seat.bet // 2))
    si, hi = current_hand(state)  # type: ignore[misc]
    seat = state.seats[si]
    hand = seat.hands[hi]
    actions = legal_actions(r, seat, hand)
    return Expected(Waiting.DECIDING, f"{hand_words(hand_label(seat, hi))}: {hand.total} against a dealer "
                    f"{up_card.rank_char}: {', '.join(actions)}", actor=spot_actor(seat.spot), hand=hi, actions=actions)


# ---------------------------------------------------------------------------------------------------
# Events


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def table_cards(state: Any) -> list[Card]:
    """The cards on the table: every hand's and the dealer's (they stay out of a shoe reshuffled mid-round)."""
    return [c for seat in state.seats for h in seat.hands for c in h.cards] + list(state.dealer)


def _new_shoe(state: State, event: NewShoe) -> tuple[State, Effects]:
    r = state.rules
    if state.phase in (Phase.SHUFFLING, Phase.IDLE):
        return replace(state, phase=Phase.IDLE, shoe=load_shoe(event, r.decks, r.cards_behind_cut)), ()
    if state.phase in (Phase.DEAL, Phase.PLAY, Phase.DEALER) and state.shoe.remaining == 0:
        shoe = load_shoe(event, r.decks, r.cards_behind_cut, on_table=table_cards(state))
        return replace(state, shoe=shoe), ()
    raise IllegalEvent("a new shoe goes in between rounds (or when the shoe runs out mid-round)")


def _close(state: State, bets: Bets) -> State:
    seats = tuple(Seat(spot, bet, (Hand("main", (), bet),)) for spot, _, bet in bets)
    return replace(state, phase=Phase.DEAL, seats=seats)


def _settle(state: State) -> tuple[State, Effects]:
    return _after_round(state), (RoundSettled(state.round, settle_round(state)),)


def _after_round(state: State) -> State:
    return State(state.rules, state.round, Phase.SHUFFLING if state.shoe.cut_reached else Phase.IDLE, shoe=state.shoe)


def layout(state: Any) -> list[tuple[int, str, int]]:
    """Every stake on the table now: (spot, box, credits) (any game with `bets` and `seats` of Seats)."""
    if not state.seats:
        return list(state.bets)
    out = []
    for seat in state.seats:
        out += [(seat.spot, h.box, h.stake) for h in seat.hands]
        if seat.insurance:
            out.append((seat.spot, "insurance", seat.insurance))
    return out


def _card(state: State, event: CardDealt) -> tuple[State, Effects]:
    to, shoe, effects = deal_from_shoe(state.shoe, expected_next(state), event)
    state = replace(state, shoe=shoe)
    if state.phase is Phase.DEAL:
        state = add_dealt_card(state, to, event.card)
        if _deal_position(state) is None:
            state, more = _after_deal(state)
            effects += more
        return state, effects
    if state.phase is Phase.DEALER:
        state = replace(state, dealer=state.dealer + (event.card,))
        if not _dealer_draws(state):
            state = replace(state, phase=Phase.SETTLING)
        return state, effects
    si, hi = current_hand(state)  # type: ignore[misc]
    state = replace_hand(state, si, hi, _hand_after_card(state.rules, state.seats[si], state.seats[si].hands[hi],
                                                          event.card))
    state, more = _advance_play(state)
    return state, effects + more


def _hand_after_card(rules: Rules, seat: Seat, hand: Hand, card: Card) -> Hand:
    hand = replace(hand, cards=hand.cards + (card,), drawing=False)
    total = hand.total
    if hand.split_aces:
        return hand if SPLIT in legal_actions(rules, seat, hand) else replace(hand, done="stood")
    if total.bust:
        return replace(hand, done="bust")
    if hand.doubled:
        return replace(hand, done="doubled")
    if total.total == 21:
        return replace(hand, done="stood")
    return hand


def replace_hand(state: _S, si: int, hi: int, hand: Hand, extra: Hand | None = None) -> _S:
    """The state with hand `hi` of seat `si` replaced (and `extra`, a split-off hand, inserted after it)."""
    seat = state.seats[si]  # type: ignore[attr-defined]
    hands = seat.hands[:hi] + ((hand, extra) if extra is not None else (hand,)) + seat.hands[hi + 1:]
    seats = state.seats[:si] + (replace(seat, hands=hands),) + state.seats[si + 1:]  # type: ignore[attr-defined]
    return replace(state, seats=seats)  # type: ignore[type-var]


def _after_deal(state: State) -> tuple[State, Effects]:
    if state.rules.insurance and state.dealer[0].rank == ACE and any(s.bet >= 2 for s in state.seats):
        seats = tuple(s if s.bet >= 2 else replace(s, answered=True) for s in state.seats)
        return replace(state, phase=Phase.INSURANCE, seats=seats), ()
    return _peek(state)


def _peek(state: State) -> tuple[State, Effects]:
    up = state.dealer[0]
    if (up.rank == ACE or _ten(up)) and _dealer_blackjack(state):
        return replace(state, phase=Phase.SETTLING, hole_shown=True), (CardsRevealed(Phase.DEALER, state.dealer),)
    seats = tuple(replace(s, hands=(replace(s.hands[0], done="blackjack"),)) if s.hands[0].total.blackjack else s
                  for s in state.seats)
    return _advance_play(replace(state, seats=seats))


def _advance_play(state: State) -> tuple[State, Effects]:
    if current_hand(state) is not None:
        return replace(state, phase=Phase.PLAY), ()
    reveal: Effects = (CardsRevealed("dealer", state.dealer),) if not state.hole_shown else ()
    state = replace(state, hole_shown=True)
    live = any(_live(h) for s in state.seats for h in s.hands)
    return replace(state, phase=Phase.DEALER if live and _dealer_draws(state) else Phase.SETTLING), reveal


def _decision(state: State, event: Decision) -> tuple[State, Effects]:
    exp = expected_next(state)
    check_decision(exp, event, (INSURE,))   # a double or a split matches the bet: no amount
    if state.phase is Phase.INSURANCE:
        return _insurance(state, event)
    return play_action(state, event.action, _advance_play)


def play_action(state: _S, action: str, advance: Callable[[_S], tuple[_S, Effects]]) -> tuple[_S, Effects]:
    """Hit, stand, surrender, double or split the hand in play (any game whose `seats` are Seats: pontoon's too);
    `advance` moves the play on once a hand is finished."""
    si, hi = current_hand(state)  # type: ignore[misc]
    seat = state.seats[si]  # type: ignore[attr-defined]
    hand = seat.hands[hi]
    if action == HIT:
        return replace_hand(state, si, hi, replace(hand, drawing=True)), ()
    if action == STAND:
        return advance(replace_hand(state, si, hi, replace(hand, done="stood")))
    if action == SURRENDER:
        return advance(replace_hand(state, si, hi, replace(hand, done="surrendered")))
    if action == DOUBLE:
        doubled, changed = double_down(seat, hand)
        return replace_hand(state, si, hi, doubled), (changed,)
    left, right, changed = split_pair(seat, hand)
    return replace_hand(state, si, hi, left, right), (changed,)


def double_down(seat: Seat, hand: Hand) -> tuple[Hand, StakeChanged]:
    """The hand with its bet doubled, waiting for its one card."""
    doubled = replace(hand, stake=2 * hand.stake, doubled=True, drawing=True)
    return doubled, StakeChanged(seat.spot, hand.box, doubled.stake, hand.stake)


def split_pair(seat: Seat, hand: Hand) -> tuple[Hand, Hand, StakeChanged]:
    """A pair split: the hand keeps its first card; the second starts a new hand to its right with an equal bet."""
    first, second = hand.cards
    aces = first.rank == ACE
    box = f"split:{len(seat.hands)}"
    left = replace(hand, cards=(first,), split=True, split_aces=aces)
    right = Hand(box, (second,), hand.stake, split=True, split_aces=aces)
    return left, right, StakeChanged(seat.spot, box, hand.stake, hand.stake)


def _insurance(state: State, event: Decision) -> tuple[State, Effects]:
    """An insurance answer, checked against the offer (up to half the bet) by `check_decision`."""
    si = next(i for i, s in enumerate(state.seats) if not s.answered)
    seat = state.seats[si]
    effects: Effects = ()
    if event.action == INSURE:
        seat = replace(seat, insurance=event.amount, answered=True)
        effects = (StakeChanged(seat.spot, "insurance", event.amount, event.amount),)
    else:
        seat = replace(seat, answered=True)
    state = replace(state, seats=state.seats[:si] + (seat,) + state.seats[si + 1:])
    if all(s.answered for s in state.seats):
        state, more = _peek(state)
        return state, effects + more
    return state, effects


# ---------------------------------------------------------------------------------------------------
# Settlement


def _hand_result(rules: Rules, spot: int, hand: Hand, dealer: BlackjackTotal, dealer_bj: bool) -> BoxResult:
    stake, box = hand.stake, hand.box
    mine = hand.total
    if dealer_bj:
        if mine.blackjack:  # the peek comes before any split
            return BoxResult(spot, box, stake, "push", 0, 0, stake, "blackjack against dealer blackjack: push")
        return BoxResult(spot, box, stake, "lose", 0, 0, 0, "dealer blackjack")
    if hand.done == "surrendered":
        back = stake // 2
        return BoxResult(spot, box, stake, "surrender", 0, 0, back, "late surrender: half the bet back")
    if hand.done == "blackjack":
        paid = rules.blackjack_pays.on(stake)
        return BoxResult(spot, box, stake, "blackjack", paid, 0, stake + paid, f"blackjack {rules.blackjack_pays}")
    if mine.bust:
        return BoxResult(spot, box, stake, "lose", 0, 0, 0, f"bust with {mine.total}")
    what = "double " if hand.doubled else ""
    if dealer.bust or mine.total > dealer.total:
        against = "dealer busts" if dealer.bust else f"{mine.total} beats {dealer.total}"
        line = (f"21 after a split pays 1:1 (not a blackjack), {against}" if hand.split and mine.total == 21
                and len(hand.cards) == 2 else f"{what}win 1:1, {against}")
        return BoxResult(spot, box, stake, "win", stake, 0, 2 * stake, line)
    if mine.total == dealer.total:
        return BoxResult(spot, box, stake, "push", 0, 0, stake, f"{what}push on {mine.total}")
    return BoxResult(spot, box, stake, "lose", 0, 0, 0, f"{what}lose, {dealer.total} beats {mine.total}")


def settle_round(state: State) -> Settlement:
    """Every box of every spot, from the finished round (the dealer's hand is complete)."""
    dealer = blackjack_total(state.dealer)
    dealer_bj = _dealer_blackjack(state)
    results = []
    for seat in state.seats:
        for hand in seat.hands:
            results.append(_hand_result(state.rules, seat.spot, hand, dealer, dealer_bj))
        if seat.insurance:
            stake = seat.insurance
            if dealer_bj:
                paid = INSURANCE_PAYS.on(stake)
                results.append(BoxResult(seat.spot, "insurance", stake, "win", paid, 0, stake + paid,
                                         f"insurance {INSURANCE_PAYS}"))
            else:
                results.append(BoxResult(seat.spot, "insurance", stake, "lose", 0, 0, 0,
                                         "insurance loses: no dealer blackjack"))
    return Settlement(tuple(results))


# ---------------------------------------------------------------------------------------------------
# View


def snapshot(state: State) -> dict[str, Any]:
    """The hole card is a face-down Placed until the rules reveal it; the dealer's total counting it, and
    whether the dealer has blackjack, appear only under "audit"."""
    dealer_cards = [Placed(c, i != 1 or state.hole_shown).json() for i, c in enumerate(state.dealer)]
    shown = [c for i, c in enumerate(state.dealer) if i != 1 or state.hole_shown]
    seats = [{"spot": s.spot, "insurance": s.insurance,
              "hands": [{"box": h.box, "stake": h.stake, "cards": [Placed(c, True).json() for c in h.cards],
                         "total": str(h.total) if h.cards else None, "status": h.done or "in play",
                         "doubled": h.doubled} for h in s.hands]} for s in state.seats]
    return {
        "game": "blackjack", "round": state.round, "phase": expected_next(state).phase.value,
        "stage": state.phase.value, "bets": [{"spot": s, "box": b, "amount": a} for s, b, a in layout(state)],
        "spots": seats,
        "dealer": {"cards": dealer_cards, "showing": str(blackjack_total(shown)) if shown else None},
        "shoe": state.shoe.json(),
        "audit": {"dealer_total": str(blackjack_total(state.dealer)) if state.dealer else None,
                  "dealer_blackjack": _dealer_blackjack(state)},
    }


_ROUND: Round[State] = Round(
    "blackjack", expected_next, _settle, Phase.SETTLING, new_shoe=_new_shoe,
    void=void_step(set(Phase) - {Phase.SHUFFLING, Phase.IDLE}, _after_round, "no round in progress to void", layout),
    open_bets=opens(expected_next, Phase.IDLE, Phase.BETTING), bets=shoe_bets(Phase.BETTING, _close), card=_card,
    decision=_decision)
GAME = GameSpec("blackjack", "Blackjack", Rules, new_table, apply, expected_next, snapshot, BOXES)


def legal_bets(rules: Rules, rng: Any) -> list[Event]:
    """Bets a table might see in one round (for the property-test harness)."""
    limit = rules.limits["main"]
    spots = [s for s in range(1, rules.spots + 1) if rng.randbelow(2)] or [1]
    return [PlaceBet(s, "main", limit.min + rng.randbelow(_headroom(limit))) for s in spots]


def _headroom(limit: Limit) -> int:
    # The harness may ask again when noise left a bet under its minimum: stay well under the maximum.
    return max(1, min(limit.max - limit.min, 9 * limit.min) // 4)
