"""Chemin de fer: the baccarat coup between a banker and a punter who are both players, with their options,
banco and cover staking against the bank, the house's commission on winning banks, and the bank's rotation.

Rules text 000_* (its chart is lost in the copy; the standard chemin de fer chart is used and stated here):

- Staking. The banker (a spot) puts up a bank (box "bank"). A punter may call banco (box "banco": the whole
  bank, alone); among several bancos the one nearest the banker's right in rotation order plays. Without a
  banco, punters cover parts of the bank (box "cover", all covers together at most the bank) and the largest
  cover plays the hand (ties: rotation order). When bets close, stakes that do not play (other bancos, every
  cover when a banco plays) and the uncovered part of the bank go back.
- The coup. Two cards each, face down, punter first. A natural (8, 9) on either side is shown and ends the
  coup. The punter draws on 0-4, stands on 6-7 and chooses on 5 ("carte" or "non"); then the banker shows
  his cards and follows the punto banco tableau, except in the optional cells (by default banker 3 against a
  third card of 9 and banker 5 against a 4), where he chooses. Third cards are dealt face up. Variation
  (`free_choice`): banker and punter decide every draw on their own judgment.
- Money. Winners are paid 1:1 from the losing side; the house takes 5% from a winning bank at once.
- Rotation. The banker keeps the shoe while he wins or ties; when he loses, the next spot becomes banker.
  Between coups the banker (or the croupier for him) may pass the bank to the next spot.

Hidden cards: the snapshot shows both hands face down until the rules turn them over, and their points only
then (before, under "audit"). `expected_next` is for the croupier, who plays the règle for the table: it
asks the punter only when he has a choice, so it tells the croupier's screen, never a player's, that a
punter without one holds 0-4 or 6-7.
"""

from __future__ import annotations

from enum import StrEnum

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, ClassVar

from controller.cards import Card
from controller.games._round import Round, bet_steps, opens, shoe_between_rounds, void_step
from controller.games._shoe import ShoeState, check_range, deal_from_shoe
from controller.games.baccarat import MAX_COUP_CARDS, banker_draws, is_natural, player_draws
from controller.games.base import (
    BetsClosed, BoxResult, CardDealt, CardsRevealed, Decision, Effect, Effects, Event, Expected,
    GameSpec, IllegalEvent, PlaceBet, Placed, RemoveBet, RoundSettled, Rounding, RulesBase, RulesError, Settlement,
    StakeChanged, Waiting, spot_actor,
)
from controller.games.bets import Bets, Limit, check_limits
from controller.hands.points import baccarat_points

__all__ = ["GAME", "Rules", "State", "Phase", "BOXES", "BankerChanged", "new_table", "apply", "expected_next",
           "snapshot", "option_cells", "legal_bets"]

BOXES = ("bank", "banco", "cover")
PUNTER_BOXES = ("banco", "cover")
DRAW, STAND, OPTION = "draw", "stand", "option"


@dataclass(frozen=True)
class Rules(RulesBase):
    decks: int = 8                         # rules text 000_*: eight packs in the shoe
    spots: int = 8                         # usually up to eight players
    commission_percent: int = 5            # taken from a winning bank
    commission_rounding: Rounding = Rounding.UP
    punter_option_on_5: bool = True        # the punter may draw or stand on 5 (else he draws, as in punto banco)
    banker_options: tuple[str, ...] = ("3:9", "5:4")  # "banker total:punter's third card" ("-": punter stood)
    free_choice: bool = False              # variation: banker and punter draw or stand as they judge, always
    cards_behind_cut: int = 7
    limits: Mapping[str, Limit] = field(default_factory=lambda: MappingProxyType(
        {"bank": Limit(100, 100_000), "banco": Limit(100, 100_000), "cover": Limit(10, 100_000)}))

    def validate(self) -> None:
        check_range("decks", self.decks, 1, 8, " decks")
        check_range("spots", self.spots, 2, 12, " spots (a banker and at least one punter)")
        check_range("commission_percent", self.commission_percent, 0, 25)
        check_range("cards_behind_cut", self.cards_behind_cut, MAX_COUP_CARDS, self.decks * 26,
                    " (a whole coup to half the shoe)")
        option_cells(self)
        check_limits(self.limits, BOXES)


