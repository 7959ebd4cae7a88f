"""Pusoy: thirteen cards set into back, middle and front hands against the dealer's, two of three to win, three of three for double (seed 000_*).

Round (000_*): bets -> thirteen cards face down to every participant, one at a time from the dealer's left
(spot 1 first, the dealer last) -> each player sets the hand (or surrenders, or claims royalties, when the
rules offer them) -> the dealer sets his -> every hand is turned up -> settle.

- Participants: exactly four in casino play (three spots and the dealer); a home game may play two or
  three (`participants`). Every spot must bet before the deal. Thirteen cards each; with fewer than four
  participants the rest of the pack is not dealt.
- Setting: the decision `set:<back>/<middle>/<front>` (five, five and three cards, e.g.
  "set:AS AH AD 2C 2D/KS QS JS TS 9S/7H 5C 3D"), or `house_way`: the dealer sets it the simple way (the
  best five behind, the best five of the rest in the middle, the last three in front: always in order).
  Five-card hands rank as in poker, A-2-3-4-5 the lowest straight (no joker); the front hand counts three
  of a kind, pairs and high cards only. The back must outrank the middle and the middle the front; a hand
  out of order is fouled ("totyo") and loses double.
- Settlement against the dealer: each of the three hands against the dealer's like hand, an exact tie to
  the dealer. Two of three won: the player wins the bet (1:1); three of three: double (2:1, "pusoy");
  one of three: the bet is lost; none: double the bet is lost. Losing double, the player puts a second
  unit on the layout (box "pusoy") as the dealer collects it. There is no standoff and no commission.
  A fouled dealer (his hands out of order) pays every player who did not foul double; when both foul,
  the player's foul counts first. A foul loses double whatever the dealer does.
- Surrender (`surrender`): before setting, a player may concede and lose the single bet, cards unseen;
  after every player, the dealer may surrender and pay single to each player still in.
- Royalties (`royalties`): a player dealt a straight flush, four of a kind or six pairs may show it
  instead of setting and wins `royalty_pays` (single, 1:1) at once.
"""

from __future__ import annotations

from enum import StrEnum

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from itertools import combinations
from types import MappingProxyType
from typing import Any, Sequence

from controller.cards import Card, parse_cards
from controller.games._house_poker import Deal, Phases, deal_plan, deal_then, own_round, reveal
from controller.games.base import (
    BoxResult, CloseBets, Decision, Effects, Event, Expected, GameSpec, IllegalEvent, Payout, PlaceBet,
    Placed, RulesBase, RulesError, Settlement, StakeChanged, Waiting, spot_actor,
)
from controller.games.bets import Bets, Limit, check_limits
from controller.hands import poker

__all__ = ["GAME", "Rules", "State", "Phase", "Deal", "BOXES", "new_table", "apply", "expected_next", "snapshot",
           "legal_bets", "five_value", "front_value", "is_foul", "royalty", "simple_setting", "parse_setting",
           "autoplay_decision"]

NAME = "pusoy"
BOXES = ("main",)
HAND = 13
SIZES = (5, 5, 3)
NAMES = ("back", "middle", "front")


@dataclass(frozen=True)
class Rules(RulesBase):
    """Casino pusoy (000_*): four participants; the variants are off unless the table announces them."""

    participants: int = 4
    deal: Deal = Deal.ROUNDS
    surrender: bool = False
    royalties: bool = False
    royalty_pays: Payout = Payout(1)
    limits: Mapping[str, Limit] = field(default_factory=lambda: MappingProxyType({"main": Limit(10, 5_000)}))

    @property
    def spots(self) -> int:
        return self.participants - 1

    def validate(self) -> None:
        if not 2 <= self.participants <= 4:
            raise RulesError(f"rules.participants: 2 to 4 with the dealer (exactly 4 in casino play), "
                             f"got {self.participants}")
        check_limits(self.limits, BOXES)


# ---------------------------------------------------------------------------------------------------
# Hands


def five_value(cards: Sequence[Card]) -> int:
    """A back or middle hand: five cards ranked as in poker (no joker; A-2-3-4-5 is the lowest straight)."""
    return poker.best_value(cards)


