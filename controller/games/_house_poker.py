"""The round shared by the house-banked poker games (three card poker, let it ride, caribbean stud): bets, the deal, decisions, reveals, voids; pai gow uses its betting and dealing steps, pusoy and big two its `own_round`.

Each game module keeps its own flow readable in its `apply` and calls these helpers for the parts that
are the same everywhere: one deck per round, hands dealt one card at a time around the table or whole
hand by hand, every player deciding once per decision stage, face-down cards turned up only when the
rules say so.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import Field, dataclass, replace
from typing import Any, Callable, ClassVar, Mapping, Protocol, Sequence, TypeVar

from controller.cards import Card
from controller.games._round import Phased, Round, Step
from controller.games.base import (
    BetsClosed, BetsOpened, BoxResult, CardDealt, CardPlaced, CardsRevealed, CloseBets, Decision, Effect, Effects,
    Event, Expected, IllegalEvent, OpenBets, PlaceBet, Placed, RemoveBet, RoundSettled, RoundVoided, RulesError,
    Settlement, StakeChanged, VoidRound, Waiting, parse_spot_actor, spot_actor,
)
from controller.games.bets import Bets, Limit

__all__ = ["Deal", "State", "Phase", "Phases", "HOUSE", "DealPlan", "deal_plan", "betting", "betting_steps",
           "accept_card", "deal_then", "place_card", "reveal", "take_decision", "raise_or_fold", "set_stake",
           "house_round", "own_round", "showdown", "settle_round", "against_dealer", "expect", "snapshot_of",
           "showdown_snapshot", "check_spots", "check_paytable"]


class Deal(enum.Enum):
    """The order cards come out of the shoe or shuffler."""

    ROUNDS = "rounds"  # one card at a time to each hand in turn, spots in order, then the dealer (the seeds)
    HANDS = "hands"    # each hand whole before the next, as a hand-forming shuffler delivers them


DealPlan = tuple[tuple[str, bool], ...]  # (where the card goes, face up) for every card of the round, in order


def deal_plan(hands: Sequence[tuple[str, tuple[bool, ...]]], mode: Deal) -> DealPlan:
    """The order of a round's cards from its hands: (position, face up of each card) in table order."""
    if mode is Deal.HANDS:
        return tuple((to, up) for to, ups in hands for up in ups)
    longest = max(len(ups) for _, ups in hands)
    return tuple((to, ups[i]) for i in range(longest) for to, ups in hands if i < len(ups))


class Phase(enum.StrEnum):
    """Where a house-banked poker game's round stands (the values are those of the journal, the snapshots and the
    views)."""

    IDLE = "idle"
    BETTING = "betting"
    DEALING = "dealing"
    DECIDING = "deciding"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    """A table between events. `cards` keeps every card of the round in deal order with where it went."""

    rules: Any
    round: int = 0
    phase: Phase = Phase.IDLE
    bets: Bets = Bets()
    cards: tuple[tuple[str, Placed], ...] = ()
    stage: int = 0                               # the decision stage (let it ride has two)
    decisions: tuple[tuple[int, int, str], ...] = ()  # (stage, spot, action) in the order made

    def positions(self) -> tuple[str, ...]:
        """Where cards lie this round, in the order each first received one."""
        return tuple(dict.fromkeys(where for where, _ in self.cards))

    def placed(self, to: str) -> tuple[Placed, ...]:
        return tuple(p for where, p in self.cards if where == to)

    def hand(self, to: str) -> tuple[Card, ...]:
        return tuple(p.card for where, p in self.cards if where == to)

    def decision(self, spot: int, stage: int | None = None) -> str | None:
        """The action `spot` took at `stage` (default: the current stage), or None."""
        stage = self.stage if stage is None else stage
        for st, s, action in self.decisions:
            if st == stage and s == spot:
                return action
        return None


Place = Callable[[Bets, PlaceBet | RemoveBet], tuple[Bets, Effects]]
T = TypeVar("T")


