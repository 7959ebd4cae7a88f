"""Trente et quarante (rouge et noir): the noir and rouge rows dealt to 31-40 from a six-deck shoe, the four even-money
bets, the refait and the refait de trente et un (the house takes half, or the bet goes en prison).

Rules text 000_* ("Trente et Quarante"), with the standard casino rules where the copy is loose:

- Cards count their pips, aces 1, tens and faces 10. The croupier deals the first row, noir, announcing the
  running total, until it reaches 31 or more; then the second row, rouge, the same way. Every card is face up.
- Rouge or noir wins when its row is nearer 31 (the lower total). Couleur wins when the first card of the noir
  row has the colour of the winning row, inverse when it has the other colour (the copy's "first card dealt in a
  rouge or noir row is of the color designating that row" is this standard rule, garbled). All pay 1:1.
- Equal totals are a refait: a stand-off, every bet pushes. Equal totals of 31 (refait de trente et un) cost every
  bet half (the odd credit of an odd stake goes to the house, as a commission would); with `en_prison` each spot
  instead chooses, for its bets of the coup, to give up half or to put them en prison: a bet en prison stays on
  the layout and is released whole if its side wins the next decided coup, lost if it loses; a plain refait keeps
  it en prison and a second refait de trente et un takes it (the one-level prison of the French tables).
- The shoe: six decks, a cut card `cards_behind_cut` from the end; the coup that brings it out is the last. If
  the shoe runs out in the middle of a coup the discards are reshuffled (a `NewShoe`; the rows stay on the table).
"""

from __future__ import annotations

from enum import StrEnum

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Sequence

from controller.cards import ACE, TEN, Card
from controller.games._round import Round, bet_steps, opens, void_step
from controller.games._shoe import ShoeState, check_decision, check_range, deal_from_shoe, load_shoe
from controller.games.base import (
    BetsClosed, BoxResult, CardDealt, Decision, Effect, Effects, Event, Expected, GameSpec,
    IllegalEvent, NewShoe, PlaceBet, Placed, RemoveBet, RoundSettled, Rounding, RulesBase, Settlement, StakeChanged,
    Waiting, spot_actor,
)
from controller.games.bets import Bets, Limit, check_limits, sample_bets

__all__ = ["GAME", "Rules", "State", "Phase", "BOXES", "new_table", "apply", "expected_next", "snapshot", "pips",
           "row_total", "coup_result", "CoupResult", "legal_bets", "HALF", "PRISON"]

BOXES = ("rouge", "noir", "couleur", "inverse")
TARGET = 31                         # a row is complete at 31 or more (at most 40)
HALF, PRISON = "half", "prison"     # the choices after a refait de trente et un (with `en_prison`)
_PRISON_BOX = "prison:"             # a bet en prison sits in box "prison:rouge", ...


@dataclass(frozen=True)
class Rules(RulesBase):
    decks: int = 6
    spots: int = 12
    en_prison: bool = False             # after a 31 refait a spot may put its bets en prison instead of losing half
    half_rounding: Rounding = Rounding.UP  # the house's half of an odd stake: the odd credit goes to the house
    cards_behind_cut: int = 26             # half a deck behind the cut card
    limits: Mapping[str, Limit] = field(default_factory=lambda: MappingProxyType(
        {box: Limit(10, 10_000) for box in BOXES}))

    def validate(self) -> None:
        check_range("decks", self.decks, 1, 8, " decks")
        check_range("spots", self.spots, 1, 30, " spots")
        check_range("cards_behind_cut", self.cards_behind_cut, 1, self.decks * 26, " (up to half the shoe)")
        check_limits(self.limits, BOXES)


def pips(card: Card) -> int:
    """A card's count: ace 1, tens and faces 10, the others their rank."""
    if card.rank == ACE:
        return 1
    return min(card.rank, TEN)


def row_total(cards: Sequence[Card]) -> int:
    return sum(pips(c) for c in cards)


@dataclass(frozen=True, slots=True)
class CoupResult:
    noir: int
    rouge: int
    first_red: bool                     # the colour of the first card of the noir row

    @property
    def winner(self) -> str | None:
        """'noir', 'rouge', or None for a refait."""
        if self.noir == self.rouge:
            return None
        return "noir" if self.noir < self.rouge else "rouge"

    @property
    def refait_31(self) -> bool:
        return self.noir == self.rouge == TARGET

    def wins(self, box: str) -> bool:
        """Does `box` win this (decided) coup?"""
        winner = self.winner
        if box in ("noir", "rouge"):
            return box == winner
        same = self.first_red == (winner == "rouge")
        return same if box == "couleur" else not same

    def text(self) -> str:
        winner = self.winner
        if winner is None:
            return "refait de trente et un" if self.refait_31 else f"refait at {self.noir}"
        colour = "couleur" if self.wins("couleur") else "inverse"
        return f"{winner} and {colour} win, noir {self.noir} rouge {self.rouge}"


