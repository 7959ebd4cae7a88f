"""Big two (dai di, pusoy dos): a shedding game for two to four players paying each other by cards left, with an optional house rake (seed 004_*).

Round: the players post their stake per point (box "play", all alike) -> the deal, face down -> the
holder of the lowest card (the 3 of diamonds with the default suits) leads a trick with a play that
includes it -> in turn each player beats the last play with one of the same size, or passes -> when all
the others have passed in succession the last to play leads a new trick -> the first player out of cards
wins -> the others pay him -> settle.

- Cards rank 3 (low) .. K, A, 2 (high); suits break ties, ♠ > ♥ > ♣ > ♦ by default (`suit_order`,
  highest first; the seed's variants: "SHDC" bridge order, "HSDC", "DHSC", Hawaii's "DHSC"...). The
  lowest card of the deal is the 3 of the lowest suit.
- Plays (004_*): a single (by rank, then suit), a pair (by rank, then the higher suit), a triple (by rank;
  `triples = false`: only within a full house), or a five-card hand: straight < flush < full house < four
  of a kind with one card < straight flush. Straights by the seed's order (`straights`, default
  "hong_kong": 3-4-5-6-7 lowest ... 10-J-Q-K-A < 2-3-4-5-6 < A-2-3-4-5, ties by the suit of the biggest
  card; the other variants the seed lists are "malaysian", "indonesian", "ace_low", "ace_five_second",
  "vietnamese"). Flushes by their cards high to low, then the suit of the highest (`flush_by_suit`: suit
  first); `flushes = false` makes them unplayable. Full house and four of a kind by the set's rank.
- Passing: a pass does not stop a player playing later in the same trick (`pass_is_final = true`: it does).
  `may_end_with_two = false` forbids going out on a single 2 or a pair of 2s (the seed: "in most popular
  variations").
- The deal: thirteen cards each, one at a time in spot order (spot numbers follow the direction of play);
  with `deal_all` fewer than four players share the whole pack (17 or 26 each) and the odd card goes to
  the holder of the lowest card.
- Scoring (the seed's most common version): each loser counts a point a card left, doubled with
  `double_at` (10) or more, tripled with no card played; doubled again for each unused 2, four of a kind
  and straight flush in his hand (`doublings = "each"`; "once": doubled once if any; "none"); and every
  loser's points double when the winner went out on 2s, a four of a kind or a straight flush
  (`ending_double`). The seed's examples: 3, 11, 8 cards left pay 3, 22, 8 (33 to the winner); going out
  on a 2 with 3, 9 (a straight flush) and 8 (a 2) left pay 6, 36 and 32.
- Money: every player posts the stake of one point before the deal; at settlement each loser adds the rest
  of his points (a StakeChanged), pays all of it to the winner (his row: stake = points x stake, lost),
  and the winner's row is paid the losers' payments less the house rake (`rake_percent` of the winnings,
  at most `rake_cap`), as commission. So stakes = returned + rake, and each line names the points.
"""

from __future__ import annotations

from collections.abc import Mapping
import enum
from dataclasses import dataclass, field, replace
from itertools import combinations
from types import MappingProxyType
from typing import Any, Sequence

from controller.cards import Card, Suit, format_cards, parse_cards
from controller.games._big_two_combos import (
    FOUR, STRAIGHT_FLUSH, STRAIGHT_ORDERS, Combo, Straights, beats, card_key, combo, lowest_card, straight_position,
)
from controller.games._house_poker import Phases, own_round, place_card, reveal
from controller.games.base import (
    BoxResult, CardDealt, CardsRevealed, CloseBets, Decision, Effects, Event, Expected, GameSpec, IllegalEvent,
    PlaceBet, Placed, RulesBase, RulesError, Settlement, StakeChanged, Waiting, parse_spot_actor,
    spot_actor,
)
from controller.games.bets import Bets, Limit, check_limits

__all__ = ["GAME", "Rules", "State", "Phase", "Straights", "Doublings", "Combo", "BOXES", "new_table", "apply",
           "expected_next", "snapshot", "legal_bets", "combo", "beats", "points", "legal_plays", "lowest_card",
           "autoplay_decision"]

NAME = "big-two"
BOXES = ("play",)
TWO = 2


class Doublings(enum.Enum):
    EACH = "each"    # doubled for every unused 2, four of a kind and straight flush
    ONCE = "once"    # doubled once if any
    NONE = "none"