class Dealt(Protocol):
    """What the dealing helpers need of a game's state: a frozen dataclass with `phase` and `cards` (as State)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def phase(self) -> enum.StrEnum: ...

    @property
    def cards(self) -> tuple[tuple[str, Placed], ...]: ...


DT = TypeVar("DT", bound=Dealt)
PS = TypeVar("PS", bound=Phased)


@dataclass(frozen=True)
class Phases:
    """The members of a game's own Phase that the shared betting and dealing steps compare with: a game whose
    state is not this module's State hands over its own."""

    idle: enum.StrEnum
    betting: enum.StrEnum
    dealing: enum.StrEnum   # the phase bets close into (`betting`), and cards are dealt in (`accept_card`)


HOUSE = Phases(Phase.IDLE, Phase.BETTING, Phase.DEALING)


def betting(state: T, event: Event, spots: int, limits: Mapping[str, Limit],
            place: Place | None = None, idle: Callable[[T], T] | None = None,
            phases: Phases = HOUSE) -> tuple[T, Effects] | None:
    """Handle the events every game treats alike (void, open, place/remove, close); None for any other event.

    `place` replaces the plain one-box placement (let it ride puts one bet on all three circles). Any game
    whose state has `rules`, `round`, `phase` (its `phases`) and `bets` may use it: `idle(state)`
    gives its table between rounds after a void (default: this module's fresh State).
    """
    s: Any = state
    if isinstance(event, VoidRound):
        if s.phase is phases.idle:
            raise IllegalEvent("no round to void")
        effects: list[Effect] = [StakeChanged(spot, b, 0, -a) for spot, b, a in s.bets]
        effects.append(RoundVoided(s.round, event.reason, s.bets.total))
        return (idle(state) if idle else State(s.rules, s.round)), tuple(effects)  # type: ignore[return-value]
    if isinstance(event, OpenBets):
        if s.phase is not phases.idle:
            raise IllegalEvent(f"a round is already in progress ({expect_text(s)})")
        return replace(s, round=s.round + 1, phase=phases.betting), (BetsOpened(s.round + 1),)
    if isinstance(event, (PlaceBet, RemoveBet)):
        if s.phase is not phases.betting:
            raise IllegalEvent("bets are not open")
        if place is not None:
            bets, placed = place(s.bets, event)
            return replace(s, bets=bets), placed
        op = s.bets.place if isinstance(event, PlaceBet) else s.bets.remove
        bets, eff = op(event, spots, limits)
        return replace(s, bets=bets), (eff,)
    if isinstance(event, CloseBets):
        if s.phase is not phases.betting:
            raise IllegalEvent("bets are not open")
        if not s.bets:
            raise IllegalEvent("no bets on the table")
        s.bets.check_minimums(limits)
        return replace(s, phase=phases.dealing), (BetsClosed(s.round),)
    return None


def betting_steps(phases: Phases, idle: Callable[[T], T] | None = None, check: Callable[[T, Event], None] | None = None,
                  place: Callable[[T], Place] | None = None) -> Callable[[T, Event], tuple[T, Effects]]:
    """The void, open-bets and bets steps of a game's round (`Round`) as `betting` takes them, for a state with
    `rules.spots` and `rules.limits`; `check(state, event)` refuses first, `place(state)` gives `betting`'s place."""
    def step(state: T, event: Event) -> tuple[T, Effects]:
        if check is not None:
            check(state, event)
        r: Any = getattr(state, "rules")
        done = betting(state, event, r.spots, r.limits, place(state) if place else None, idle, phases)
        assert done is not None, "a betting step is handed only void, open, place, remove and close"
        return done
    return step


def house_round(expected_next: Callable[[State], Expected], settle: Callable[[State], Settlement],
                card: Step[State, CardDealt], decision: Step[State, Decision],
                place: Callable[[State], Place] | None = None) -> Round[State]:
    """The round of a house-banked poker game on this module's State: `betting`'s void, open, bets and close, then
    the game's card and decision steps, and `settle_round` with its `settle`."""
    steps = betting_steps(HOUSE, place=place)
    return Round("this game", expected_next, lambda state: settle_round(state, settle), None, void=steps,
                 open_bets=steps, bets=steps, card=card, decision=decision)