def coup_result(noir: Sequence[Card], rouge: Sequence[Card]) -> CoupResult:
    assert noir[0].suit is not None
    return CoupResult(row_total(noir), row_total(rouge), noir[0].suit.is_red)


# ---------------------------------------------------------------------------------------------------
# State


class Phase(StrEnum):
    """Where the round stands (the values are those of the journal, the snapshots and the views)."""

    SHUFFLING = "shuffling"
    IDLE = "idle"
    BETTING = "betting"
    DEALING = "dealing"
    DECIDING = "deciding"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: Phase = Phase.SHUFFLING
    bets: Bets = Bets()         # the bets of this coup
    prison: Bets = Bets()       # bets en prison from earlier coups (boxes "prison:rouge", ...)
    noir: tuple[Card, ...] = ()
    rouge: tuple[Card, ...] = ()
    choices: tuple[tuple[int, str], ...] = ()   # (spot, HALF or PRISON) after a 31 refait
    shoe: ShoeState = ShoeState()


def new_table(rules: Rules) -> State:
    return State(rules)


def _row_to_deal(state: State) -> str | None:
    if row_total(state.noir) < TARGET:
        return "noir"
    if row_total(state.rouge) < TARGET:
        return "rouge"
    return None


def _choosing(state: State) -> list[int]:
    """Spots still to choose half or prison after a 31 refait, in order."""
    chosen = {s for s, _ in state.choices}
    return [s for s in state.bets.spots() if s not in chosen]


def expected_next(state: State) -> Expected:
    r = state.rules
    if state.phase is Phase.SHUFFLING:
        return Expected(Waiting.SHUFFLING, f"load a new shoe of {r.decks} decks", actions=("new_shoe",))
    if state.phase is Phase.IDLE:
        return Expected(Waiting.IDLE, "open bets", actions=("open_bets", "new_shoe"))
    if state.phase is Phase.BETTING:
        held = f" ({state.prison.total} en prison)" if state.prison else ""
        return Expected(Waiting.BETTING, f"faites vos jeux: rouge, noir, couleur, inverse{held}",
                        actions=("place_bet", "remove_bet", "close_bets"))
    if state.phase is Phase.DEALING:
        if state.shoe.remaining == 0:
            return Expected(Waiting.SHUFFLING, "the shoe is empty: reshuffle the discards (new shoe), then deal on",
                            actions=("new_shoe",))
        row = _row_to_deal(state)
        total = row_total(state.noir if row == "noir" else state.rouge)
        return Expected(Waiting.DEALING, f"card to the {row} row ({row} {total}), face up", card_to=row, face_up=True)
    if state.phase is Phase.DECIDING:
        spot = _choosing(state)[0]
        return Expected(Waiting.DECIDING, f"refait de trente et un: spot {spot} gives up half or goes en prison",
                        actor=spot_actor(spot), actions=(HALF, PRISON))
    return Expected(Waiting.SETTLING, coup_result(state.noir, state.rouge).text() + ": settle", actions=("settle",))


# ---------------------------------------------------------------------------------------------------
# Events


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _bet(state: State, event: PlaceBet | RemoveBet) -> tuple[State, Effects]:
    if state.phase is not Phase.BETTING:
        raise IllegalEvent("bets are not open")
    if event.box.startswith(_PRISON_BOX):
        raise IllegalEvent("a bet en prison stays until a coup decides it")
    bets, changed = (state.bets.place if isinstance(event, PlaceBet) else state.bets.remove)(
        event, state.rules.spots, state.rules.limits)  # type: ignore[arg-type]
    return replace(state, bets=bets), (changed,)


def _close(state: State) -> tuple[State, Effects]:
    if state.phase is not Phase.BETTING:
        raise IllegalEvent("bets are not open")
    if not state.bets and not state.prison:
        raise IllegalEvent("no bets on the table")
    state.bets.check_minimums(state.rules.limits)
    return replace(state, phase=Phase.DEALING), (BetsClosed(state.round),)


def _settle(state: State) -> tuple[State, Effects]:
    settlement, prison, moves = settle_coup(state)
    return _after_coup(state, prison), moves + (RoundSettled(state.round, settlement),)


def _after_coup(state: State, prison: Bets) -> State:
    return State(state.rules, state.round, Phase.SHUFFLING if state.shoe.cut_reached else Phase.IDLE, prison=prison,
                 shoe=state.shoe)


def _new_shoe(state: State, event: NewShoe) -> tuple[State, Effects]:
    r = state.rules
    if state.phase in (Phase.SHUFFLING, Phase.IDLE):
        return replace(state, phase=Phase.IDLE, shoe=load_shoe(event, r.decks, r.cards_behind_cut)), ()
    if state.phase is Phase.DEALING and state.shoe.remaining == 0:
        shoe = load_shoe(event, r.decks, r.cards_behind_cut, on_table=state.noir + state.rouge)
        return replace(state, shoe=shoe), ()
    raise IllegalEvent("a new shoe goes in between coups (or when the shoe runs out in the middle of one)")