def option_cells(rules: Rules) -> frozenset[tuple[int, int | None]]:
    """The banker's optional cells as (banker total, punter's third card or None when the punter stood)."""
    cells = set()
    for text in rules.banker_options:
        total, _, third = text.partition(":")
        if not (total.isdigit() and 0 <= int(total) <= 7 and (third == "-" or (third.isdigit() and int(third) <= 9))):
            raise RulesError(f"rules.banker_options: {text!r} is not a cell like '3:9' (banker 3, punter's third "
                             "card 9) or '5:-' (banker 5, punter stood)")
        cells.add((int(total), None if third == "-" else int(third)))
    return frozenset(cells)


@dataclass(frozen=True, slots=True)
class BankerChanged(Effect):
    """The bank (and the shoe) goes to `spot`."""
    KIND: ClassVar[str] = "banker_changed"
    spot: int
    reason: str


class Phase(StrEnum):
    """Where the round stands (the values are those of the journal, the snapshots and the views)."""

    SHUFFLING = "shuffling"
    IDLE = "idle"
    BETTING = "betting"
    COUP = "coup"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: Phase = Phase.SHUFFLING
    banker: int = 1                  # the first banker sits in seat 1
    punter: int = 0                  # the spot that plays the hand this coup (0 before bets close)
    bets: Bets = Bets()
    punter_cards: tuple[Card, ...] = ()
    banker_cards: tuple[Card, ...] = ()
    punter_choice: str = ""          # "draw" or "stand" when the punter chose
    banker_choice: str = ""
    shoe: ShoeState = ShoeState()


def new_table(rules: Rules) -> State:
    return State(rules)


# ---------------------------------------------------------------------------------------------------
# The coup


def _value(card: Card) -> int:
    return baccarat_points((card,))


def _punter_rule(rules: Rules, points: int) -> str:
    if rules.free_choice or (points == 5 and rules.punter_option_on_5):
        return OPTION
    return DRAW if player_draws(points) else STAND


def _banker_rule(rules: Rules, points: int, third: int | None) -> str:
    if rules.free_choice or (points, third) in option_cells(rules):
        return OPTION
    return DRAW if banker_draws(points, third) else STAND


def _natural(state: State) -> bool:
    return len(state.punter_cards) + len(state.banker_cards) >= 4 and (
        is_natural(baccarat_points(state.punter_cards[:2])) or is_natural(baccarat_points(state.banker_cards[:2])))


def _punter_done(state: State) -> bool:
    if len(state.punter_cards) == 3 or state.punter_choice == STAND or _natural(state):
        return True
    return _punter_rule(state.rules, baccarat_points(state.punter_cards[:2])) == STAND


def _step(state: State) -> tuple[str, str] | None:
    """The coup's next step: ("card", "punter"|"banker"), ("decide", "punter"|"banker"), or None when complete."""
    n_punter, n_banker = len(state.punter_cards), len(state.banker_cards)
    if n_punter + n_banker < 4:
        return ("card", "punter" if n_punter == n_banker else "banker")
    if _natural(state):
        return None
    r = state.rules
    if not _punter_done(state):
        rule = _punter_rule(r, baccarat_points(state.punter_cards[:2]))
        if rule == OPTION and not state.punter_choice:
            return ("decide", "punter")
        return ("card", "punter")
    if n_banker == 3 or state.banker_choice == STAND:
        return None
    third = _value(state.punter_cards[2]) if n_punter == 3 else None
    rule = _banker_rule(r, baccarat_points(state.banker_cards), third)
    if rule == OPTION and not state.banker_choice:
        return ("decide", "banker")
    if rule == STAND and not state.banker_choice:
        return None
    return ("card", "banker")


def _shown(state: State) -> tuple[bool, bool]:
    """(punter's two cards shown, banker's two cards shown): a natural shows both; the banker turns his over
    when the punter has finished; the punter's come up when the coup is over."""
    if len(state.punter_cards) + len(state.banker_cards) < 4:
        return False, False
    if _natural(state) or state.phase is Phase.SETTLING:
        return True, True
    return False, _punter_done(state)