def own_round(game: str, expected_next: Callable[[PS], Expected], phases: Phases, settling: enum.StrEnum,
              fresh: Callable[[PS], PS], settle: Callable[[PS], tuple[Effects, Settlement]], card: Step[PS, CardDealt],
              decision: Step[PS, Decision], check: Callable[[PS, Event], None] | None = None) -> Round[PS]:
    """The round of a one-deck game with a Phase and State of its own (pusoy, big two): `betting_steps`' void, open
    and bets, the game's card and decision steps, and in phase `settling` the Settle that emits `settle`'s effects
    and then the settlement. After a void or a settle the table is `fresh(state)`."""
    def settle_step(state: PS) -> tuple[PS, Effects]:
        more, settlement = settle(state)
        return fresh(state), (*more, RoundSettled(state.round, settlement))
    steps = betting_steps(phases, fresh, check)
    return Round(game, expected_next, settle_step, settling, void=steps, open_bets=steps, bets=steps, card=card,
                 decision=decision)


def expect_text(state: Dealt) -> str:
    # Keyed by the phase's value, not a member: the dealing helpers serve games with Phases of their own.
    return {"idle": "no round in progress", "betting": "bets are open", "dealing": "dealing",
            "deciding": "waiting for decisions", "settling": "waiting to settle"}.get(state.phase, state.phase)


def accept_card(state: DT, event: CardDealt, plan: DealPlan, joker: bool = False,
                phases: Phases = HOUSE) -> tuple[DT, Effects, bool]:
    """Put the dealt card where the plan says; returns the new state, its effect and whether the deal is done.
    Any game whose state has `phase` and `cards` (as this module's State) may use it; `joker` admits the joker."""
    if state.phase is not phases.dealing:
        raise IllegalEvent(f"no card expected now ({expect_text(state)})")
    to, up = plan[len(state.cards)]
    new, effects = place_card(state, event, to, up, joker, phases)
    return new, effects, len(plan) == len(new.cards)


def deal_then(plan: Callable[[DT], DealPlan], then: enum.StrEnum = Phase.DECIDING, joker: bool = False,
              phases: Phases = HOUSE) -> Callable[[DT, CardDealt], tuple[DT, Effects]]:
    """The card step of a game that deals every card of `plan` (`accept_card`) and then goes on to phase `then`."""
    def step(state: DT, event: CardDealt) -> tuple[DT, Effects]:
        state, effects, dealt = accept_card(state, event, plan(state), joker, phases)
        return (replace(state, phase=then) if dealt else state), effects
    return step


def place_card(state: DT, event: CardDealt, to: str, up: bool, joker: bool = False,
               phases: Phases = HOUSE) -> tuple[DT, Effects]:
    """Put the dealt card at `to` (games that work out where each card goes as they deal).

    A second copy of a card in one round is refused: these games deal from one deck, so it is a misread
    (or a foreign card) and must not be paid on.
    """
    if state.phase is not phases.dealing:
        raise IllegalEvent(f"no card expected now ({expect_text(state)})")
    if event.target is not None and event.target != to:
        raise IllegalEvent(f"card expected for {to}, not {event.target}")
    if event.card.joker and not joker:
        raise IllegalEvent("a joker is not part of this game")
    for where, p in state.cards:
        if p.card == event.card:
            raise IllegalEvent(f"{event.card} is already on the table this round (at {where}): one deck holds one")
    return replace(state, cards=state.cards + ((to, Placed(event.card, up)),)), (CardPlaced(event.card, to, up),)


def reveal(state: DT, positions: Sequence[str], first: int | None = None) -> tuple[DT, Effects]:
    """Turn face up the face-down cards at `positions` (only the first `first` of each, when given); any state
    with `cards` as this module's State."""
    cards = list(state.cards)
    effects: list[Effect] = []
    for to in positions:
        shown: list[Card] = []
        seen = 0
        for i, (where, p) in enumerate(cards):
            if where != to:
                continue
            seen += 1
            if first is not None and seen > first:
                break
            if not p.up:
                cards[i] = (where, Placed(p.card, True))
                shown.append(p.card)
        if shown:
            effects.append(CardsRevealed(to, tuple(shown)))
    return replace(state, cards=tuple(cards)), tuple(effects)