def front_value(cards: Sequence[Card]) -> int:
    """A front hand of three cards: three of a kind, a pair or high cards (000_*: straights and flushes do not
    count), on the five-card scale with empty fields, so it compares with a middle hand directly."""
    if len(cards) != 3 or len(set(cards)) != 3:
        raise ValueError(f"a pusoy front hand is three different cards, got {len(cards)}")
    ranks = sorted((c.rank for c in cards), reverse=True)
    if ranks[0] == ranks[2]:
        return poker.pack(poker.THREE_OF_A_KIND, [ranks[0]])
    if ranks[0] == ranks[1] or ranks[1] == ranks[2]:
        pair = ranks[1]
        return poker.pack(poker.PAIR, [pair, ranks[2] if ranks[0] == pair else ranks[0]])
    return poker.pack(poker.HIGH_CARD, ranks)


def _values(hands: Sequence[Sequence[Card]]) -> tuple[int, int, int]:
    return five_value(hands[0]), five_value(hands[1]), front_value(hands[2])


def is_foul(hands: Sequence[Sequence[Card]]) -> bool:
    """Out of order: the back does not outrank the middle, or the middle does not outrank the front."""
    back, middle, front = _values(hands)
    return not back > middle > front


def royalty(cards: Sequence[Card]) -> str | None:
    """The royalty a thirteen-card hand holds (000_*): 'straight flush', 'four of a kind', 'six pairs', or None."""
    for five in combinations(cards, 5):
        if poker.category(poker.best_value(five)) == poker.STRAIGHT_FLUSH:
            return "straight flush"
    counts: dict[int, int] = {}
    for c in cards:
        counts[c.rank] = counts.get(c.rank, 0) + 1
    if max(counts.values()) == 4:
        return "four of a kind"
    if sum(n // 2 for n in counts.values()) >= 6:
        return "six pairs"
    return None


def simple_setting(cards: Sequence[Card]) -> tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]:
    """The dealer's simple way: the best five behind, the best five of the other eight in the middle, the
    last three in front. Never out of order: each hand is the best of a set holding the next one's cards."""
    cards = sorted(cards, reverse=True)
    back = max(combinations(cards, 5), key=lambda five: poker.eval5(*(c.index for c in five)))
    rest = [c for c in cards if c not in back]
    middle = max(combinations(rest, 5), key=lambda five: poker.eval5(*(c.index for c in five)))
    front = tuple(c for c in rest if c not in middle)
    return tuple(back), tuple(middle), front


def parse_setting(text: str, hand: Sequence[Card]) -> tuple[tuple[Card, ...], ...]:
    """'<back>/<middle>/<front>' into three hands of the player's own thirteen cards; ValueError otherwise."""
    parts = text.split("/")
    if len(parts) != 3:
        raise ValueError("a setting is back/middle/front, e.g. set:AS AH AD 2C 2D/KS QS JS TS 9S/7H 5C 3D")
    hands = tuple(parse_cards(p) for p in parts)
    if tuple(len(h) for h in hands) != SIZES:
        raise ValueError(f"a setting is five, five and three cards, not {', '.join(str(len(h)) for h in hands)}")
    flat = [c for h in hands for c in h]
    if len(set(flat)) != HAND or set(flat) != set(hand):
        raise ValueError("a setting uses each of the hand's own thirteen cards once")
    return hands


# ---------------------------------------------------------------------------------------------------
# State


class Phase(StrEnum):
    """Where the round stands (the values are those of the journal, the snapshots and the views)."""

    IDLE = "idle"
    BETTING = "betting"
    DEALING = "dealing"
    SETTING = "setting"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: Phase = Phase.IDLE
    bets: Bets = Bets()
    cards: tuple[tuple[str, Placed], ...] = ()
    # (where, action, hands): action is "set", "house_way", "surrender" or "royalty"; hands the three hands
    decisions: tuple[tuple[str, str, tuple[tuple[Card, ...], ...]], ...] = ()

    def hand(self, to: str) -> tuple[Card, ...]:
        return tuple(p.card for where, p in self.cards if where == to)

    def placed(self, to: str) -> tuple[Placed, ...]:
        return tuple(p for where, p in self.cards if where == to)

    def decision(self, to: str) -> tuple[str, tuple[tuple[Card, ...], ...]] | None:
        for where, action, hands in self.decisions:
            if where == to:
                return action, hands
        return None


def new_table(rules: Rules) -> State:
    return State(rules)


def _seats(state: State) -> list[str]:
    return [spot_actor(s) for s in state.bets.spots()] + ["dealer"]


def _plan(state: State) -> tuple[tuple[str, bool], ...]:
    return deal_plan([(to, (False,) * HAND) for to in _seats(state)], state.rules.deal)