def expected_next(state: State) -> Expected:
    r = state.rules
    if state.phase is Phase.SHUFFLING:
        return Expected(Waiting.SHUFFLING, f"load a new shoe of {r.decks} decks", actions=("new_shoe",))
    if state.phase is Phase.IDLE:
        return Expected(Waiting.IDLE, f"banker is spot {state.banker}: open bets (or the banker passes the bank)",
                        actor=spot_actor(state.banker), actions=("open_bets", "pass", "new_shoe"))
    if state.phase is Phase.BETTING:
        return Expected(Waiting.BETTING, f"banker (spot {state.banker}) puts up the bank; punters call banco or cover",
                        actions=("place_bet", "remove_bet", "close_bets"))
    if state.phase is Phase.SETTLING:
        return Expected(Waiting.SETTLING, "settle the coup", actions=("settle",))
    step = _step(state)
    assert step is not None
    kind, who = step
    spot = state.punter if who == "punter" else state.banker
    if kind == "card":
        n = len(state.punter_cards) + len(state.banker_cards)
        up = n >= 4
        return Expected(Waiting.DEALING, f"card to the {who} (spot {spot}), face {'up' if up else 'down'}", card_to=who,
                        face_up=up)
    if who == "punter":
        return Expected(Waiting.DECIDING, f"punter (spot {spot}): carte or non (draw or stand)", actor=spot_actor(spot),
                        actions=(DRAW, STAND))
    third = (f"a third card of {_value(state.punter_cards[2])}" if len(state.punter_cards) == 3
             else "a punter who stood")
    return Expected(
        Waiting.DECIDING, f"banker (spot {spot}) with {baccarat_points(state.banker_cards)} against {third}: "
        "draw or stand", actor=spot_actor(spot), actions=(DRAW, STAND))


# ---------------------------------------------------------------------------------------------------
# Events


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _next_spot(rules: Rules, spot: int) -> int:
    return spot % rules.spots + 1


def _priority(state: State) -> list[int]:
    """Punters in the order they may claim the hand: from the banker's right, round the table."""
    order, spot = [], state.banker
    for _ in range(state.rules.spots - 1):
        spot = _next_spot(state.rules, spot)
        order.append(spot)
    return order


def _between_coups(state: State, banker: int) -> State:
    phase = Phase.SHUFFLING if state.shoe.cut_reached else Phase.IDLE
    return State(state.rules, state.round, phase, banker, shoe=state.shoe)


def _covers(bets: Bets) -> int:
    return sum(a for _, b, a in bets if b == "cover")


def _bancos(bets: Bets) -> list[int]:
    return [s for s, b, _ in bets if b == "banco"]


def _check_betting(state: State, event: PlaceBet | RemoveBet) -> None:
    if state.phase is not Phase.BETTING:
        raise IllegalEvent("bets are not open")
    if event.box == "bank" and event.spot != state.banker:
        raise IllegalEvent(f"only the banker (spot {state.banker}) puts up the bank")
    if event.box in PUNTER_BOXES and event.spot == state.banker:
        raise IllegalEvent("the banker cannot punt against his own bank")


def _place(state: State, event: PlaceBet) -> tuple[State, Effects]:
    _check_betting(state, event)
    bank, bets = state.bets.get(state.banker, "bank"), state.bets
    if event.box == "bank" and _bancos(bets):
        raise IllegalEvent(f"spot {_bancos(bets)[0]} has called banco: the bank cannot change now")
    if event.box in PUNTER_BOXES:
        if not bank:
            raise IllegalEvent(f"the banker (spot {state.banker}) has not put up a bank yet")
        other = "cover" if event.box == "banco" else "banco"
        if bets.get(event.spot, other):
            raise IllegalEvent(f"spot {event.spot} already has a {other}: take it back first")
    if event.box == "banco" and (bets.get(event.spot, "banco") or event.amount != bank):
        raise IllegalEvent(f"banco is a call for the whole bank of {bank}, once")
    if event.box == "cover" and isinstance(event.amount, int) and _covers(bets) + event.amount > bank:
        raise IllegalEvent(f"the bank of {bank} has {bank - _covers(bets)} left to cover, not {event.amount}")
    new, eff = bets.place(event, state.rules.spots, state.rules.limits)
    return replace(state, bets=new), (eff,)


