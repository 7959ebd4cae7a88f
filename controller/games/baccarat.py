"""Baccarat (punto banco): the coup with its third-card tableau, player/banker/tie bets, commission or no-commission.

The house banks every bet; nobody decides anything once bets close: the cards are dealt player, banker,
player, banker, then each side's third card follows the tableau (rules text 000_*, 004_*):

- a natural (8 or 9 on two cards) on either side ends the coup;
- the player draws on 0-5 and stands on 6-7;
- the banker, when the player stood, draws on 0-5; when the player drew, the banker's draw depends on the
  player's third card (`banker_draws`): 0-2 always, 3 unless it is an 8, 4 on 2-7, 5 on 4-7, 6 on 6-7, never on 7.

Money: player pays 1:1, banker 1:1 less a commission (5%, rounded per the rules) or, in the no-commission
variant, 1:1 except a banker win on 6 that pays 1:2; tie pays 8:1 and player/banker bets push on a tie.
Shoe: 8 decks by default; at the start of each shoe the first card is faced and as many cards as its value
(ace 1, tens and faces 10) are burned face down; when the cut card comes out, that coup is the last.
"""

from __future__ import annotations

from enum import StrEnum

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Sequence

from controller.cards import ACE, TEN, Card
from controller.games._round import Round, opens, shoe_bets, void_step
from controller.games._shoe import ShoeState, check_range, deal_from_shoe, load_shoe
from controller.games.base import (
    BoxResult, CardDealt, Effects, Event, Expected, GameSpec, IllegalEvent, NewShoe, Payout, Placed,
    RoundSettled, Rounding, RulesBase, RulesError, Settlement, Waiting,
)
from controller.games.bets import Bets, Limit, check_limits, sample_bets
from controller.hands.points import baccarat_points

__all__ = ["GAME", "Rules", "State", "Phase", "BOXES", "new_table", "apply", "expected_next", "snapshot",
           "banker_draws", "player_draws", "is_natural", "coup_targets", "burn_count", "legal_bets"]

BOXES = ("player", "banker", "tie")
MAX_COUP_CARDS = 6


@dataclass(frozen=True)
class Rules(RulesBase):
    """Punto banco as dealt in casinos; every default is the standard rule."""

    decks: int = 8
    spots: int = 12                       # seats 1..12 around the table (rules text 000_*)
    tie_pays: Payout = Payout(8, 1)
    commission_percent: int = 5           # taken from a winning banker bet
    commission_rounding: Rounding = Rounding.UP  # a fraction of a credit of commission goes to the house
    no_commission: bool = False           # banker wins pay 1:1 except a win on 6, which pays `banker_six_pays`
    banker_six_pays: Payout = Payout(1, 2)
    burn: bool = True                     # burn rule at the start of each shoe
    cards_behind_cut: int = 7             # the cut card goes in front of the seventh-last card
    limits: Mapping[str, Limit] = field(default_factory=lambda: MappingProxyType(
        {"player": Limit(10, 5_000), "banker": Limit(10, 5_000), "tie": Limit(5, 500)}))

    def validate(self) -> None:
        check_range("decks", self.decks, 1, 8, " decks")
        check_range("spots", self.spots, 1, 14, " spots")
        check_range("commission_percent", self.commission_percent, 0, 25)
        if self.tie_pays.win < 1:
            raise RulesError(f"rules.tie_pays: a tie bet must pay something, got {self.tie_pays}")
        check_range("cards_behind_cut", self.cards_behind_cut, MAX_COUP_CARDS, self.decks * 26,
                    " (a whole coup to half the shoe)")
        check_limits(self.limits, BOXES)


# ---------------------------------------------------------------------------------------------------
# The tableau (shared with chemin de fer)


def is_natural(points: int) -> bool:
    return points >= 8


def player_draws(points: int) -> bool:
    """The player (punto) draws on 0-5 and stands on 6-7."""
    return points <= 5


_BANKER_DRAWS_ON = {3: frozenset({0, 1, 2, 3, 4, 5, 6, 7, 9}), 4: frozenset(range(2, 8)),
                    5: frozenset(range(4, 8)), 6: frozenset({6, 7})}


def banker_draws(points: int, player_third: int | None) -> bool:
    """Does the banker draw on `points` (two cards, no natural) when the player's third card is worth
    `player_third` (None: the player stood)?"""
    if player_third is None:
        return points <= 5
    if points <= 2:
        return True
    if points >= 7:
        return False
    return player_third in _BANKER_DRAWS_ON[points]