def _waiting(state: State) -> str:
    return next(to for to in _seats(state) if state.decision(to) is None)


def _actions(state: State, to: str) -> tuple[str, ...]:
    r = state.rules
    actions = ("set", "house_way") + (("surrender",) if r.surrender else ())
    return actions + (("royalty",) if r.royalties and to != "dealer" else ())


def expected_next(state: State) -> Expected:
    if state.phase is Phase.IDLE:
        return Expected(Waiting.IDLE, "open bets", actions=("open_bets",))
    if state.phase is Phase.BETTING:
        return Expected(Waiting.BETTING, f"bets are open: every one of the {state.rules.spots} spots plays",
                        actions=("place_bet", "remove_bet", "close_bets"))
    if state.phase is Phase.DEALING:
        to, up = _plan(state)[len(state.cards)]
        n = len(state.placed(to)) + 1
        return Expected(Waiting.DEALING, f"card {n} of {HAND} to {to.replace(':', ' ')}, face down", card_to=to,
                        face_up=up)
    if state.phase is Phase.SETTING:
        to = _waiting(state)
        actions = _actions(state, to)
        extra = "".join(f" or {a}" for a in actions[2:])
        return Expected(
            Waiting.DECIDING, f"{to.replace(':', ' ')}: set back/middle/front (set:<back>/<middle>/<front>) "
            f"or house_way{extra}", actor=to, actions=actions)
    return Expected(Waiting.SETTLING, "settle the round", actions=("settle",))


# ---------------------------------------------------------------------------------------------------
# Events


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _close_check(state: State, event: Event) -> None:
    r = state.rules
    if isinstance(event, CloseBets) and state.phase is Phase.BETTING:
        missing = [s for s in range(1, r.spots + 1) if s not in state.bets.spots()]
        if missing:
            raise IllegalEvent(f"pusoy needs all {r.participants} participants: no bet on spot "
                               f"{', '.join(map(str, missing))}")


def _decide(state: State, event: Decision) -> tuple[State, Effects]:
    if state.phase is not Phase.SETTING:
        raise IllegalEvent(f"no decision expected now: {expected_next(state).text}")
    to = event.actor
    if to not in _seats(state):
        raise IllegalEvent(f"{to!r} has no hand at this table")
    if state.decision(to) is not None:
        raise IllegalEvent(f"{to.replace(':', ' ')} has already set the hand")
    if to == "dealer" and _waiting(state) != "dealer":
        raise IllegalEvent("the dealer sets last, once every player has set, surrendered or shown royalties")
    if event.amount != 0 or event.hand != 0:
        raise IllegalEvent("setting a hand takes no amount")
    hand = state.hand(to)
    action = event.action
    hands: tuple[tuple[Card, ...], ...] = ()
    effects: Effects = ()
    if action == "house_way":
        hands = simple_setting(hand)
    elif action.startswith("set:"):
        try:
            hands = parse_setting(action[4:], hand)
        except ValueError as exc:
            raise IllegalEvent(f"{to.replace(':', ' ')}: {exc}") from None
        action = "set"
    elif action == "surrender" and state.rules.surrender:
        pass
    elif action == "royalty" and state.rules.royalties and to != "dealer":
        if royalty(hand) is None:
            raise IllegalEvent(f"{to.replace(':', ' ')} holds no royalty (straight flush, four of a kind, six pairs)")
        state, effects = reveal(state, [to])
    else:
        raise IllegalEvent(f"{to.replace(':', ' ')} may {' or '.join(_actions(state, to))}, not {event.action!r}")
    state = replace(state, decisions=state.decisions + ((to, action, hands),))
    if to != "dealer":
        return state, effects
    # The dealer has decided: every hand still in play is turned up; surrendered hands stay unseen.
    shown = [w for w in _seats(state) if (state.decision(w) or ("",))[0] in ("set", "house_way")]
    state, turned = reveal(state, shown)
    return replace(state, phase=Phase.SETTLING), effects + turned


# ---------------------------------------------------------------------------------------------------
# Settlement


def _hand_words(hands: Sequence[Sequence[Card]]) -> str:
    back, middle, front = _values(hands)
    return f"{poker.describe(back)} / {poker.describe(middle)} / {poker.describe(front)}"