@dataclass(frozen=True)
class Rules(RulesBase):
    """Big two as the seed's main text plays it; every variant is a key."""

    spots: int = 4
    suit_order: str = "SHCD"         # highest first: spades, hearts, clubs, diamonds
    straights: Straights = Straights.HONG_KONG
    flushes: bool = True
    flush_by_suit: bool = False
    triples: bool = True
    pass_is_final: bool = False
    may_end_with_two: bool = True
    deal_all: bool = False
    double_at: int = 10
    triple_all: bool = True
    doublings: Doublings = Doublings.EACH
    ending_double: bool = True
    rake_percent: int = 0
    rake_cap: int | None = None
    limits: Mapping[str, Limit] = field(default_factory=lambda: MappingProxyType({"play": Limit(1, 1_000)}))

    def validate(self) -> None:
        if not 2 <= self.spots <= 4:
            raise RulesError(f"rules.spots: 2 to 4 players, got {self.spots}")
        if sorted(self.suit_order.upper()) != sorted("CDHS") or len(self.suit_order) != 4:
            raise RulesError(f"rules.suit_order: the four suit letters highest first, e.g. 'SHCD', "
                             f"got {self.suit_order!r}")
        if not 1 <= self.double_at <= 27:
            raise RulesError(f"rules.double_at: 1 to 27 cards, got {self.double_at}")
        if not 0 <= self.rake_percent <= 25:
            raise RulesError(f"rules.rake_percent: 0 to 25, got {self.rake_percent}")
        if self.rake_cap is not None and self.rake_cap < 0:
            raise RulesError(f"rules.rake_cap: 0 or more credits, got {self.rake_cap}")
        check_limits(self.limits, BOXES)

    def suit_value(self, suit: Suit) -> int:
        return 3 - self.suit_order.upper().index(suit.letter)


# ---------------------------------------------------------------------------------------------------
# State


class Phase(enum.StrEnum):
    """Where the round stands (the values are those of the journal, the snapshots and the views)."""

    IDLE = "idle"
    BETTING = "betting"
    DEALING = "dealing"
    PLAYING = "playing"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: Phase = Phase.IDLE
    bets: Bets = Bets()
    cards: tuple[tuple[str, Placed], ...] = ()        # the deal
    plays: tuple[tuple[int, tuple[Card, ...]], ...] = ()   # every play and pass (no cards) in order
    trick: int = 0           # index in plays where the current trick starts
    turn: int = 0            # the spot to play
    winner: int = 0

    def players(self) -> tuple[int, ...]:
        return self.bets.spots()

    def dealt(self, spot: int) -> tuple[Card, ...]:
        to = spot_actor(spot)
        return tuple(p.card for where, p in self.cards if where == to)

    def hand(self, spot: int) -> tuple[Card, ...]:
        """The cards a player still holds."""
        gone = {c for s, cards in self.plays if s == spot for c in cards}
        return tuple(c for c in self.dealt(spot) if c not in gone)

    def last_play(self) -> tuple[int, tuple[Card, ...]] | None:
        """The play to beat in the current trick (None: the player to act leads)."""
        for spot, cards in reversed(self.plays[self.trick:]):
            if cards:
                return spot, cards
        return None


def new_table(rules: Rules) -> State:
    return State(rules)


def _per_player(state: State) -> int:
    return 52 // len(state.players()) if state.rules.deal_all else 13


def _deal_size(state: State) -> int:
    n = len(state.players())
    return 52 if state.rules.deal_all else 13 * n


def _next_target(state: State) -> str:
    players = state.players()
    k = len(state.cards)
    if k < _per_player(state) * len(players):
        return spot_actor(players[k % len(players)])
    # the odd card of a whole-pack deal: to the holder of the lowest card dealt so far
    low = lowest_card([p.card for _, p in state.cards], state.rules)
    return next(where for where, p in state.cards if p.card == low)


def _opening_card(state: State) -> Card:
    return lowest_card([p.card for _, p in state.cards], state.rules)


def _next_spot(state: State, spot: int) -> int:
    players = state.players()
    return players[(players.index(spot) + 1) % len(players)]


def _passed_in_trick(state: State) -> set[int]:
    return {s for s, cards in state.plays[state.trick:] if not cards}