def _value(card: Card) -> int:
    return baccarat_points((card,))


def coup_targets(player: Sequence[Card], banker: Sequence[Card]) -> str | None:
    """Where the next card of the coup goes ("player", "banker") or None when the coup is complete."""
    n_player, n_banker = len(player), len(banker)
    if n_player + n_banker < 4:
        return "player" if n_player == n_banker else "banker"
    p, b = baccarat_points(player[:2]), baccarat_points(banker[:2])
    if is_natural(p) or is_natural(b):
        return None
    if n_player == 2 and player_draws(p):
        return "player"
    if n_banker == 2 and banker_draws(b, _value(player[2]) if n_player == 3 else None):
        return "banker"
    return None


def burn_count(card: Card) -> int:
    """Cards burned after the faced first card of a shoe: its value, ace 1, tens and faces 10."""
    if card.rank == ACE:
        return 1
    return TEN if card.rank >= TEN else card.rank


# ---------------------------------------------------------------------------------------------------
# State


class Phase(StrEnum):
    """Where the round stands (the values are those of the journal, the snapshots and the views)."""

    SHUFFLING = "shuffling"
    BURNING = "burning"
    IDLE = "idle"
    BETTING = "betting"
    DEALING = "dealing"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: Phase = Phase.SHUFFLING
    bets: Bets = Bets()
    player: tuple[Card, ...] = ()
    banker: tuple[Card, ...] = ()
    shoe: ShoeState = ShoeState()
    burned: tuple[Placed, ...] = ()   # this shoe's burn: the faced card, then the face-down ones
    burn_left: int = 0                # face-down burn cards still owed


def new_table(rules: Rules) -> State:
    return State(rules)


def _after_round(state: State) -> State:
    """The table between rounds: a new shoe if the cut card came out, else ready to open bets."""
    return State(state.rules, state.round, Phase.SHUFFLING if state.shoe.cut_reached else Phase.IDLE,
                 shoe=state.shoe, burned=state.burned)


def expected_next(state: State) -> Expected:
    phase = state.phase
    if phase is Phase.SHUFFLING:
        return Expected(Waiting.SHUFFLING, f"load a new shoe of {state.rules.decks} decks", actions=("new_shoe",))
    if phase is Phase.BURNING:
        if not state.burned:
            return Expected(Waiting.DEALING, "burn: face the first card of the shoe", card_to="burn", face_up=True)
        return Expected(Waiting.DEALING, f"burn: {state.burn_left} more card(s) face down", card_to="burn",
                        face_up=False)
    if phase is Phase.IDLE:
        return Expected(Waiting.IDLE, "open bets", actions=("open_bets", "new_shoe"))
    if phase is Phase.BETTING:
        return Expected(Waiting.BETTING, "bets open: player, banker, tie",
                        actions=("place_bet", "remove_bet", "close_bets"))
    if phase is Phase.DEALING:
        to = coup_targets(state.player, state.banker)
        assert to is not None
        n = len(state.player) + len(state.banker)
        what = "third card" if n >= 4 else ("first card" if n < 2 else "second card")
        return Expected(Waiting.DEALING, f"{what} to the {to}, face up", card_to=to, face_up=True)
    return Expected(Waiting.SETTLING, _result_text(state) + ": settle", actions=("settle",))


def _result_text(state: State) -> str:
    p, b = baccarat_points(state.player), baccarat_points(state.banker)
    if p == b:
        return f"tie {p} to {b}"
    return f"player wins {p} to {b}" if p > b else f"banker wins {b} to {p}"


# ---------------------------------------------------------------------------------------------------
# Events


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _settle(state: State) -> tuple[State, Effects]:
    settlement = settle_bets(state.rules, state.bets, state.player, state.banker)
    return _after_round(state), (RoundSettled(state.round, settlement),)


def _new_shoe(state: State, event: NewShoe) -> tuple[State, Effects]:
    if state.phase not in (Phase.SHUFFLING, Phase.IDLE, Phase.BURNING):
        raise IllegalEvent("a new shoe goes in between coups, not during one")
    r = state.rules
    shoe = load_shoe(event, r.decks, r.cards_behind_cut, min_behind=MAX_COUP_CARDS, min_cut=11 if r.burn else 1)
    return State(r, state.round, Phase.BURNING if r.burn else Phase.IDLE, shoe=shoe), ()