def settle(state: State) -> tuple[tuple[StakeChanged, ...], Settlement]:
    """The second units put up by double losers, and every row (see the module docstring)."""
    r = state.rules
    dealer_action, dealer_hands = state.decision("dealer")  # type: ignore[misc]
    dealer_in = dealer_action in ("set", "house_way")
    dealer_foul = dealer_in and is_foul(dealer_hands)
    doubles: list[StakeChanged] = []
    results: list[BoxResult] = []
    for spot, box, stake in state.bets:
        action, hands = state.decision(spot_actor(spot))  # type: ignore[misc]

        def row(outcome: str, paid: int, returned: int, line: str) -> None:
            results.append(BoxResult(spot, box, stake, outcome, paid, 0, returned, line))

        def lose_double(line: str) -> None:
            row("lose", 0, 0, line)
            doubles.append(StakeChanged(spot, "pusoy", stake, stake))
            results.append(BoxResult(spot, "pusoy", stake, "lose", 0, 0, 0, f"{line}: double"))

        if action == "surrender":
            row("surrender", 0, 0, "surrender: the single bet is lost")
        elif action == "royalty":
            paid = r.royalty_pays.on(stake)
            row("win", paid, stake + paid, f"royalties, {royalty(state.hand(spot_actor(spot)))}: {r.royalty_pays}")
        elif is_foul(hands):
            lose_double(f"foul ({_hand_words(hands)}): the hands are out of order")
        elif dealer_action == "surrender":
            row("win", stake, 2 * stake, "the dealer surrenders: single 1:1")
        elif dealer_foul:
            row("win", 2 * stake, 3 * stake, "the dealer's hands are out of order: double 2:1")
        else:
            mine, theirs = _values(hands), _values(dealer_hands)
            won = [n for n, m, t in zip(NAMES, mine, theirs) if m > t]
            vs = f"{_hand_words(hands)} against {_hand_words(dealer_hands)}"
            if len(won) == 3:
                row("win", 2 * stake, 3 * stake, f"all three hands won, pusoy ({vs}): double 2:1")
            elif len(won) == 2:
                row("win", stake, 2 * stake, f"{' and '.join(won)} won ({vs}): 1:1")
            elif len(won) == 1:
                row("lose", 0, 0, f"only the {won[0]} won ({vs}): the bet is lost")
            else:
                lose_double(f"all three hands lost, pusoy ({vs})")
    return tuple(doubles), Settlement(tuple(results))


# ---------------------------------------------------------------------------------------------------
# View


def snapshot(state: State) -> dict[str, Any]:
    """Hands face down until turned up; a setting's hand names only once its cards are up (else "audit")."""
    seats = []
    audit: dict[str, Any] = {}
    for to in _seats(state):
        placed = state.placed(to)
        if not placed:
            continue
        entry: dict[str, Any] = {"to": to, "cards": [p.json() for p in placed]}
        decided = state.decision(to)
        if decided is not None:
            action, hands = decided
            entry["decision"] = "set" if action == "house_way" else action
            up = {p.card: p.up for p in placed}
            for name, cards in zip(NAMES, hands):
                entry[name] = [Placed(c, up[c]).json() for c in cards]
            words: dict[str, Any] = {}
            if hands:
                words = {f"{n}_hand": poker.describe(v) for n, v in zip(NAMES, _values(hands))}
                words["foul"] = is_foul(hands)
            elif action == "royalty":
                words = {"royalty": royalty(state.hand(to))}
            if all(p.up for p in placed):
                entry |= words
            elif words:
                audit[to] = words
        seats.append(entry)
    return {"game": NAME, "round": state.round, "phase": expected_next(state).phase.value,
            "stage": state.phase.value, "bets": state.bets.json(), "hands": seats, "audit": {"hands": audit}}


_PHASES = Phases(Phase.IDLE, Phase.BETTING, Phase.DEALING)
_ROUND = own_round("pusoy", expected_next, _PHASES, Phase.SETTLING, lambda s: State(s.rules, s.round), settle,
                   deal_then(_plan, Phase.SETTING, phases=_PHASES), _decide, _close_check)
GAME = GameSpec(NAME, "Pusoy", Rules, new_table, apply, expected_next, snapshot, BOXES)


def legal_bets(rules: Rules, rng: Any) -> list[Event]:
    """Every spot bets (pusoy deals only to a full table)."""
    limit = rules.limits["main"]
    return [PlaceBet(s, "main", limit.min * (1 + rng.randbelow(5))) for s in range(1, rules.spots + 1)]


def autoplay_decision(state: State, exp: Expected, rng: Any) -> tuple[str, int]:
    """The demo's players and dealer set the simple way."""
    return "house_way", 0