def _remove(state: State, event: RemoveBet) -> tuple[State, Effects]:
    _check_betting(state, event)
    bets = state.bets
    if event.box == "bank":
        if _bancos(bets):
            raise IllegalEvent(f"spot {_bancos(bets)[0]} has called banco: the bank cannot change now")
        if isinstance(event.amount, int) and bets.get(state.banker, "bank") - event.amount < _covers(bets):
            raise IllegalEvent(f"the bank cannot go under the {_covers(bets)} already covered")
    if event.box == "banco" and event.amount != bets.get(event.spot, "banco"):
        raise IllegalEvent("a banco is withdrawn whole")
    new, eff = bets.remove(event, state.rules.spots, state.rules.limits)
    return replace(state, bets=new), (eff,)


def _close(state: State) -> tuple[State, Effects]:
    if state.phase is not Phase.BETTING:
        raise IllegalEvent("bets are not open")
    bets = state.bets
    bank = bets.get(state.banker, "bank")
    if not bank:
        raise IllegalEvent(f"the banker (spot {state.banker}) has not put up a bank")
    if not any(b in PUNTER_BOXES for _, b, _ in bets):
        raise IllegalEvent("no punter has called banco or covered the bank")
    bets.check_minimums(state.rules.limits)
    order = _priority(state)
    bancos = _bancos(bets)
    if bancos:
        punter = min(bancos, key=order.index)
        keep = {(state.banker, "bank"), (punter, "banco")}
    else:
        covers = [(s, a) for s, b, a in bets if b == "cover"]
        punter = max(covers, key=lambda sa: (sa[1], -order.index(sa[0])))[0]
        keep = {(s, b) for s, b, _ in bets}
    effects: list[Effect] = []
    for s, b, a in bets:
        if (s, b) not in keep:
            bets = bets.with_amount(s, b, 0)
            effects.append(StakeChanged(s, b, 0, -a))
    covered = sum(a for _, b, a in bets if b in PUNTER_BOXES)
    if covered < bank:  # the reliquat: the part of the bank nobody covered is not at risk
        bets = bets.with_amount(state.banker, "bank", covered)
        effects.append(StakeChanged(state.banker, "bank", covered, covered - bank))
    effects.append(BetsClosed(state.round))
    return replace(state, phase=Phase.COUP, bets=bets, punter=punter), tuple(effects)


def _reveals(before: State, after: State) -> Effects:
    (p0, b0), (p1, b1) = _shown(before), _shown(after)
    out: list[Effect] = []
    if b1 and not b0:
        out.append(CardsRevealed("banker", after.banker_cards[:2]))
    if p1 and not p0:
        out.append(CardsRevealed("punter", after.punter_cards[:2]))
    return tuple(out)


def _advance(before: State, after: State) -> tuple[State, Effects]:
    if _step(after) is None:
        after = replace(after, phase=Phase.SETTLING)
    return after, _reveals(before, after)


def _card(state: State, event: CardDealt) -> tuple[State, Effects]:
    to, shoe, placed = deal_from_shoe(state.shoe, expected_next(state), event)
    if to == "punter":
        new = replace(state, shoe=shoe, punter_cards=state.punter_cards + (event.card,))
    else:
        new = replace(state, shoe=shoe, banker_cards=state.banker_cards + (event.card,))
    new, reveals = _advance(state, new)
    return new, placed + reveals


def _decide(state: State, event: Decision) -> tuple[State, Effects]:
    if state.phase is Phase.IDLE and event.action == "pass":
        if event.actor not in ("dealer", spot_actor(state.banker)):
            raise IllegalEvent(f"only the banker (spot {state.banker}) or the croupier passes the bank")
        nxt = _next_spot(state.rules, state.banker)
        return replace(state, banker=nxt), (BankerChanged(nxt, f"spot {state.banker} passed the bank"),)
    exp = expected_next(state)
    if exp.phase is not Waiting.DECIDING:
        raise IllegalEvent(f"no decision expected now: {exp.text}")
    if event.actor != exp.actor:
        raise IllegalEvent(f"the decision is for {exp.actor}, not {event.actor}")
    if event.action not in exp.actions or event.amount or event.hand:
        raise IllegalEvent(f"{exp.actor} may only draw or stand here (no amount, no hand)")
    if exp.actor == spot_actor(state.punter) and _step(state) == ("decide", "punter"):
        new = replace(state, punter_choice=event.action)
    else:
        new = replace(state, banker_choice=event.action)
    return _advance(state, new)