def take_decision(state: State, event: Decision, deciders: Sequence[int],
                  actions: Callable[[int], Mapping[str, int]]) -> tuple[State, int, str]:
    """Check and record a player's decision: a spot that still has to decide at this stage, a legal action,
    and an amount of 0 or exactly what the action costs (`actions(spot)` maps each action to its cost)."""
    if state.phase is not Phase.DECIDING:
        raise IllegalEvent(f"no decision expected now ({expect_text(state)})")
    spot = parse_spot_actor(event.actor)
    if spot is None:
        raise IllegalEvent(f"only a player decides here, not {event.actor!r}")
    if spot not in deciders:
        raise IllegalEvent(f"spot {spot} has no decision to make now")
    if state.decision(spot) is not None:
        raise IllegalEvent(f"spot {spot} already chose {state.decision(spot)}")
    costs = actions(spot)
    if event.action not in costs:
        raise IllegalEvent(f"spot {spot} may {' or '.join(costs)}, not {event.action!r}")
    if event.hand != 0:
        raise IllegalEvent(f"spot {spot} has one hand, not hand {event.hand}")
    cost = costs[event.action]
    if event.amount not in (0, cost):
        raise IllegalEvent(f"spot {spot}: {event.action} costs {cost}, not {event.amount}")
    return replace(state, decisions=state.decisions + ((state.stage, spot, event.action),)), spot, event.action


def set_stake(state: State, spot: int, box: str, amount: int) -> tuple[State, Effects]:
    """Put `amount` on a box (a play or call bet) or take it back to 0 (a let it ride bet pulled)."""
    delta = amount - state.bets.get(spot, box)
    return replace(state, bets=state.bets.with_amount(spot, box, amount)), (StakeChanged(spot, box, amount, delta),)


def showdown(state: State, spots: Sequence[int]) -> tuple[State, Effects]:
    """Every decision is in: turn up the dealer's hand and the hands of `spots` (those still in play)."""
    state, shown = reveal(state, ["dealer"] + [f"spot:{s}" for s in spots])
    return replace(state, phase=Phase.SETTLING), shown


def raise_or_fold(deciders: Callable[[State], Sequence[int]],
                  actions: Callable[[State, int], Mapping[str, int]]) -> Step[State, Decision]:
    """The decision step of a game against the dealer: each of the `deciders` raises (the action's cost goes on the
    box the action names) or folds; once all have chosen, the dealer's hand and every hand not folded turn up."""
    def step(state: State, event: Decision) -> tuple[State, Effects]:
        costs = functools.partial(actions, state)
        state, spot, action = take_decision(state, event, deciders(state), costs)
        cost = costs(spot)[action]
        effects: Effects = ()
        if cost:
            state, effects = set_stake(state, spot, action, cost)
        if all(state.decision(s) is not None for s in deciders(state)):
            state, shown = showdown(state, [s for s in state.bets.spots() if state.decision(s) != "fold"])
            effects += shown
        return state, effects
    return step


def settle_round(state: State, settle: Callable[[State], Settlement]) -> tuple[State, Effects]:
    """The Settle event: pay the round and clear the table for the next."""
    if state.phase is not Phase.SETTLING:
        raise IllegalEvent(f"cannot settle now ({expect_text(state)})")
    return State(state.rules, state.round), (RoundSettled(state.round, settle(state)),)


def against_dealer(spot: int, ante: int, box: str, bet: int, mine: int, dealer: int, qualifies: bool,
                   won: tuple[int, str]) -> list[BoxResult]:
    """Ante and play/call rows of a hand still in play against the dealer: a dealer who does not qualify
    pays the ante 1:1 and pushes the bet; otherwise the higher hand wins both (the bet paid `won`, as
    (winnings, line)) and a tie pushes both."""
    if not qualifies:
        return [BoxResult(spot, "ante", ante, "win", ante, 0, 2 * ante, "dealer does not qualify: ante 1:1"),
                BoxResult(spot, box, bet, "push", 0, 0, bet, f"dealer does not qualify: {box} pushes")]
    if mine > dealer:
        paid, line = won
        return [BoxResult(spot, "ante", ante, "win", ante, 0, 2 * ante, "player beats dealer: ante 1:1"),
                BoxResult(spot, box, bet, "win", paid, 0, bet + paid, line)]
    if mine < dealer:
        return [BoxResult(spot, "ante", ante, "lose", 0, 0, 0, "dealer beats player"),
                BoxResult(spot, box, bet, "lose", 0, 0, 0, "dealer beats player")]
    return [BoxResult(spot, "ante", ante, "push", 0, 0, ante, "tie: ante pushes"),
            BoxResult(spot, box, bet, "push", 0, 0, bet, f"tie: {box} pushes")]