def _candidates(hand: Sequence[Card], rules: Rules) -> list[tuple[Card, ...]]:
    """Every set of cards from `hand` that could make a play (singles, pairs, triples, five-card hands)."""
    by_rank: dict[int, list[Card]] = {}
    by_suit: dict[Suit, list[Card]] = {}
    for c in hand:
        by_rank.setdefault(c.rank, []).append(c)
        by_suit.setdefault(c.suit, []).append(c)  # type: ignore[arg-type]
    out: list[tuple[Card, ...]] = [(c,) for c in hand]
    sets = {n: [cs for cards in by_rank.values() for cs in combinations(cards, n)] for n in (2, 3, 4)}
    out += sets[2] + sets[3]
    out += [t + p for t in sets[3] for p in sets[2] if t[0].rank != p[0].rank]
    out += [q + (c,) for q in sets[4] for c in hand if c.rank != q[0].rank]
    for run in STRAIGHT_ORDERS[rules.straights]:
        if all(r in by_rank for r in run):
            groups = [by_rank[r] for r in sorted(run)]
            out += list(_product(groups))
    for cards in by_suit.values():
        out += [five for five in combinations(cards, 5) if straight_position(five, rules) is None]
    return out


def _product(groups: list[list[Card]]) -> list[tuple[Card, ...]]:
    result: list[tuple[Card, ...]] = [()]
    for group in groups:
        result = [prefix + (c,) for prefix in result for c in group]
    return result


def legal_plays(state: State, spot: int) -> list[tuple[Card, ...]]:
    """Every legal play of `spot` now (for tests and tools)."""
    found = []
    for cards in _candidates(state.hand(spot), state.rules):
        try:
            _check_play(state, spot, cards)
        except IllegalEvent:
            continue
        found.append(cards)
    return found


def _check_play(state: State, spot: int, cards: Sequence[Card]) -> Combo:
    r = state.rules
    hand = state.hand(spot)
    if any(c not in hand for c in cards):
        raise IllegalEvent(f"spot {spot} does not hold {format_cards(c for c in cards if c not in hand)}")
    made = combo(cards, r)
    if made is None:
        raise IllegalEvent(f"{format_cards(cards)} is not a big two play (a single, pair, "
                           f"{'triple, ' if r.triples else ''}or five-card hand)")
    if not state.plays:
        opening = _opening_card(state)
        if opening not in cards:
            raise IllegalEvent(f"the first play must include the {opening.name}")
    last = state.last_play()
    if last is not None:
        to_beat = combo(last[1], r)
        assert to_beat is not None
        if not beats(made, to_beat):
            raise IllegalEvent(f"{format_cards(cards)} ({made.name}) does not beat {format_cards(last[1])} "
                               f"({to_beat.name})")
    if (not r.may_end_with_two and len(cards) == len(hand) and made.size <= 2
            and all(c.rank == TWO for c in cards)):
        raise IllegalEvent("a player may not go out on a single 2 or a pair of 2s at this table")
    return made


# ---------------------------------------------------------------------------------------------------
# What the table waits for


def expected_next(state: State) -> Expected:
    if state.phase is Phase.IDLE:
        return Expected(Waiting.IDLE, "open the game: players post their stake per point", actions=("open_bets",))
    if state.phase is Phase.BETTING:
        return Expected(
            Waiting.BETTING, f"two to {state.rules.spots} players post the stake per point on 'play', all alike",
            actions=("place_bet", "remove_bet", "close_bets"))
    if state.phase is Phase.DEALING:
        to = _next_target(state)
        return Expected(
            Waiting.DEALING, f"card {len(state.cards) + 1} of {_deal_size(state)} to {to.replace(':', ' ')}, "
            "face down", card_to=to, face_up=False)
    if state.phase is Phase.PLAYING:
        last = state.last_play()
        if last is None:
            lead = " (including the lowest card)" if not state.plays else ""
            return Expected(
                Waiting.DECIDING, f"spot {state.turn} leads{lead}: play:<cards>", actor=spot_actor(state.turn),
                actions=("play",))
        made = combo(last[1], state.rules)
        return Expected(Waiting.DECIDING, f"spot {state.turn}: beat spot {last[0]}'s {made.name if made else ''} "
                        f"{format_cards(last[1])} (play:<cards>) or pass", actor=spot_actor(state.turn),
                        actions=("play", "pass"))
    return Expected(Waiting.SETTLING, f"spot {state.winner} is out: settle the payments", actions=("settle",))


# ---------------------------------------------------------------------------------------------------
# Events


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _close_check(state: State, event: Event) -> None:
    if isinstance(event, CloseBets) and state.phase is Phase.BETTING:
        if len(state.players()) < 2:
            raise IllegalEvent("big two needs two to four players")
        if len({a for _, _, a in state.bets}) != 1:
            raise IllegalEvent("every player plays for the same stake per point: make the stakes alike")


