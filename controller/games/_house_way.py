"""Pai gow poker's house way: the documented, configurable rules by which the dealer (or a player who asks) sets seven cards into a back and a front hand.

The default `HouseWay()` is the usual casino house way, as posted at Nevada and Atlantic City tables
(000_* says only that the dealer follows "a prescribed set of rules known as the House Ways"; the rules
below are the common ones, each configurable). The joker counts as an ace everywhere below except where
it completes a straight or a flush. Pairs are low (2-6), medium (7-10) or high (J-K); aces stand apart.

- No pair: the highest card behind, the next two in front.
- One pair: the pair behind, the two highest other cards in front.
- Two pair: split them (higher pair behind, lower pair in front) or keep them together behind with the
  two highest single cards in front. The choice depends on the two pairs' classes and the highest single
  card: `split` always splits, `keep` never does, `ace`/`king`/`queen` keep the pairs together when a
  single card of at least that rank can play in front. Defaults: aces and any pair, high-high and
  high-medium split; high-low and medium-medium keep with an ace; medium-low and low-low keep with a king.
- Three pair: the highest pair in front.
- Three of a kind: kept behind with the two highest single cards in front; three aces are split (a pair
  of aces behind, an ace and the highest single card in front). Two sets of three: a pair from the higher
  set in front.
- Full house: the pair in front (the higher pair, with two pairs), except a pair of 2s with an ace and a
  king to play in front, kept together.
- Four of a kind: with a pair or a set of three besides, the pair in front. Otherwise 2-6 stay together,
  7-10 are split unless a king or ace can play in front, J-K unless an ace can, aces always split;
  splitting puts a pair from the four in front.
- Five aces: a pair of aces in front, unless a pair of kings can play there.
- Straight, flush, straight flush (joker included): when the cards make one, among all settings with one
  behind the one with the highest front hand (then the highest back hand) is played, with one pair, no
  pair or three of a kind (not aces); with two pair or three aces only when the front then holds a pair;
  never over three pair, two sets of three, a full house or four of a kind.

The result is never a foul. `house_way` is pure and deterministic, and a hand that cannot make a flush
is set from its ranks alone (cards of one rank in a fixed order), so the math fast path may cache on ranks.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

from controller.cards import ACE, KING, QUEEN, Card
from controller.hands import poker
from controller.hands.paigow import back_value, front_value

__all__ = ["Keep", "HouseWay", "house_way", "setting_kind", "pair_class"]


class Keep(enum.Enum):
    """When two pair (or a four of a kind) stay together behind instead of being split."""

    SPLIT = "split"    # always split
    ACE = "ace"        # keep together when an ace (or the joker) can play in front
    KING = "king"      # ... a king or an ace
    QUEEN = "queen"    # ... a queen or better
    KEEP = "keep"      # never split

    def keeps(self, best_single: int) -> bool:
        threshold = {Keep.SPLIT: 99, Keep.ACE: ACE, Keep.KING: KING, Keep.QUEEN: QUEEN, Keep.KEEP: 0}[self]
        return best_single >= threshold


@dataclass(frozen=True)
class HouseWay:
    """The house way's choices (see the module docstring); the defaults are the usual casino house way."""

    low_pair_top: int = 6          # pairs 2..6 are low
    medium_pair_top: int = 10      # pairs 7..10 are medium; J..K are high
    two_pair_aces: Keep = Keep.SPLIT
    two_pair_high_high: Keep = Keep.SPLIT
    two_pair_high_medium: Keep = Keep.SPLIT
    two_pair_high_low: Keep = Keep.ACE
    two_pair_medium_medium: Keep = Keep.ACE
    two_pair_medium_low: Keep = Keep.KING
    two_pair_low_low: Keep = Keep.KING
    three_aces_split: bool = True
    full_house_keep_twos: bool = True      # a full house with a pair of 2s stays whole with an ace and a king
    four_low_top: int = 6                  # four of a kind 2..low_top stays together
    four_medium: Keep = Keep.KING          # four of a kind low_top+1..medium_pair_top
    four_high: Keep = Keep.ACE             # four jacks, queens or kings
    four_aces: Keep = Keep.SPLIT
    five_aces_keep_with_kings: bool = True
    straight_flush_over_two_pair: bool = True  # with two pair or three aces, when the front then holds a pair

    def __post_init__(self) -> None:
        if not 2 <= self.low_pair_top < self.medium_pair_top < KING:
            raise ValueError(f"pair classes need 2 <= low_pair_top < medium_pair_top < 13, got "
                             f"{self.low_pair_top} and {self.medium_pair_top}")
        if not 2 <= self.four_low_top <= self.medium_pair_top:
            raise ValueError(f"four_low_top must be 2..{self.medium_pair_top}, got {self.four_low_top}")


