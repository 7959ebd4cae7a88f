"""Trente et quarante: the rows to 31-40, the four bets, refaits, the refait de trente et un (half or en prison), the
shoe, refusals, random play, and the exact math against brute force, the engine and the published figures."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.analysis.trente_et_quarante import (
    analyse, coup_totals, edges, joint_totals, shoe_counts, simulate,
)
from controller.cards import Composition, parse_cards
from controller.games._shoe import ShoeState
from controller.games.base import (
    CardDealt, CloseBets, Decision, Event, IllegalEvent, NewShoe, OpenBets, PlaceBet, RemoveBet, RulesError, Settle,
    StakeChanged, VoidRound,
)
from controller.games.trente_et_quarante import GAME, State, legal_bets, pips
from tests.game_harness import play_rounds
from tests.game_steps import SeededShoes, deal, results, run, settlement

# noir rows first, then rouge rows (the cards go where the game expects them)
NOIR_31 = "KS KH KD AC"          # 31, first card black
ROUGE_31 = "KC QD JH AS"         # 31
NOIR_32 = "9S 9H 9D 5C"          # 32, first card black
NOIR_32_RED = "9H 9S 9D 5C"      # 32, first card red
ROUGE_35 = "KC KD 9H 6S"         # 35
ROUGE_32 = "KC KD 9H 3S"         # 32


def betting(rules: dict[str, Any] | None = None, state: State | None = None) -> State:
    if state is None:
        r = GAME.rules(rules or {})
        state, _ = run(GAME, GAME.new_table(r), [NewShoe(r.decks)])
    state, _ = run(GAME, state, [OpenBets()])
    return state


def coup(bets: list[tuple[int, str, int]], cards: str, rules: dict[str, Any] | None = None,
         state: State | None = None) -> tuple[State, list[Any]]:
    state = betting(rules, state)
    return run(GAME, state, [PlaceBet(*b) for b in bets] + [CloseBets()] + deal(cards))


ALL_FOUR = [(1, "rouge", 100), (2, "noir", 100), (3, "couleur", 100), (4, "inverse", 100)]


# ---------------------------------------------------------------------------------------------------
# The coup


def test_rows_run_to_31_with_the_totals_announced() -> None:
    state = betting()
    state, _ = run(GAME, state, [PlaceBet(1, "rouge", 100), CloseBets()] + deal("KS KH"))
    exp = GAME.expected_next(state)
    assert (exp.card_to, exp.face_up, exp.text) == ("noir", True, "card to the noir row (noir 20), face up")
    state, _ = run(GAME, state, deal("KD"))
    assert GAME.expected_next(state).text == "card to the noir row (noir 30), face up"
    state, _ = run(GAME, state, deal("AC"))
    assert GAME.expected_next(state).text == "card to the rouge row (rouge 0), face up"
    assert [pips(c) for c in parse_cards("AS 7H TD JC QS KH")] == [1, 7, 10, 10, 10, 10]


@pytest.mark.parametrize("noir, rouge, expected", [
    (NOIR_32, ROUGE_35, {1: ("lose", -100), 2: ("win", 100), 3: ("win", 100), 4: ("lose", -100)}),
    (NOIR_32_RED, ROUGE_35, {1: ("lose", -100), 2: ("win", 100), 3: ("lose", -100), 4: ("win", 100)}),
    ("KS KH 9D 6C", ROUGE_32, {1: ("win", 100), 2: ("lose", -100), 3: ("lose", -100), 4: ("win", 100)}),
    ("KH KS 9D 6C", ROUGE_32, {1: ("win", 100), 2: ("lose", -100), 3: ("win", 100), 4: ("lose", -100)}),
    ("KH KS 9D 6C", "KC QD 9H 6S", {s: ("push", 0) for s in (1, 2, 3, 4)}),      # refait at 35
    (NOIR_31, ROUGE_31, {s: ("half", -50) for s in (1, 2, 3, 4)}),             # refait de trente et un
])
def test_bets_settle(noir: str, rouge: str, expected: dict[int, tuple[str, int]]) -> None:
    state, _ = coup(ALL_FOUR, f"{noir} {rouge}")
    state, effects = run(GAME, state, [Settle()])
    got = {spot: outcome_net[:2] for (spot, _), outcome_net in results(effects).items()}
    assert got == expected


def test_lines_name_the_result() -> None:
    state, _ = coup(ALL_FOUR, f"{NOIR_32} {ROUGE_35}")
    assert GAME.expected_next(state).text == "noir and couleur win, noir 32 rouge 35: settle"
    _, effects = run(GAME, state, [Settle()])
    lines = {spot: line for (spot, _), (_, _, line) in results(effects).items()}
    assert lines[2] == "noir 1:1, noir and couleur win, noir 32 rouge 35"
    assert lines[1] == "rouge loses, noir and couleur win, noir 32 rouge 35"
    state, _ = coup(ALL_FOUR, f"{NOIR_31} {ROUGE_31}")
    _, effects = run(GAME, state, [Settle()])
    assert results(effects)[(1, "rouge")][2] == "refait de trente et un: the house takes half"


def test_refait_31_takes_half_and_the_odd_credit() -> None:
    state, _ = coup([(1, "rouge", 15), (2, "noir", 16)], f"{NOIR_31} {ROUGE_31}")
    _, effects = run(GAME, state, [Settle()])
    got = results(effects)
    assert got[(1, "rouge")][:2] == ("half", -8) and got[(2, "noir")][:2] == ("half", -8)
    state, _ = coup([(1, "rouge", 15)], f"{NOIR_31} {ROUGE_31}", {"half_rounding": "down"})
    _, effects = run(GAME, state, [Settle()])
    assert results(effects)[(1, "rouge")][:2] == ("half", -7)


# ---------------------------------------------------------------------------------------------------
# En prison


def test_en_prison_carries_the_bet_to_the_next_coup_and_releases_it_on_a_win() -> None:
    state, _ = coup([(1, "rouge", 100), (2, "noir", 40)], f"{NOIR_31} {ROUGE_31}", {"en_prison": True})
    exp = GAME.expected_next(state)
    assert (exp.phase, exp.actor, exp.actions) == ("deciding", "spot:1", ("half", "prison"))
    state, _ = run(GAME, state, [Decision("spot:1", "prison")])
    assert GAME.expected_next(state).actor == "spot:2"
    state, effects = run(GAME, state, [Decision("spot:2", "half"), Settle()])
    s = settlement(effects)
    assert [(r.spot, r.outcome, r.returned) for r in s.results] == [(2, "half", 20)]
    assert (s.carried_in, s.carried_out) == (0, 100)
    assert StakeChanged(1, "rouge", 0, -100) in effects and StakeChanged(1, "prison:rouge", 100, 100) in effects
    assert GAME.snapshot(state)["en_prison"] == [{"spot": 1, "box": "prison:rouge", "amount": 100}]
    with pytest.raises(IllegalEvent, match="stays until a coup decides it"):
        GAME.apply(betting(state=state), RemoveBet(1, "prison:rouge", 100))
    # the next coup: no new bets needed, rouge wins, the bet comes back without winnings
    state, effects = coup([], f"KS KH 9D 6C {ROUGE_32}", state=state)
    state, effects = run(GAME, state, [Settle()])
    s = settlement(effects)
    assert [(r.box, r.outcome, r.paid, r.returned) for r in s.results] == [("prison:rouge", "released", 0, 100)]
    assert (s.carried_in, s.carried_out) == (100, 0) and not state.prison


@pytest.mark.parametrize("cards, outcome, carried", [
    (f"{NOIR_32} {ROUGE_35}", "lose", 0),                # its side loses
    (f"{NOIR_31} {ROUGE_31}", "lose", 0),                # a second refait de trente et un takes it
    ("KH KS 9D 6C KC QD 9H 6S", None, 100),              # a plain refait: still en prison
])
def test_a_bet_en_prison_after_the_next_coup(cards: str, outcome: str | None, carried: int) -> None:
    state, _ = coup([(1, "rouge", 100)], f"{NOIR_31} {ROUGE_31}", {"en_prison": True})
    state, _ = run(GAME, state, [Decision("spot:1", "prison"), Settle()])
    state, _ = coup([(2, "noir", 10)], cards, state=state)
    if GAME.expected_next(state).phase == "deciding":
        state, _ = run(GAME, state, [Decision("spot:2", "half")])
    state, effects = run(GAME, state, [Settle()])
    s = settlement(effects)
    mine = [r.outcome for r in s.results if r.spot == 1]
    assert mine == ([outcome] if outcome else []) and s.carried_out == carried


def test_void_returns_the_coups_bets_and_keeps_those_en_prison() -> None:
    state, _ = coup([(1, "rouge", 100)], f"{NOIR_31} {ROUGE_31}", {"en_prison": True})
    state, _ = run(GAME, state, [Decision("spot:1", "prison"), Settle()])
    state, _ = coup([(2, "noir", 10)], "KS", state=state)
    state, effects = run(GAME, state, [VoidRound("misdeal")])
    assert StakeChanged(2, "noir", 0, -10) in effects and state.prison.total == 100
    assert GAME.expected_next(state).phase == "idle"


# ---------------------------------------------------------------------------------------------------
# The shoe, refusals, configuration


def test_an_empty_shoe_is_reshuffled_in_the_middle_of_a_coup() -> None:
    state, _ = coup([(1, "rouge", 100)], "KS KH")
    counts = [0] * 53
    counts[parse_cards("KD")[0].index] = 1              # the last card of the shoe
    state = replace(state, shoe=ShoeState(6, 300, 311, Composition(tuple(counts))))
    state, effects = run(GAME, state, deal("KD"))
    assert GAME.expected_next(state).phase == "shuffling"
    state, _ = run(GAME, state, [NewShoe(6)])
    assert state.shoe.remaining == 312 - 3
    state, _ = run(GAME, state, deal(f"AC {ROUGE_35}"))
    assert GAME.expected_next(state).phase == "settling"


def test_the_cut_card_makes_the_coup_the_last() -> None:
    r = GAME.rules({"decks": 1})
    state, _ = run(GAME, GAME.new_table(r), [NewShoe(1, cut=8)])          # the cut card after 8 cards
    state, effects = coup([(1, "rouge", 10)], "KS KH KD AC QC QD JH AS", state=state)
    assert any(e.KIND == "shuffle_due" for e in effects)
    state, _ = run(GAME, state, [Settle()])
    assert GAME.expected_next(state).phase == "shuffling"


@pytest.mark.parametrize("event, reason", [
    (Settle(), "cannot settle"), (Decision("spot:1", "prison"), "no decision expected"),
    (PlaceBet(1, "rouge", 10), "not open"), (NewShoe(6), "between coups"),
    (CardDealt(parse_cards("KS")[0], target="rouge"), "goes to noir"),
])
def test_refusals_say_why_and_change_nothing(event: Event, reason: str) -> None:
    state, _ = coup([(1, "rouge", 100)], "KS")
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)
    assert repr(state) == before


def test_decision_refusals() -> None:
    state, _ = coup([(1, "rouge", 100), (2, "noir", 10)], f"{NOIR_31} {ROUGE_31}", {"en_prison": True})
    for event, reason in [(Decision("spot:2", "half"), "spot:1's"), (Decision("spot:1", "keep"), "is not allowed now"),
                          (Decision("spot:1", "half", 5), "no amount")]:
        with pytest.raises(IllegalEvent, match=reason):
            GAME.apply(state, event)
    state = betting()
    with pytest.raises(IllegalEvent, match="no bets"):
        GAME.apply(state, CloseBets())


@pytest.mark.parametrize("data, message", [({"decks": 9}, "rules.decks"), ({"cards_behind_cut": 200}, "cut"),
                                           ({"limits": {"red": {"min": 1, "max": 2}}}, "no such box")])
def test_rules_errors_name_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        GAME.rules(data)


# ---------------------------------------------------------------------------------------------------
# Random play


@pytest.mark.slow
@pytest.mark.parametrize("rules", [{}, {"en_prison": True}, {"decks": 1, "cards_behind_cut": 1, "en_prison": True}])
def test_random_play_conserves_money_refuses_cleanly_and_replays(rules: dict[str, Any]) -> None:
    state = play_rounds(GAME, GAME.rules(rules), legal_bets, seed=5, rounds=300, void_chance=40, fresh_shoes=True)
    assert state.round >= 300


@pytest.mark.slow
@settings(max_examples=10)
@given(seed=st.integers(0, 2 ** 32))
def test_random_play_property(seed: int) -> None:
    play_rounds(GAME, GAME.rules({"en_prison": True, "decks": 2, "cards_behind_cut": 5}), legal_bets, seed=seed,
                rounds=25, void_chance=20, fresh_shoes=True)


# ---------------------------------------------------------------------------------------------------
# Math


def _brute_joint(counts: tuple[int, ...], target: int) -> dict[tuple[int, int], Fraction]:
    """Every deal of both rows, card by card, with exact probabilities."""

    @cache
    def go(row: int, total: int, first: int, left: tuple[int, ...]) -> dict[tuple[int, int], Fraction]:
        out: dict[tuple[int, int], Fraction] = {}
        n = sum(left)
        for value, k in enumerate(left, start=1):
            if not k:
                continue
            p = Fraction(k, n)
            rest = left[:value - 1] + (k - 1,) + left[value:]
            t = total + value
            if t < target:
                sub = go(row, t, first, rest)
            elif row == 1:
                sub = go(2, 0, t, rest)
            else:
                sub = {(first, t): Fraction(1)}
            for key, q in sub.items():
                out[key] = out.get(key, Fraction(0)) + p * q
        return out

    return go(1, 0, 0, counts)


@pytest.mark.slow
@pytest.mark.parametrize("counts, target", [((3, 3, 3, 3), 6), ((1, 2, 1, 2, 1, 1, 1, 1, 1, 3), 12)])
def test_exact_distribution_equals_brute_force(counts: tuple[int, ...], target: int) -> None:
    joint = joint_totals(counts, target)
    brute = _brute_joint(counts, target)
    assert sum(brute.values()) == 1
    for (t1, t2), p in brute.items():
        assert joint[t1, t2] == pytest.approx(float(p), rel=1e-12, abs=1e-15)
    assert joint.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.slow
def test_one_deck_figures_agree_with_a_seeded_simulation() -> None:
    figures = edges(joint_totals(shoe_counts(1)))
    assert figures["noir"] == pytest.approx(figures["rouge"], abs=1e-14)   # the rows are exactly symmetric
    assert figures["refait_31"] == pytest.approx(0.0217408, abs=1e-7)
    sim = simulate(1, 100_000, seed=3)
    assert abs(sim["refait_31"] - figures["refait_31"]) < 2 * sim["refait_31_ci95"]
    assert abs(sim["refait"] - figures["refait"]) < 2 * sim["refait_ci95"]


@pytest.mark.slow
def test_fast_path_equals_the_engine_coup_by_coup(request: pytest.FixtureRequest) -> None:
    coups = 100_000 if request.config.getoption("--long") else 3_000
    shoes = SeededShoes(GAME, 6, seed=17)
    state = shoes.new_shoe(GAME.new_table(GAME.rules({})))
    for _ in range(coups):
        if GAME.expected_next(state).phase == "shuffling":
            state = shoes.new_shoe(state)
        start = shoes.pos
        state, _ = run(GAME, state, [OpenBets(), PlaceBet(1, "rouge", 10), CloseBets()])
        while GAME.expected_next(state).card_to:
            state, _ = shoes.deal(state)
        cards = shoes.since(start, 60)
        noir, rouge, used = coup_totals(np.array([[pips(c) for c in cards]]))
        assert (int(noir[0]), int(rouge[0]), int(used[0])) == (
            sum(map(pips, state.noir)), sum(map(pips, state.rouge)), len(state.noir) + len(state.rouge))
        state, _ = run(GAME, state, [Settle()])


@pytest.mark.long
def test_six_decks_agree_with_the_published_figures() -> None:
    report = analyse(GAME.rules({}), None, 1, lambda _: None)
    # gamblinginamerica.name: "a 2.19% chance" of a 31 refait, an edge "of about 1.1%"; beatablegames: 1.096%
    assert report["probabilities"]["refait_31"] == pytest.approx(0.0218914, abs=1e-7)
    assert report["house_edge"]["rouge"] == pytest.approx(-0.0109457, abs=1e-7)
    assert report["house_edge"]["couleur"] == report["house_edge"]["noir"]