def _card(state: State, event: CardDealt) -> tuple[State, Effects]:
    if state.phase is not Phase.DEALING:
        raise IllegalEvent(f"no card expected now: {expected_next(state).text}")
    state, placed = place_card(state, event, _next_target(state), False, phases=_PHASES)
    if len(state.cards) < _deal_size(state):
        return state, placed
    opener = parse_spot_actor(next(w for w, p in state.cards if p.card == _opening_card(state)))
    return replace(state, phase=Phase.PLAYING, turn=opener or 0), placed


def _play(state: State, event: Decision) -> tuple[State, Effects]:
    if state.phase is not Phase.PLAYING:
        raise IllegalEvent(f"no play expected now: {expected_next(state).text}")
    spot = state.turn
    if event.actor != spot_actor(spot):
        raise IllegalEvent(f"spot {spot} is to play, not {event.actor!r}")
    if event.amount != 0 or event.hand != 0:
        raise IllegalEvent("a play takes no amount")
    if event.action == "pass":
        if state.last_play() is None:
            raise IllegalEvent(f"spot {spot} leads and must play")
        return _after(replace(state, plays=state.plays + ((spot, ()),)), spot), ()
    if not event.action.startswith("play:"):
        raise IllegalEvent(f"spot {spot} may play:<cards>{'' if state.last_play() is None else ' or pass'}, "
                           f"not {event.action!r}")
    try:
        cards = parse_cards(event.action[5:])
    except ValueError as exc:
        raise IllegalEvent(f"spot {spot}: {exc}") from None
    _check_play(state, spot, cards)
    cards = tuple(sorted(cards, key=lambda c: card_key(c, state.rules)))
    played = [(where, Placed(p.card, True) if p.card in cards else p) for where, p in state.cards]
    state = replace(state, plays=state.plays + ((spot, cards),), cards=tuple(played))
    shown: Effects = (CardsRevealed(spot_actor(spot), cards),)
    if state.hand(spot):
        return _after(state, spot), shown
    # Out: the losers lay their cards down to count them.
    state, laid = reveal(state, [spot_actor(s) for s in state.players() if s != spot])
    return replace(state, phase=Phase.SETTLING, winner=spot, turn=0), shown + laid


def _after(state: State, spot: int) -> State:
    """Next to play; when every other player has passed since the last play, that player leads anew."""
    last = state.last_play()
    assert last is not None
    others = len(state.players()) - 1
    since = 0
    for s, cards in reversed(state.plays):
        if cards:
            break
        since += 1
    passed = _passed_in_trick(state)
    if since >= others or (state.rules.pass_is_final and len(passed - {last[0]}) >= others):
        return replace(state, trick=len(state.plays), turn=last[0])
    nxt = _next_spot(state, spot)
    while state.rules.pass_is_final and nxt in passed and nxt != last[0]:
        nxt = _next_spot(state, nxt)
    return replace(state, turn=nxt)


# ---------------------------------------------------------------------------------------------------
# Scoring and settlement


def _unused(cards: Sequence[Card], rules: Rules) -> list[str]:
    """The doubling holdings left in a loser's hand: each 2, each four of a kind, each straight flush."""
    found = ["a 2"] * sum(1 for c in cards if c.rank == TWO)
    by_rank: dict[int, int] = {}
    for c in cards:
        by_rank[c.rank] = by_rank.get(c.rank, 0) + 1
    found += ["four of a kind"] * sum(1 for n in by_rank.values() if n == 4)
    for suit in Suit:
        suited = {c.rank for c in cards if c.suit == suit}
        if any(run <= suited for run in STRAIGHT_ORDERS[rules.straights]):
            found.append("a straight flush")
    return found


def _ending_doubles(state: State) -> bool:
    last = state.plays[-1][1]
    made = combo(last, state.rules)
    return bool(state.rules.ending_double and made is not None and (
        all(c.rank == TWO for c in last) or made.category in (FOUR, STRAIGHT_FLUSH) and made.size == 5))