def pair_class(rank: int, way: HouseWay) -> str:
    """'low', 'medium', 'high' or 'aces' for a pair of `rank` (the joker pairs as an ace)."""
    if rank == ACE:
        return "aces"
    if rank <= way.low_pair_top:
        return "low"
    return "medium" if rank <= way.medium_pair_top else "high"


def _rank(card: Card) -> int:
    return ACE if card.joker else card.rank


def _order(card: Card) -> tuple[int, int]:
    # Highest first; within a rank the joker last (it is the card the house way gives up first), then by suit.
    return (-_rank(card), 5 if card.joker else -int(card.suit))  # type: ignore[arg-type]


def _two_pair_rule(hi: int, lo: int, way: HouseWay) -> Keep:
    if hi == ACE:
        return way.two_pair_aces
    first, second = sorted((pair_class(hi, way), pair_class(lo, way)))
    return {("high", "high"): way.two_pair_high_high, ("high", "medium"): way.two_pair_high_medium,
            ("high", "low"): way.two_pair_high_low, ("medium", "medium"): way.two_pair_medium_medium,
            ("low", "medium"): way.two_pair_medium_low, ("low", "low"): way.two_pair_low_low}[first, second]


def _four_rule(rank: int, way: HouseWay) -> Keep:
    if rank == ACE:
        return way.four_aces
    if rank <= way.four_low_top:
        return Keep.KEEP
    return way.four_medium if rank <= way.medium_pair_top else way.four_high


def _pair_based(hand: list[Card], way: HouseWay) -> tuple[str, tuple[Card, Card]]:
    """The setting from pairs and sets alone: (the holding's kind, the two front cards)."""
    groups: dict[int, list[Card]] = {}
    for c in hand:                       # hand is in _order: groups keep that order
        groups.setdefault(_rank(c), []).append(c)
    by_size: dict[int, list[list[Card]]] = {n: [] for n in range(1, 6)}
    for rank in sorted(groups, reverse=True):
        by_size[len(groups[rank])].append(groups[rank])
    singles = [g[0] for g in by_size[1]]
    pairs, trips, fours, fives = by_size[2], by_size[3], by_size[4], by_size[5]
    best_single = _rank(singles[0]) if singles else 0
    if fives:
        if pairs and _rank(pairs[0][0]) == KING and way.five_aces_keep_with_kings:
            return "five aces", (pairs[0][0], pairs[0][1])
        return "five aces", (fives[0][3], fives[0][4])
    if fours:
        four = fours[0]
        if trips:
            return "four of a kind", (trips[0][0], trips[0][1])
        if pairs:
            return "four of a kind", (pairs[0][0], pairs[0][1])
        if _four_rule(_rank(four[0]), way).keeps(best_single):
            return "four of a kind", (singles[0], singles[1])
        return "four of a kind", (four[2], four[3])
    if len(trips) == 2:
        return "two sets of three", (trips[0][1], trips[0][2])
    if trips and pairs:
        if (len(pairs) == 1 and _rank(pairs[0][0]) == 2 and way.full_house_keep_twos
                and {_rank(c) for c in singles} == {ACE, KING}):
            return "full house", (singles[0], singles[1])
        return "full house", (pairs[0][0], pairs[0][1])
    if trips:
        if _rank(trips[0][0]) == ACE and way.three_aces_split:
            return "three aces", (trips[0][2], singles[0])
        return "three of a kind", (singles[0], singles[1])
    if len(pairs) == 3:
        return "three pair", (pairs[0][0], pairs[0][1])
    if len(pairs) == 2:
        hi, lo = _rank(pairs[0][0]), _rank(pairs[1][0])
        if _two_pair_rule(hi, lo, way).keeps(best_single):
            return "two pair", (singles[0], singles[1])
        return "two pair", (pairs[1][0], pairs[1][1])
    if pairs:
        return "one pair", (singles[0], singles[1])
    return "no pair", (singles[1], singles[2])


