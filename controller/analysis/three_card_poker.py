"""Three card poker math, exact: pair plus over all 22,100 hands, ante/play with the queen-six-four strategy over every player hand against every dealer hand.

Method. The ante/play space is 22,100 player hands x 18,424 dealer hands from the other 49 cards
(407,170,400 deals). Player hands that differ only by a renaming of suits have identical outcomes, so
each suit-pattern class (1,755 of them) is played once against every dealer hand, weighted by its size.
Every deal is settled by `settle`, the vectorised twin of the engine's settlement (a test steps the
engine on the same seeded cards and compares round by round).

Published figures (Wizard of Odds, "Three Card Poker", wizardofodds.com/games/three-card-poker/):
pair plus 40-30-6-3-1 (the seed's table, 003_*) house edge 7.28%; with a 4:1 flush it is 2.32%;
ante/play with ante bonus 5-4-1 and the Q-6-4 strategy 3.37% of the ante (element of risk 2.01%).
The issue's note pairs "1-4-6-30-40" with 7.28%: that figure belongs to the 3:1 flush table.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb
from typing import Any, Callable

import numpy as np

from controller.analysis import report
from controller.analysis._enumerate import combinations, lcm_of_pers
from controller.batch.hands import evaluate3
from controller.cards import QUEEN
from controller.games.three_card_poker import QUALIFIER, Rules
from controller.hands import three_card

__all__ = ["analyse", "settle", "plays", "PLAY_AT_LEAST"]

# The queen-six-four strategy: play Q-6-4 or better, fold Q-6-3 and below (003_*, after Wizard of Odds).
PLAY_AT_LEAST = three_card.reference_value((QUEEN, 6, 4), False)
CATEGORIES = three_card.CATEGORY_NAMES   # index = category number, high card .. straight flush
DEALER_HANDS = comb(49, 3)


def plays(player: np.ndarray) -> np.ndarray:
    """The Q-6-4 strategy on an array of three-card values."""
    return player >= PLAY_AT_LEAST


def _line_table(paytable: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per hand category: whether the line pays, its win and its per."""
    pays = np.zeros(len(CATEGORIES), dtype=bool)
    win = np.zeros(len(CATEGORIES), dtype=np.int64)
    per = np.ones(len(CATEGORIES), dtype=np.int64)
    for cat, name in enumerate(CATEGORIES):
        payout = paytable.get(name.replace(" ", "_"))
        if payout is not None:
            pays[cat], win[cat], per[cat] = True, payout.win, payout.per
    return pays, win, per


def settle(player: np.ndarray, dealer: np.ndarray, play: np.ndarray, ante: int, pair_plus: int,
           rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """Net credits of each round for one spot, as the engine settles it: (ante + play + ante bonus, pair plus).

    `player`/`dealer` are three-card values, `play` the spot's decisions (ignored without an ante).
    """
    cat = player >> 12
    pp_pays, pp_win, pp_per = _line_table(rules.pair_plus)
    pair_plus_net = np.where(pp_pays[cat], pair_plus * pp_win[cat] // pp_per[cat], -pair_plus)
    if not ante:
        return np.zeros(player.shape, dtype=np.int64), pair_plus_net
    if rules.fold_loses_pair_plus:
        pair_plus_net = np.where(play, pair_plus_net, -pair_plus)
    qualifies = dealer >= QUALIFIER
    duel = np.sign(player.astype(np.int64) - dealer)            # +1 player higher, -1 dealer higher, 0 tie
    played = np.where(qualifies, duel * 2 * ante, ante)          # ante and play together (play = ante)
    ab_pays, ab_win, ab_per = _line_table(rules.ante_bonus)
    bonus = np.where(ab_pays[cat], ante * ab_win[cat] // ab_per[cat], 0)
    return np.where(play, played + bonus, -ante), pair_plus_net


def _suit_classes(hands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Representatives and sizes of the classes of hands equal up to a renaming of suits."""
    rank, suit = hands.astype(np.int64) >> 2, hands.astype(np.int64) & 3
    best = None
    for perm in itertools.permutations(range(4)):
        renamed = np.sort(rank * 4 + np.array(perm)[suit], axis=1)
        key = (renamed[:, 0] * 52 + renamed[:, 1]) * 52 + renamed[:, 2]
        best = key if best is None else np.minimum(best, key)
    assert best is not None  # there are 24 permutations
    _, first, sizes = np.unique(best, return_index=True, return_counts=True)
    return hands[first], sizes


def analyse(rules: Rules, rounds: int | None, seed: int, say: Callable[[str], None]) -> dict[str, Any]:
    """The exact report; `rounds` and `seed` do not apply (exact method)."""
    hands = combinations(3)
    values = evaluate3(hands, check=False).astype(np.int64)
    n_hands = len(hands)

    # Pair plus on its own: the player's hand alone decides it.
    pp_stake = lcm_of_pers(rules.pair_plus)
    _, pp_net = settle(values, values, np.ones(n_hands, bool), 0, pp_stake, rules)
    pair_plus = Fraction(int(pp_net.sum()), n_hands * pp_stake)
    counts = np.bincount(values >> 12, minlength=len(CATEGORIES))

    # Ante/play: every class of player hand against every dealer hand it leaves.
    ante = lcm_of_pers(rules.ante_bonus)
    masks = (np.ones((n_hands, 3), dtype=np.uint64) << hands.astype(np.uint64)).sum(axis=1, dtype=np.uint64)
    reps, sizes = _suit_classes(hands)
    say(f"three card poker: {len(reps):,} classes of player hands, each against the {DEALER_HANDS:,} dealer hands left")
    total = 0
    outcome = np.zeros(4, dtype=np.int64)   # played: dealer does not qualify, player wins, dealer wins, tie
    played_rounds = 0
    for rep, size in zip(reps, sizes):
        pmask = np.uint64(sum(1 << int(c) for c in rep))
        dealer = values[(masks & pmask) == 0]
        mine = np.full(dealer.shape, three_card.eval3(*(int(c) for c in rep)), dtype=np.int64)
        play = plays(mine)
        net, _ = settle(mine, dealer, play, ante, 0, rules)
        total += int(net.sum()) * int(size)
        if play[0]:
            played_rounds += int(size) * len(dealer)
            q = dealer >= QUALIFIER
            outcome += int(size) * np.array([(~q).sum(), (q & (mine > dealer)).sum(), (q & (mine < dealer)).sum(),
                                             (q & (mine == dealer)).sum()])
    deals = n_hands * DEALER_HANDS
    ante_play = Fraction(total, deals * ante)
    wagered = Fraction(deals + played_rounds, deals)  # ante always, play when played: average units wagered

    probabilities = {f"hand: {name}": counts[cat] / n_hands for cat, name in reversed(list(enumerate(CATEGORIES)))}
    probabilities |= {
        "play (Q-6-4 or better)": played_rounds / deals,
        "fold": 1 - played_rounds / deals,
        "played, dealer does not qualify": outcome[0] / deals,
        "played, player wins": outcome[1] / deals,
        "played, dealer wins": outcome[2] / deals,
        "played, tie": outcome[3] / deals,
    }
    return report("three-card-poker", rules.to_json(), "exact", None,
                  {k: float(v) for k, v in probabilities.items()},
                  {"pair_plus": float(pair_plus), "ante_play": float(ante_play)}, None,
                  strategy="play Q-6-4 or better, fold Q-6-3 and below; pair plus bet on its own",
                  element_of_risk={"pair_plus": float(pair_plus), "ante_play": float(ante_play / wagered)},
                  deals=deals)