def points(state: State, spot: int) -> tuple[int, str]:
    """A loser's points and how they were counted."""
    r = state.rules
    left = state.hand(spot)
    n = len(left)
    words = [f"{n} card{'s' if n != 1 else ''} left"]
    total = n
    if n == len(state.dealt(spot)) and r.triple_all:
        total, words = 3 * n, words + ["none played: tripled"]
    elif n >= r.double_at:
        total, words = 2 * n, words + [f"{r.double_at} or more: doubled"]
    unused = _unused(left, r)
    if unused and r.doublings is Doublings.EACH:
        total <<= len(unused)
        words += [f"doubled for {u}" for u in unused]
    elif unused and r.doublings is Doublings.ONCE:
        total *= 2
        words.append(f"doubled for {', '.join(unused)}")
    if _ending_doubles(state):
        total *= 2
        words.append("doubled: the winner went out on " + format_cards(state.plays[-1][1]))
    return total, ", ".join(words)


def settle(state: State) -> tuple[tuple[StakeChanged, ...], Settlement]:
    """Each loser's payment put on the layout, and the rows (see the module docstring)."""
    r = state.rules
    winner = state.winner
    stake = state.bets.get(winner, "play")
    topups: list[StakeChanged] = []
    results: list[BoxResult] = []
    won = 0
    paid_by = []
    for spot in state.players():
        if spot == winner:
            continue
        pts, how = points(state, spot)
        owed = pts * stake
        topups.append(StakeChanged(spot, "play", owed, owed - stake))
        results.append(BoxResult(spot, "play", owed, "lose", 0, 0, 0,
                                 f"pays spot {winner} {pts} point{'s' if pts != 1 else ''} x {stake} ({how})"))
        won += owed
        paid_by.append(f"spot {spot} {owed}")
    rake = won * r.rake_percent // 100
    if r.rake_cap is not None:
        rake = min(rake, r.rake_cap)
    taken = f" less rake {rake}" if rake else ""
    results.append(BoxResult(winner, "play", stake, "win", won, rake, stake + won - rake,
                             f"out first: paid by {', '.join(paid_by)}{taken}"))
    return tuple(topups), Settlement(tuple(results))


# ---------------------------------------------------------------------------------------------------
# View


def snapshot(state: State) -> dict[str, Any]:
    """Hands face down (their size is public), every play face up; nothing about a hand outside "audit"."""
    players = []
    played = {c for _, cards in state.plays for c in cards}
    for spot in state.players():
        held = [p for where, p in state.cards if where == spot_actor(spot) and p.card not in played]
        players.append({"spot": spot, "cards": [p.json() for p in held], "count": len(held),
                        "to_play": spot == state.turn and state.phase is Phase.PLAYING})
    trick = [{"spot": s, "pass": not cards, "cards": [Placed(c, True).json() for c in cards],
              "play": (combo(cards, state.rules) or Combo(0, 0, (), "")).name if cards else None}
             for s, cards in state.plays[state.trick:]]
    last = state.last_play()
    picture: dict[str, Any] = {
        "game": NAME, "round": state.round, "phase": expected_next(state).phase.value,
        "stage": state.phase.value, "bets": state.bets.json(), "players": players, "trick": trick,
        "to_beat": [Placed(c, True).json() for c in last[1]] if last else None,
        "played": [Placed(c, True).json() for _, cards in state.plays for c in cards],
        "winner": state.winner or None, "audit": {}}
    if state.phase is Phase.SETTLING:
        picture["points"] = {spot_actor(s): points(state, s)[0] for s in state.players() if s != state.winner}
    return picture


_PHASES = Phases(Phase.IDLE, Phase.BETTING, Phase.DEALING)
_ROUND = own_round("big two", expected_next, _PHASES, Phase.SETTLING, lambda s: State(s.rules, s.round), settle,
                   _card, _play, _close_check)
GAME = GameSpec(NAME, "Big Two", Rules, new_table, apply, expected_next, snapshot, BOXES)


def legal_bets(rules: Rules, rng: Any) -> list[Event]:
    """Two to four players post the same stake per point."""
    count = 2 + rng.randbelow(rules.spots - 1)
    spots = sorted(rng.shuffled(list(range(1, rules.spots + 1)))[:count])
    limit = rules.limits["play"]
    stake = limit.min + rng.randbelow(min(limit.max - limit.min, 4) + 1)
    return [PlaceBet(s, "play", stake) for s in spots]


def autoplay_decision(state: State, exp: Expected, rng: Any) -> tuple[str, int]:
    """The demo's players shed their lowest legal play, passing now and then when they may."""
    plays = legal_plays(state, state.turn)
    if not plays or ("pass" in exp.actions and rng.randbelow(5) == 0):
        return "pass", 0
    low = min(plays, key=lambda cards: (len(cards) == 1, min(card_key(c, state.rules) for c in cards)))
    return "play:" + format_cards(low), 0