def _card(state: State, event: CardDealt) -> tuple[State, Effects]:
    to, shoe, effects = deal_from_shoe(state.shoe, expected_next(state), event)
    if state.phase is Phase.BURNING:
        burned: tuple[Placed, ...]
        if not state.burned:
            burned, left = (Placed(event.card, True),), burn_count(event.card)
        else:
            burned, left = state.burned + (Placed(event.card, False),), state.burn_left - 1
        new = replace(state, shoe=shoe, burned=burned, burn_left=left, phase=Phase.BURNING if left else Phase.IDLE)
        return new, effects
    if to == "player":
        new = replace(state, shoe=shoe, player=state.player + (event.card,))
    else:
        new = replace(state, shoe=shoe, banker=state.banker + (event.card,))
    if coup_targets(new.player, new.banker) is None:
        new = replace(new, phase=Phase.SETTLING)
    return new, effects


# ---------------------------------------------------------------------------------------------------
# Settlement


def commission(rules: Rules, winnings: int) -> int:
    return rules.commission_rounding.divide(winnings * rules.commission_percent, 100)


def settle_bets(rules: Rules, bets: Bets, player: Sequence[Card], banker: Sequence[Card]) -> Settlement:
    """Every bet of a finished coup, paid or collected; each result names the paytable line."""
    p, b = baccarat_points(player), baccarat_points(banker)
    score = f"{p} to {b}" if p >= b else f"{b} to {p}"
    results = []
    for spot, box, stake in bets:
        if box == "tie":
            if p == b:
                paid = rules.tie_pays.on(stake)
                results.append(BoxResult(spot, box, stake, "win", paid, 0, stake + paid, f"tie {rules.tie_pays}"))
            else:
                results.append(BoxResult(spot, box, stake, "lose", 0, 0, 0, f"tie loses: {score}"))
        elif p == b:
            results.append(BoxResult(spot, box, stake, "push", 0, 0, stake, f"tie {score}: {box} bet pushes"))
        elif box == "player":
            if p > b:
                results.append(BoxResult(spot, box, stake, "win", stake, 0, 2 * stake, f"player 1:1, {score}"))
            else:
                results.append(BoxResult(spot, box, stake, "lose", 0, 0, 0, f"player loses {score}"))
        elif b < p:
            results.append(BoxResult(spot, box, stake, "lose", 0, 0, 0, f"banker loses {score}"))
        elif rules.no_commission and b == 6:
            paid = rules.banker_six_pays.on(stake)
            results.append(BoxResult(spot, box, stake, "win", paid, 0, stake + paid,
                                     f"banker wins on 6 pays {rules.banker_six_pays} (no commission), {score}"))
        elif rules.no_commission:
            results.append(BoxResult(spot, box, stake, "win", stake, 0, 2 * stake,
                                     f"banker 1:1 (no commission), {score}"))
        else:
            fee = commission(rules, stake)
            results.append(BoxResult(spot, box, stake, "win", stake, fee, 2 * stake - fee,
                                     f"banker 1:1 less {rules.commission_percent}% commission, {score}"))
    return Settlement(tuple(results))


# ---------------------------------------------------------------------------------------------------
# View


def _hand_json(cards: Sequence[Card]) -> dict[str, Any]:
    return {"cards": [Placed(c, True).json() for c in cards], "points": baccarat_points(cards) if cards else None}


def snapshot(state: State) -> dict[str, Any]:
    """Every coup card is face up; only the face-down burn cards are hidden (their identity stays in the
    Placed objects, which screen views blank)."""
    return {"game": "baccarat", "round": state.round, "phase": expected_next(state).phase.value,
            "stage": state.phase.value, "bets": state.bets.json(), "player": _hand_json(state.player),
            "banker": _hand_json(state.banker),
            "burned": [p.json() for p in state.burned], "shoe": state.shoe.json()}


_ROUND: Round[State] = Round(
    "baccarat", expected_next, _settle, Phase.SETTLING, new_shoe=_new_shoe,
    void=void_step((Phase.BETTING, Phase.DEALING, Phase.SETTLING), _after_round, "no round in progress to void"),
    open_bets=opens(expected_next, Phase.IDLE, Phase.BETTING),
    bets=shoe_bets(Phase.BETTING, lambda s, _: replace(s, phase=Phase.DEALING)), card=_card)
GAME = GameSpec("baccarat", "Baccarat (punto banco)", Rules, new_table, apply, expected_next, snapshot, BOXES)


def legal_bets(rules: Rules, rng: Any) -> list[Event]:
    """Bets a table might see in one round (for the property-test harness)."""
    return list(sample_bets(rules.spots, rules.limits, BOXES, rng, default="banker"))