def expect(state: State, plan: DealPlan, deciders: Sequence[int], actions: Callable[[int], Mapping[str, int]]) -> Expected:
    """What the table waits for: a bet action, the next card, the next undecided spot, or settlement."""
    if state.phase is Phase.IDLE:
        return Expected(Waiting.IDLE, "open bets", actions=("open_bets",))
    if state.phase is Phase.BETTING:
        return Expected(Waiting.BETTING, "bets are open", actions=("place_bet", "remove_bet", "close_bets"))
    if state.phase is Phase.DEALING:
        to, up = plan[len(state.cards)]
        size = sum(1 for where, _ in plan if where == to)
        nth = len(state.placed(to)) + 1
        who = to.replace(":", " ")
        return Expected(Waiting.DEALING, f"card {nth} of {size} to {who}, face {'up' if up else 'down'}", card_to=to,
                        face_up=up)
    if state.phase is Phase.DECIDING:
        waiting = [s for s in deciders if state.decision(s) is None]
        spot = waiting[0]
        costs = actions(spot)
        choices = " or ".join(f"{a} ({c})" if c else a for a, c in costs.items())
        others = f"; {len(waiting) - 1} more to decide" if len(waiting) > 1 else ""
        return Expected(Waiting.DECIDING, f"spot {spot}: {choices}{others}", actor=spot_actor(spot),
                        actions=tuple(costs))
    return Expected(Waiting.SETTLING, "settle the round", actions=("settle",))


def snapshot_of(state: State, game: str, names: Mapping[str, tuple[str, bool]], public: Mapping[str, Any] | None = None,
                audit: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The snapshot contract of base.py: cards as Placed objects; a hand's name outside "audit" only when
    `names[to]` says every card it depends on is face up."""
    hands = []
    for to in state.positions():
        entry: dict[str, Any] = {"to": to, "cards": [p.json() for p in state.placed(to)]}
        name, visible = names.get(to, ("", False))
        if name and visible:
            entry["hand"] = name
        hands.append(entry)
    snap: dict[str, Any] = {
        "game": game, "round": state.round, "phase": state.phase.value, "bets": state.bets.json(), "hands": hands,
        "decisions": [{"stage": st, "spot": s, "action": a} for st, s, a in state.decisions],
        **(public or {}),
        "audit": {"hands": {to: name for to, (name, _) in names.items() if name}, **(audit or {})},
    }
    return snap


def showdown_snapshot(state: State, game: str, size: int, value_of: Callable[[Sequence[Card]], int],
                      name_of: Callable[[int], str], qualifier: int) -> dict[str, Any]:
    """The snapshot of a game against the dealer: each complete hand named, and whether the dealer
    qualifies, outside "audit" only once the cards they depend on are face up."""
    names: dict[str, tuple[str, bool]] = {}
    public: dict[str, Any] = {}
    audit: dict[str, Any] = {}
    for to in state.positions():
        placed = state.placed(to)
        if len(placed) == size:
            value = value_of([p.card for p in placed])
            names[to] = (name_of(value), all(p.up for p in placed))
            if to == "dealer":
                (public if names[to][1] else audit)["dealer_qualifies"] = value >= qualifier
    return snapshot_of(state, game, names, public, audit)


def check_spots(spots: int, most: int, where: str = "rules.spots") -> None:
    if not 1 <= spots <= most:
        raise RulesError(f"{where}: 1 to {most} spots, got {spots}")


def check_paytable(table: Mapping[str, Any], lines: Sequence[str], where: str, complete: bool = False) -> None:
    """Every line names a hand of the game and pays something; `complete` demands every line."""
    for key, payout in table.items():
        if key not in lines:
            raise RulesError(f"{where}.{key}: no such line (lines: {', '.join(lines)})")
        if payout.win == 0:
            raise RulesError(f"{where}.{key}: a line pays more than 0 (leave a losing hand out)")
    if complete:
        missing = [line for line in lines if line not in table]
        if missing:
            raise RulesError(f"{where}: no payout for {', '.join(missing)}")