def _card(state: State, event: CardDealt) -> tuple[State, Effects]:
    row, shoe, placed = deal_from_shoe(state.shoe, expected_next(state), event)
    if row == "noir":
        new = replace(state, shoe=shoe, noir=state.noir + (event.card,))
    else:
        new = replace(state, shoe=shoe, rouge=state.rouge + (event.card,))
    if _row_to_deal(new) is None:
        result = coup_result(new.noir, new.rouge)
        choose = result.refait_31 and state.rules.en_prison and bool(new.bets)
        new = replace(new, phase=Phase.DECIDING if choose else Phase.SETTLING)
    return new, placed


def _decide(state: State, event: Decision) -> tuple[State, Effects]:
    check_decision(expected_next(state), event)
    new = replace(state, choices=state.choices + ((_choosing(state)[0], event.action),))
    if not _choosing(new):
        new = replace(new, phase=Phase.SETTLING)
    return new, ()


# ---------------------------------------------------------------------------------------------------
# Settlement


def settle_coup(state: State) -> tuple[Settlement, Bets, Effects]:
    """The finished coup's settlement, the bets en prison after it, and the moves of bets into prison."""
    r = state.rules
    result = coup_result(state.noir, state.rouge)
    winner = result.winner
    chose = dict(state.choices)
    results: list[BoxResult] = []
    prison = Bets()
    moves: list[Effect] = []
    for spot, box, stake in state.bets:
        if result.refait_31:
            if chose.get(spot) == PRISON:
                prison = prison.with_amount(spot, _PRISON_BOX + box, stake)
                moves += [StakeChanged(spot, box, 0, -stake), StakeChanged(spot, _PRISON_BOX + box, stake, stake)]
                continue
            take = r.half_rounding.divide(stake, 2)
            results.append(BoxResult(spot, box, stake, "half", 0, 0, stake - take,
                                     "refait de trente et un: the house takes half"))
        elif winner is None:
            results.append(BoxResult(spot, box, stake, "push", 0, 0, stake, f"refait at {result.noir}: stand-off"))
        elif result.wins(box):
            results.append(BoxResult(spot, box, stake, "win", stake, 0, 2 * stake, f"{box} 1:1, {result.text()}"))
        else:
            results.append(BoxResult(spot, box, stake, "lose", 0, 0, 0, f"{box} loses, {result.text()}"))
    for spot, held, stake in state.prison:
        box = held[len(_PRISON_BOX):]
        if result.refait_31:
            results.append(BoxResult(spot, held, stake, "lose", 0, 0, 0,
                                     "en prison: a second refait de trente et un takes the bet"))
        elif winner is None:
            prison = prison.with_amount(spot, held, stake)   # a plain refait: still en prison
        elif result.wins(box):
            results.append(BoxResult(spot, held, stake, "released", 0, 0, stake,
                                     f"en prison: {box} wins, the bet is released, {result.text()}"))
        else:
            results.append(BoxResult(spot, held, stake, "lose", 0, 0, 0, f"en prison: {box} loses, {result.text()}"))
    settlement = Settlement(tuple(results), carried_in=state.prison.total, carried_out=prison.total)
    return settlement, prison, tuple(moves)


# ---------------------------------------------------------------------------------------------------
# View


def _row_json(cards: Sequence[Card]) -> dict[str, Any]:
    return {"cards": [Placed(c, True).json() for c in cards], "total": row_total(cards) if cards else None}


def snapshot(state: State) -> dict[str, Any]:
    """Every card is face up: the rows, their announced totals, the bets of the coup and those en prison."""
    done = state.phase in (Phase.DECIDING, Phase.SETTLING)
    return {"game": "trente-et-quarante", "round": state.round, "phase": expected_next(state).phase.value,
            "stage": state.phase.value, "bets": state.bets.json() + state.prison.json(),
            "noir": _row_json(state.noir), "rouge": _row_json(state.rouge),
            "en_prison": state.prison.json(), "choices": [{"spot": s, "choice": c} for s, c in state.choices],
            "result": coup_result(state.noir, state.rouge).text() if done else None, "shoe": state.shoe.json()}


_ROUND: Round[State] = Round(
    "trente et quarante", expected_next, _settle, Phase.SETTLING, new_shoe=_new_shoe,
    void=void_step((Phase.BETTING, Phase.DEALING, Phase.DECIDING, Phase.SETTLING), lambda s: _after_coup(s, s.prison),
                   "no coup in progress to void"),
    open_bets=opens(expected_next, Phase.IDLE, Phase.BETTING), bets=bet_steps(_bet, _bet, _close), card=_card,
    decision=_decide)
GAME = GameSpec("trente-et-quarante", "Trente et quarante", Rules, new_table, apply, expected_next, snapshot, BOXES)


def legal_bets(rules: Rules, rng: Any) -> list[Event]:
    """Bets a table might see in one coup (for the property-test harness)."""
    return list(sample_bets(rules.spots, rules.limits, BOXES, rng))
