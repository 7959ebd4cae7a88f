"""Test helpers for the house-banked poker games: play one round from cards given per position, and feed seeded rounds to an engine."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from controller.cards import Card, from_index, parse_cards
from controller.games.base import (
    BoxResult, CardDealt, CloseBets, Decision, Effect, Event, GameSpec, OpenBets, RoundSettled, Settle, spot_actor,
)


def deal_by_position(game: GameSpec, state: Any, hands: Mapping[str, Sequence[Card]]) -> tuple[Any, list[Effect]]:
    """Deal each position its cards, in whatever order the game asks for them."""
    left = {to: list(cards) for to, cards in hands.items()}
    effects: list[Effect] = []
    while (to := game.expected_next(state).card_to) is not None:
        state, eff = game.apply(state, CardDealt(left[to].pop(0)))
        effects.extend(eff)
    assert not any(left.values()), f"cards left over: {left}"
    return state, effects


def play(game: GameSpec, bets: Iterable[Event], hands: Mapping[str, str], decisions: Iterable[tuple[int, str]] = (),
         rules: Mapping[str, Any] | None = None) -> tuple[Any, list[Effect], dict[tuple[int, str], BoxResult]]:
    """One whole round: bets, the cards of each position ("spot:1": "AS KD 2C", ...), the decisions in
    order, settlement. Returns the final state, every effect and the settled rows by (spot, box)."""
    state = game.new_table(game.rules(rules or {}))
    effects: list[Effect] = []
    for event in [OpenBets(), *bets, CloseBets()]:
        state, eff = game.apply(state, event)
        effects.extend(eff)
    state, eff = deal_by_position(game, state, {to: parse_cards(text) for to, text in hands.items()})
    effects.extend(eff)
    for spot, action in decisions:
        state, eff = game.apply(state, Decision(spot_actor(spot), action))
        effects.extend(eff)
    state, eff = game.apply(state, Settle())
    effects.extend(eff)
    settled = [e for e in effects if isinstance(e, RoundSettled)]
    assert len(settled) == 1
    return state, effects, {(r.spot, r.box): r for r in settled[0].settlement.results}


def engine_nets(game: GameSpec, rules: Any, bets: Sequence[Event], rows: Any, layout: Mapping[str, slice],
                decide: Any) -> list[int]:
    """Step the engine through one round per row of card indices and return each round's net for the
    player (settled returns minus stakes, counting bets taken back). `layout` says which columns are
    whose cards, in the order each position receives them; `decide(i, state, expected)` gives row i's
    decision."""
    nets = []
    state = game.new_table(rules)
    for i, row in enumerate(rows):
        for event in [OpenBets(), *bets, CloseBets()]:
            state, _ = game.apply(state, event)
        cards = {to: [from_index(int(c)) for c in row[cols]] for to, cols in layout.items()}
        state, _ = deal_by_position(game, state, cards)
        while (exp := game.expected_next(state)).phase == "deciding":
            state, _ = game.apply(state, decide(i, state, exp))
        state, eff = game.apply(state, Settle())
        settlement = next(e for e in eff if isinstance(e, RoundSettled)).settlement
        nets.append(-settlement.house_win)   # a bet taken back is neither staked nor lost at settlement
    return nets
