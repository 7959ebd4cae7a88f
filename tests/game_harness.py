"""A generic driver for property tests of any table game: plays seeded random rounds through `expected_next`,
probes illegal events, and checks conservation of money and replay determinism.

Use from a game's tests:

    from tests.game_harness import play_rounds
    def test_money_is_conserved():
        play_rounds(GAME, GAME.rules({}), legal_bets, seed=1, rounds=300)

`legal_bets(rules, rng) -> list[Event]` gives the bets a player could make at this game (the harness
adds random, mostly illegal, noise of its own). `decide(state, expected, rng) -> Event | None` may pick
decisions (default: a random legal action, with a random amount in `amount_range`). Games dealt from a
fresh deck every round (the house-banked poker games refuse a card seen twice in one round) pass
`deck_per_round=True`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from controller.cards import Card, shoe
from controller.games.base import (
    CardDealt, CardPlaced, CloseBets, Decision, Event, Expected, GameSpec, IllegalEvent, NewShoe, OpenBets, PlaceBet,
    RemoveBet, RoundSettled, RoundVoided, RulesBase, Settle, Settlement, StakeChanged, VoidRound, event_from_json,
)
from controller.rng import Rng, SeededRng

Decide = Callable[[Any, Expected, Rng], "Event | None"]


@dataclass
class RoundLog:
    events: list[Event] = field(default_factory=list)
    committed: int = 0                # sum of StakeChanged deltas
    settlement: Settlement | None = None
    voided: int | None = None         # credits returned by a void
    placed: list[Card] = field(default_factory=list)  # cards placed (CardPlaced) in this round


class ShoeFeed:
    """Cards from one shuffled shoe at a time; `new_shoe(on_table)` starts a fresh one without the cards still
    on the table. Running out without a new shoe simply starts another (for games that do not track the shoe).

    Games that track their shoe (and refuse a card it cannot hold) pass `fresh_shoes=True` to `play_rounds`:
    every `NewShoe` then starts a freshly shuffled shoe, as at a real table (a reshuffle mid-round leaves the
    cards on the table out of it). Games whose legal bets depend on the table (who holds the bank) pass
    `bets_from_state=True`: `legal_bets` is then called with the state instead of the rules.
    """

    def __init__(self, rng: Rng, decks: int, jokers: int) -> None:
        self.rng, self.decks, self.jokers = rng, decks, jokers
        self.cards: list[Card] = []
        self.new_shoe()

    def new_shoe(self, on_table: list[Card] | None = None) -> None:
        cards = list(shoe(self.decks, self.jokers))
        for card in on_table or ():
            cards.remove(card)
        self.cards = self.rng.shuffled(cards)[::-1]  # reversed: pop() deals from the top

    def __iter__(self) -> ShoeFeed:
        return self

    def __next__(self) -> Card:
        if not self.cards:
            self.new_shoe()
        return self.cards.pop()


def _cards(rng: Rng, decks: int, jokers: int) -> Iterator[Card]:
    while True:
        yield from rng.shuffled(shoe(decks, jokers))


def random_decision(state: Any, exp: Expected, rng: Rng) -> Event | None:
    if not exp.actions or exp.actor is None:
        return None
    amount = 0
    if exp.amount_range is not None:
        lo, hi = exp.amount_range
        amount = lo + rng.randbelow(hi - lo + 1)
    return Decision(exp.actor, rng.choice(exp.actions), amount, exp.hand)


def _noise(rng: Rng, rules: RulesBase, game: GameSpec) -> Event:
    spots = getattr(rules, "spots", 7)
    choice = rng.randbelow(9)
    box = rng.choice(game.boxes or ("main",))
    if choice == 0:
        return PlaceBet(rng.randbelow(spots + 2), box, rng.randbelow(3) * 1_000_000 - 1)
    if choice == 1:
        return RemoveBet(1 + rng.randbelow(spots), box, 1 + rng.randbelow(1000))
    if choice == 2:
        return CardDealt(Card(2 + rng.randbelow(13), rng.randbelow(4)), target="nowhere")  # type: ignore[arg-type]
    if choice == 3:
        return Decision(f"spot:{rng.randbelow(spots + 2)}", rng.choice(["hit", "stand", "fly", "fold", "raise"]),
                        rng.randbelow(50))
    if choice == 4:
        return Settle()
    if choice == 5:
        return CloseBets()
    if choice == 6:
        return OpenBets()
    if choice == 7:
        return Decision("dealer", "nonsense")
    return PlaceBet(1, "no-such-box", 5)


def _apply(game: GameSpec, state: Any, event: Event, log: RoundLog) -> Any:
    new, effects = game.apply(state, event)
    log.events.append(event)
    for eff in effects:
        if isinstance(eff, StakeChanged):
            log.committed += eff.delta
            assert eff.stake >= 0, f"negative stake after {event}"
        elif isinstance(eff, RoundSettled):
            assert log.settlement is None, "a round settled twice"
            log.settlement = eff.settlement
        elif isinstance(eff, RoundVoided):
            log.voided = eff.returned
        elif isinstance(eff, CardPlaced):
            log.placed.append(eff.card)
        json.dumps(eff.to_json())  # every effect is journal- and bus-ready
    json.dumps(game.snapshot(new))
    return new


def _probe(game: GameSpec, state: Any, event: Event) -> None:
    """An event refused must leave the state exactly as it was (states are immutable; this also catches
    a game that mutates a shared structure before refusing)."""
    before = repr(state)
    try:
        game.apply(state, event)
    except IllegalEvent as exc:
        assert exc.reason, "a refusal must say why"
    assert repr(state) == before, f"state changed by {event}"


def play_round(game: GameSpec, state: Any, rng: Rng, cards: Iterator[Card],
               legal_bets: Callable[[Any, Rng], list[Event]], decide: Decide = random_decision,
               void_chance: int = 0, max_steps: int = 2_000, bets_from_state: bool = False) -> tuple[Any, RoundLog]:
    """Play one round from the idle state to settlement (or a void) and check its money."""
    rules = state.rules
    log = RoundLog()
    steps = 0
    placed_noise = 0
    while True:
        steps += 1
        assert steps < max_steps, f"round did not finish: {game.expected_next(state)}"
        exp = game.expected_next(state)
        if rng.randbelow(4) == 0:
            _probe(game, state, _noise(rng, rules, game))
        # No void while a new shoe is burned: no round is in progress then.
        if (void_chance and exp.phase not in ("idle", "shuffling") and exp.card_to != "burn"
                and rng.randbelow(void_chance) == 0):
            on_layout = log.committed
            state = _apply(game, state, VoidRound("test void"), log)
            assert log.voided == on_layout, "a void must return every credit committed"
            assert log.committed == 0, "a void must clear every box (StakeChanged to 0)"
            return state, log
        if exp.phase == "idle":
            if log.settlement is not None:
                break
            state = _apply(game, state, OpenBets(), log)
        elif exp.phase == "shuffling":
            state = _apply(game, state, NewShoe(getattr(rules, "decks", 1)), log)
            if isinstance(cards, ShoeFeed):
                mid_round = log.settlement is None and any(isinstance(e, OpenBets) for e in log.events)
                cards.new_shoe(log.placed if mid_round else None)
        elif exp.phase == "betting":
            first_pass = placed_noise == 0
            for bet in legal_bets(state if bets_from_state else rules, rng):
                try:
                    state = _apply(game, state, bet, log)
                except IllegalEvent:
                    # `legal_bets` is legal on an empty layout; on a later pass (bets could not close yet) a
                    # game may refuse a second bet of the same kind, and that refusal is itself correct.
                    if first_pass:
                        raise
            if placed_noise < 3:
                placed_noise += 1
                try:
                    state = _apply(game, state, _noise(rng, rules, game), log)
                except IllegalEvent:
                    pass
            try:
                state = _apply(game, state, CloseBets(), log)
            except IllegalEvent:
                continue  # e.g. noise left a bet under a minimum: place more next turn
        elif exp.card_to is not None:
            state = _apply(game, state, CardDealt(next(cards)), log)
        elif exp.phase == "settling":
            state = _apply(game, state, Settle(), log)
        else:
            event = decide(state, exp, rng)
            assert event is not None, f"no decision available in {exp}"
            state = _apply(game, state, event, log)
    settlement = log.settlement
    assert settlement is not None
    # Open bets (faro, en prison) outlive a round: what was committed plus what stayed from earlier rounds is
    # what this round decided plus what stays on (for every other game both carries are 0).
    assert settlement.stakes + settlement.carried_out == log.committed + settlement.carried_in, (
        f"stakes settled {settlement.stakes} + carried out {settlement.carried_out} != credits committed "
        f"{log.committed} + carried in {settlement.carried_in}")
    for r in settlement.results:
        assert r.commission <= r.paid, f"{r}: commission above the winnings"
        assert r.returned <= r.stake + r.paid - r.commission, f"{r}: returns more than stake and net winnings"
        assert r.line, f"{r}: no paytable line"
    return state, log


def play_rounds(game: GameSpec, rules: RulesBase, legal_bets: Callable[[Any, Rng], list[Event]], seed: int,
                rounds: int, decide: Decide = random_decision, jokers: int = 0, void_chance: int = 0,
                deck_per_round: bool = False, fresh_shoes: bool = False, bets_from_state: bool = False,
                journal: list[Event] | None = None) -> Any:
    """Play `rounds` seeded rounds, then replay every event (through JSON) and demand the same state.
    `journal`, when given, receives every event the game took, in order."""
    rng = SeededRng(seed)
    card_rng = SeededRng(seed + 1)
    decks = getattr(rules, "decks", 1)
    cards: Iterator[Card] = (ShoeFeed(card_rng, decks, jokers) if fresh_shoes else _cards(card_rng, decks, jokers))
    state = game.new_table(rules)
    initial = state
    journal = [] if journal is None else journal
    carried = pot = 0   # open bets and pot left by the rounds so far: the next settlement must start from them
    for _ in range(rounds):
        if deck_per_round:
            cards = iter(card_rng.shuffled(shoe(decks, jokers)))
        state, log = play_round(game, state, rng, cards, legal_bets, decide, void_chance,
                                bets_from_state=bets_from_state)
        journal.extend(log.events)
        if log.settlement is not None and log.voided is None:
            s = log.settlement
            assert (s.carried_in, s.pot_in) == (carried, pot), (
                f"round opened with open bets {s.carried_in} and pot {s.pot_in}; the last left {carried} and {pot}")
            carried, pot = s.carried_out, s.pot_out
    replayed = initial
    for event in journal:
        replayed, _ = game.apply(replayed, event_from_json(json.loads(json.dumps(event.to_json()))))
    assert replayed == state, "replaying the journal did not rebuild the same state"
    return state


# How each game is played by the harness when every game is played alike (the views' property, the table's
# reassign): the games whose own tests decide, whose bets depend on the table, and which deal a fresh deck.
DECIDE_FROM_TESTS = {"blackjack": "random_decide", "red-dog": "decide", "high-card-pool": "decide", "pontoon": "decide",
                     "pai-gow": "random_decide", "pusoy": "random_decide", "texas-holdem": "random_decide",
                     "big-two": "random_decide"}
BETS_FROM_STATE = {"chemin-de-fer", "faro", "stuss", "pontoon", "texas-holdem"}
DECK_PER_ROUND = {"three-card-poker", "let-it-ride", "caribbean-stud", "pai-gow", "pusoy", "texas-holdem", "big-two"}


def play_game(name: str, seed: int, rounds: int, apply: Callable[[GameSpec], Callable[[Any, Event], Any]] | None = None,
              journal: list[Event] | None = None, void_chance: int = 0) -> Any:
    """`play_rounds` of the named game with its own bets and decisions; `apply(game)`, when given, wraps the
    game's apply, to look at every state on the way; `journal` receives the events the game took; `void_chance`
    voids about one step in that many."""
    import dataclasses
    import importlib

    from controller.games import get_game

    game = get_game(name)
    module = name.replace("-", "_")
    legal = getattr(importlib.import_module(f"controller.games.{module}"), "legal_bets", None)
    tests = importlib.import_module(f"tests.test_{module}") if legal is None or name in DECIDE_FROM_TESTS else None
    kwargs: dict[str, Any] = {"jokers": 1} if name == "pai-gow" else {}
    if tests is not None:
        legal = legal or tests.legal_bets   # the game's own bet maker and decisions
        if name in DECIDE_FROM_TESTS:
            kwargs["decide"] = getattr(tests, DECIDE_FROM_TESTS[name])
    if name in BETS_FROM_STATE:
        kwargs["bets_from_state"] = True
    kwargs["deck_per_round" if name in DECK_PER_ROUND else "fresh_shoes"] = True
    played = dataclasses.replace(game, apply=apply(game)) if apply is not None else game
    return play_rounds(played, game.rules({}), legal, seed=seed, rounds=rounds, journal=journal,
                       void_chance=void_chance, **kwargs)