def _settle(state: State) -> tuple[State, Effects]:
    if state.phase is not Phase.SETTLING:
        raise IllegalEvent(f"cannot settle now: {expected_next(state).text}")
    r = state.rules
    p, b = baccarat_points(state.punter_cards), baccarat_points(state.banker_cards)
    score = f"banker {b}, punter {p}"
    results = []
    for spot, box, stake in state.bets:
        if p == b:
            results.append(BoxResult(spot, box, stake, "push", 0, 0, stake, f"égalité: stand-off, {score}"))
        elif (box == "bank") == (b > p):
            if box == "bank":
                fee = r.commission_rounding.divide(stake * r.commission_percent, 100)
                results.append(BoxResult(spot, box, stake, "win", stake, fee, 2 * stake - fee,
                                         f"bank wins 1:1 less {r.commission_percent}% commission, {score}"))
            else:
                results.append(BoxResult(spot, box, stake, "win", stake, 0, 2 * stake, f"punto 1:1, {score}"))
        else:
            results.append(BoxResult(spot, box, stake, "lose", 0, 0, 0, f"{box} loses, {score}"))
    effects: list[Effect] = [RoundSettled(state.round, Settlement(tuple(results)))]
    banker = state.banker
    if p > b:
        banker = _next_spot(r, banker)
        effects.append(BankerChanged(banker, f"the bank lost the coup {p} to {b}"))
    return _between_coups(state, banker), tuple(effects)


# ---------------------------------------------------------------------------------------------------
# View


def _side_json(cards: tuple[Card, ...], shown: bool) -> dict[str, Any]:
    return {"cards": [Placed(c, shown or i >= 2).json() for i, c in enumerate(cards)],
            "points": baccarat_points(cards) if shown and cards else None}


def snapshot(state: State) -> dict[str, Any]:
    """The two hands are face down until the rules show them; their points then, never before (audit only)."""
    punter_shown, banker_shown = _shown(state)
    snap: dict[str, Any] = {
        "game": "chemin-de-fer", "round": state.round, "phase": expected_next(state).phase.value,
        "stage": state.phase.value, "bets": state.bets.json(), "banker": state.banker, "punter": state.punter or None,
        "banker_hand": _side_json(state.banker_cards, banker_shown),
        "punter_hand": _side_json(state.punter_cards, punter_shown),
        "shoe": state.shoe.json(),
        "audit": {"punter_points": baccarat_points(state.punter_cards) if state.punter_cards else None,
                  "banker_points": baccarat_points(state.banker_cards) if state.banker_cards else None},
    }
    return snap


_ROUND: Round[State] = Round(
    "chemin de fer", expected_next, _settle, None,
    new_shoe=shoe_between_rounds((Phase.SHUFFLING, Phase.IDLE), Phase.IDLE,
                                 "a new shoe goes in between coups, not during one", min_behind=MAX_COUP_CARDS),
    void=void_step((Phase.BETTING, Phase.COUP, Phase.SETTLING), lambda s: _between_coups(s, s.banker),
                   "no coup in progress to void"),
    open_bets=opens(expected_next, Phase.IDLE, Phase.BETTING), bets=bet_steps(_place, _remove, _close), card=_card,
    decision=_decide)
GAME = GameSpec("chemin-de-fer", "Chemin de fer", Rules, new_table, apply, expected_next, snapshot, BOXES)


def legal_bets(state: State, rng: Any) -> list[Event]:
    """Bets a table might see in one coup, given who holds the bank (for the property-test harness)."""
    r = state.rules
    lim = r.limits
    bank = lim["bank"].min + rng.randbelow(20) * 50
    bets: list[Event] = [PlaceBet(state.banker, "bank", bank)]
    punters = [s for s in range(1, r.spots + 1) if s != state.banker]
    bancos = {s for s in punters if rng.randbelow(8) == 0}
    bets += [PlaceBet(s, "banco", bank) for s in sorted(bancos)]
    left = bank
    for spot in punters:
        if spot not in bancos and left >= lim["cover"].min and rng.randbelow(2) == 0:
            amount = lim["cover"].min + rng.randbelow(left - lim["cover"].min + 1)
            bets.append(PlaceBet(spot, "cover", amount))
            left -= amount
    if len(bets) == 1:
        bets.append(PlaceBet(punters[0], "cover", min(bank, lim["cover"].min)))
    return bets