def _may_straight_or_flush(hand: Sequence[Card]) -> bool:
    jokers = sum(1 for c in hand if c.joker)
    suits = [0, 0, 0, 0]
    ranks = set()
    for c in hand:
        if not c.joker:
            suits[c.suit] += 1  # type: ignore[index]
            ranks.add(c.rank)
            if c.rank == ACE:
                ranks.add(1)
    if max(suits) + jokers >= 5:
        return True
    return any(sum(1 for r in range(low, low + 5) if r in ranks) + jokers >= 5 for low in range(1, 11))


def _five_may_run_or_suit(five: list[Card]) -> bool:
    """A quick necessary test for a straight or flush in five cards (the joker fills one gap)."""
    naturals = [c for c in five if not c.joker]
    if len({c.suit for c in naturals}) == 1:
        return True
    ranks = {c.rank for c in naturals}
    if len(ranks) != len(naturals):
        return False
    if max(ranks) - min(ranks) <= 4:
        return True
    low = {1 if r == ACE else r for r in ranks}
    return max(low) - min(low) <= 4


def _best_straight_or_flush(hand: list[Card]) -> tuple[int, int, tuple[Card, Card]] | None:
    """Among the settings with a straight, flush or straight flush behind, the one with the best front
    (then the best back): (front value, back value, front cards), or None."""
    best = None
    for i, j in combinations(range(7), 2):
        back = [c for k, c in enumerate(hand) if k != i and k != j]
        if not _five_may_run_or_suit(back):
            continue
        bv = back_value(back)
        if poker.category(bv) in (poker.STRAIGHT, poker.FLUSH, poker.STRAIGHT_FLUSH):
            front = (hand[i], hand[j])
            key = (front_value(front), bv, front)
            if best is None or key[:2] > best[:2]:
                best = key
    return best


_PAIR_FRONT_KINDS = {"two pair", "three aces"}
_STRAIGHT_FIRST_KINDS = {"no pair", "one pair", "three of a kind"}


def _setting(hand: list[Card], way: HouseWay) -> tuple[str, tuple[Card, Card]]:
    kind, front = _pair_based(hand, way)
    if (kind in _STRAIGHT_FIRST_KINDS or (kind in _PAIR_FRONT_KINDS and way.straight_flush_over_two_pair)) \
            and _may_straight_or_flush(hand):
        found = _best_straight_or_flush(hand)
        if found is not None:
            fv, bv, sf_front = found
            holds_pair = poker.category(fv) == poker.PAIR
            if kind in _STRAIGHT_FIRST_KINDS or holds_pair:
                name = poker.CATEGORY_NAMES[poker.category(bv)]
                return name, sf_front
    return kind, front


def house_way(cards: Sequence[Card], way: HouseWay = HouseWay()) -> tuple[tuple[Card, ...], tuple[Card, Card]]:
    """The house way's setting of seven cards: (back five, front two), each highest first."""
    hand = _hand(cards)
    _, front = _setting(hand, way)
    back = tuple(c for c in hand if c not in front)
    return back, (front[0], front[1]) if _order(front[0]) <= _order(front[1]) else (front[1], front[0])


def setting_kind(cards: Sequence[Card], way: HouseWay = HouseWay()) -> str:
    """What the house way played the hand as ('two pair', 'flush', 'three aces', ...), for the dealer screen."""
    return _setting(_hand(cards), way)[0]


def _hand(cards: Sequence[Card]) -> list[Card]:
    if len(cards) != 7:
        raise ValueError(f"a pai gow hand has 7 cards, got {len(cards)}")
    if len(set(cards)) != 7:
        raise ValueError("duplicate card in a pai gow hand")
    return sorted(cards, key=_order)
