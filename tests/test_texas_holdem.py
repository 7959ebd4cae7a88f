"""Texas hold'em dealer-assist: button, blinds and antes, the deal and burns, the three betting structures, all-ins and re-opening, side pots, showdown order, split pots and odd chips, the rake, seating, refusals that change nothing, conservation of chips."""

from __future__ import annotations

from typing import Any, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import Card, deck, parse_cards
from controller.games.base import (
    CardDealt, CloseBets, Decision, Event, IllegalEvent, OpenBets, PlaceBet, RemoveBet, RoundSettled, RoundVoided,
    Settle, Settlement, StakeChanged, VoidRound,
)
from controller.games.texas_holdem import GAME, StackChanged, State, legal_bets, options, pots
from controller.rng import Rng, SeededRng
from tests.game_harness import play_rounds

WIDE = {"limits": {"stack": {"min": 1, "max": 100_000}}, "rake_percent": 0}


def random_decide(state: State, exp: Any, rng: Rng) -> Event:
    o = options(state)
    action = rng.choice(o.actions)
    amount = o.min_to + rng.randbelow(o.max_to - o.min_to + 1) if action in ("bet", "raise") else 0
    return Decision(exp.actor, action, amount)


class Hand:
    """A hand driven step by step: seats and stacks, hole cards by spot, the board; burns come from the rest."""

    def __init__(self, stacks: dict[int, int], rules: dict | None = None, state: State | None = None) -> None:
        self.state = state or GAME.new_table(GAME.rules({**WIDE, **(rules or {})}))
        self.effects: list = []
        self.holes: dict[str, list[Card]] = {}
        self.board: list[Card] = []
        self.apply(OpenBets())
        for spot, chips in stacks.items():
            have = self.state.stack(spot)
            if chips > have:
                self.apply(PlaceBet(spot, "stack", chips - have))
        self.apply(CloseBets())

    def apply(self, event: Event) -> None:
        self.state, effects = GAME.apply(self.state, event)
        self.effects += effects

    def deal(self, holes: dict[int, str] | None = None, board: str = "") -> list[str]:
        """Deal until a decision or the end (the holes and board given once serve the whole hand); returns
        where each card went."""
        for spot, cards in (holes or {}).items():
            self.holes[f"spot:{spot}"] = list(parse_cards(cards))
        self.board += list(parse_cards(board))
        went = []
        while (to := GAME.expected_next(self.state).card_to) is not None:
            planned = [c for cards in self.holes.values() for c in cards] + self.board
            spare = [c for c in deck() if c not in planned and c not in {p.card for _, p in self.state.cards}]
            if to.startswith("spot:"):
                card = self.holes[to].pop(0) if self.holes.get(to) else spare[0]
            elif to == "board":
                card = self.board.pop(0) if self.board else spare[0]
            else:
                card = spare[-1]
            went.append(to)
            self.apply(CardDealt(card))
        return went

    def act(self, spot: int, action: str, amount: int = 0) -> None:
        self.apply(Decision(f"spot:{spot}", action, amount))

    def settle(self) -> Settlement:
        self.apply(Settle())
        return next(e for e in self.effects if isinstance(e, RoundSettled)).settlement

    @property
    def options(self) -> Any:
        return options(self.state)


def awards(settlement: Settlement) -> dict[str, dict[int, int]]:
    out: dict[str, dict[int, int]] = {}
    for r in settlement.results:
        pot = out.setdefault(r.box, {})
        if r.returned:
            pot[r.spot] = r.returned
    return out


# ---------------------------------------------------------------------------------------------------
# Button, blinds, antes, the deal


def test_button_blinds_and_the_deal_order() -> None:
    h = Hand({2: 100, 5: 100, 7: 100})
    s = h.state
    assert (s.button, s.players) == (2, (5, 7, 2))                 # the first hand's button is the first seat
    assert [e for e in h.effects if isinstance(e, StakeChanged)] == [StakeChanged(5, "pot", 1, 1),
                                                                     StakeChanged(7, "pot", 2, 2)]
    went = h.deal()
    assert went == ["spot:5", "spot:7", "spot:2"] * 2                # one at a time from the button's left
    assert h.options.spot == 2                                       # three-handed the button is under the gun
    h.act(2, "call")
    h.act(5, "call")
    assert h.options.actions == ("check", "raise", "all_in")          # the big blind's option
    h.act(7, "check")
    assert h.deal() == ["burn", "board", "board", "board"]
    assert h.options.spot == 5                                       # after the flop: first seat left of the button
    for street in ("flop", "turn"):
        for spot in (5, 7, 2):
            h.act(spot, "check")
        assert h.deal() == ["burn", "board"], street
    snap = GAME.snapshot(h.state)
    assert [b["up"] for b in snap["burns"]] == [False] * 3 and [b["up"] for b in snap["board"]] == [True] * 5
    for spot in (5, 7, 2):
        h.act(spot, "check")
    h.settle()
    # the button moves to the next seat dealt in
    h2 = Hand({}, state=h.state)
    assert (h2.state.button, h2.state.players) == (5, (7, 2, 5))


def test_heads_up_the_button_posts_the_small_blind_and_acts_first_preflop() -> None:
    h = Hand({3: 100, 8: 100})
    assert h.state.players == (8, 3) and h.state.button == 3
    assert h.state.put == (2, 1)
    h.deal()
    assert h.options.spot == 3 and h.options.actions == ("fold", "call", "raise", "all_in")
    h.act(3, "call")
    h.act(8, "check")
    h.deal()
    assert h.options.spot == 8                                       # the big blind first after the flop


def test_antes_are_dead_money_outside_the_bet() -> None:
    h = Hand({1: 100, 2: 100, 3: 100}, {"ante": 1})
    assert h.state.put == (2, 3, 1) and h.state.street_bets == (1, 2, 0)
    h.deal()
    o = h.options
    assert (o.spot, o.call_to, o.min_to) == (1, 2, 4)                # antes do not change the bet to call


def test_a_short_big_blind_is_all_in_and_the_full_blind_is_still_the_bet() -> None:
    h = Hand({1: 100, 2: 100, 3: 1})                                 # button 1, blinds 2 and 3
    assert h.state.put == (1, 1, 0) and h.state.stack(3) == 0
    h.deal()
    assert (h.options.spot, h.options.call_to) == (1, 2)             # call the full big blind
    h.act(1, "call")
    h.act(2, "call")
    h.deal()
    assert h.options.spot == 2 and len(h.state.board) == 3            # the all-in blind is not asked


def test_a_seat_short_of_the_ante_posts_what_it_has() -> None:
    h = Hand({1: 100, 2: 100, 3: 1}, {"ante": 2})
    assert h.state.put[h.state.players.index(3)] == 1 and h.state.stack(3) == 0


# ---------------------------------------------------------------------------------------------------
# No-limit


def test_no_limit_minimum_raise_is_the_last_full_raise() -> None:
    h = Hand({1: 1000, 2: 1000, 3: 1000, 4: 1000, 5: 12})
    h.deal()                                                         # players 2 (SB) 3 (BB) 4 5 1(button)
    assert h.options.spot == 4 and (h.options.min_to, h.options.max_to) == (4, 1000)
    h.act(4, "raise", 10)                                            # a raise of 8
    assert (h.options.spot, h.options.min_to, h.options.max_to) == (5, 12, 12)   # 18, but 12 is all it has
    h.act(5, "all_in")                                               # all in to 12: a raise of 2, not full
    assert (h.options.spot, h.options.min_to) == (1, 20)             # still 12 + the last full raise of 8
    with pytest.raises(IllegalEvent, match="raise to 20 to 1000"):
        h.act(1, "raise", 19)


def flop_bet(stacks: dict[int, int]) -> Hand:
    """Everyone limps (button 1, blinds 2 and 3, then any more seats); on the flop spot 2 bets 10."""
    h = Hand(stacks)
    h.deal()
    while GAME.expected_next(h.state).phase == "deciding":
        h.act(h.options.spot, "check" if "check" in h.options.actions else "call")
    h.deal()
    h.act(2, "bet", 10)
    return h


def test_an_incomplete_all_in_does_not_reopen_the_betting() -> None:
    h = flop_bet({1: 1000, 2: 1000, 3: 25})
    h.act(3, "all_in")                                               # 23 behind: a raise of 13 over 10 is full
    assert h.options.actions == ("fold", "call", "raise", "all_in")
    h = flop_bet({1: 1000, 2: 1000, 3: 17})
    h.act(3, "all_in")                                               # to 15: five more, not a full raise
    assert "raise" in h.options.actions                              # the button has not acted: it may raise
    h.act(1, "call")
    assert h.options.spot == 2 and h.options.actions == ("fold", "call")   # the bettor may only call or fold


@pytest.mark.parametrize("stack, reopens", [(5, True), (7, False)])
def test_fixed_limit_reopens_on_half_a_bet(stack: int, reopens: bool) -> None:
    # 1/2 fixed limit, everyone calls preflop. Spot 3 then goes all in over a bet: on the flop from 3 behind
    # over a bet of 2 (a raise of 1, half a bet: re-opens, TDA rule 47B), or on the turn from 5 behind over a
    # bet of 4 (a raise of 1, a quarter of a bet: does not)
    h = Hand({1: 1000, 2: 1000, 3: stack}, {"structure": "fixed_limit"})
    h.deal()
    for spot, action in ((1, "call"), (2, "call"), (3, "check")):
        h.act(spot, action)
    h.deal()
    if not reopens:
        for spot in (2, 3, 1):
            h.act(spot, "check")
        h.deal()
    h.act(2, "bet", h.options.min_to)
    h.act(3, "all_in")
    h.act(1, "call")
    assert h.options.spot == 2 and ("raise" in h.options.actions) is reopens


def test_short_all_ins_that_add_up_to_a_full_raise_reopen_it() -> None:
    h = flop_bet({1: 1000, 2: 1000, 3: 16, 4: 22})
    h.act(3, "all_in")                                               # to 14
    h.act(4, "all_in")                                               # to 20: ten more than the bettor's 10
    h.act(1, "call")
    assert h.options.spot == 2 and "raise" in h.options.actions      # faces a full raise in all (TDA rule 47)


# ---------------------------------------------------------------------------------------------------
# Pot-limit and fixed limit


def test_pot_limit_maximums() -> None:
    h = Hand({1: 1000, 2: 1000, 3: 1000}, {"structure": "pot_limit"})
    h.deal()
    assert (h.options.min_to, h.options.max_to) == (4, 7)            # call 2, then the pot of 5: to 7
    h.act(1, "raise", 7)
    assert (h.options.spot, h.options.max_to) == (2, 23)             # call 6 more, pot 16: 7 + 16
    h.act(2, "call")
    h.act(3, "call")
    h.deal()
    assert (h.options.min_to, h.options.max_to) == (2, 21)           # the pot after the preflop: 21
    h.act(2, "bet", 10)
    assert (h.options.spot, h.options.max_to) == (3, 51)             # 10 to call, pot 41: to 51


def test_fixed_limit_sizes_and_the_cap() -> None:
    h = Hand({1: 1000, 2: 1000, 3: 1000}, {"structure": "fixed_limit", "small_blind": 1, "big_blind": 2})
    h.deal()
    assert (h.options.min_to, h.options.max_to) == (4, 4)
    h.act(1, "raise", 4)
    h.act(2, "raise", 6)
    h.act(3, "raise", 8)                                             # three raises on the big blind's bet
    assert h.options.actions == ("fold", "call") and h.options.raise_name is None
    h.act(1, "call")
    h.act(2, "call")
    h.deal()
    h.act(2, "bet", 2)                                               # the flop: small bets, a bet and 3 raises
    h.act(3, "raise", 4)
    h.act(1, "raise", 6)
    h.act(2, "raise", 8)
    assert h.options.raise_name is None
    h.act(3, "call")
    h.act(1, "call")
    h.deal()
    assert (h.options.min_to, h.options.max_to) == (4, 4)            # the turn: big bets
    with pytest.raises(IllegalEvent, match="bet to 4, not 6"):
        h.act(2, "bet", 6)


# ---------------------------------------------------------------------------------------------------
# Pots


def test_uncalled_bets_come_back_and_nothing_is_raked_without_a_flop() -> None:
    h = Hand({1: 100, 2: 100, 3: 100}, {"rake_percent": 10, "rake_cap": 5})
    h.deal()
    h.act(1, "raise", 20)
    h.act(2, "fold")
    h.act(3, "fold")
    assert StakeChanged(1, "pot", 2, -18) in h.effects               # called only to the big blind's 2
    settlement = h.settle()
    assert awards(settlement) == {"main_pot": {1: 5}} and settlement.house_win == 0
    assert [h.state.stack(s) for s in (1, 2, 3)] == [103, 99, 98]


def test_side_pots_for_several_all_ins_and_folded_chips_stay_in() -> None:
    h = Hand({1: 50, 2: 100, 3: 300, 4: 300, 5: 300})   # players 2 3 4 5 1 (button 1)
    h.deal({1: "AS AH", 2: "KS KH", 3: "QS QH", 4: "JS JH", 5: "2C 7D"}, board="3C 4D 8S 9H TC")
    h.act(4, "raise", 200)
    h.act(5, "call")
    h.act(1, "all_in")
    h.act(2, "all_in")
    h.act(3, "call")
    h.deal()
    h.act(3, "check")
    h.act(4, "check")
    h.act(5, "bet", 50)
    h.act(3, "fold")
    h.act(4, "call")
    mine = pots(h.state.put, h.state.folded)
    assert [(p.name, p.amount, [h.state.players[i] for i in p.eligible]) for p in mine] == [
        ("main_pot", 250, [2, 4, 5, 1]), ("side_pot_1", 200, [2, 4, 5]), ("side_pot_2", 400, [4, 5])]
    h.deal()
    while GAME.expected_next(h.state).phase == "deciding":
        h.act(h.options.spot, "check")
        h.deal()
    settlement = h.settle()
    assert awards(settlement) == {"main_pot": {1: 250}, "side_pot_1": {2: 200}, "side_pot_2": {4: 400}}
    folded = next(r for r in settlement.results if r.spot == 3 and r.box == "side_pot_2")
    assert (folded.stake, folded.outcome, folded.returned) == (100, "fold", 0)
    assert settlement.stakes == settlement.returned == 850


def test_showdown_order_river_bettor_first_else_left_of_the_button() -> None:
    h = Hand({1: 100, 2: 100, 3: 100})
    h.deal({1: "AS AH", 2: "KS KH", 3: "QS QH"}, board="3C 4D 8S 9H TC")
    for spot, action in ((1, "call"), (2, "call"), (3, "check")):
        h.act(spot, action)
    for _ in range(2):
        h.deal()
        for spot in (2, 3, 1):
            h.act(spot, "check")
    h.deal()
    h.act(2, "check")
    h.act(3, "bet", 10)
    h.act(1, "call")
    h.act(2, "call")
    assert GAME.snapshot(h.state)["showdown_order"] == [3, 1, 2]
    h = Hand({1: 100, 2: 100, 3: 100})
    h.deal()
    for spot, action in ((1, "call"), (2, "call"), (3, "check")):
        h.act(spot, action)
    for _ in range(3):
        h.deal()
        for spot in (2, 3, 1):
            h.act(spot, "check")
    assert GAME.snapshot(h.state)["showdown_order"] == [2, 3, 1]


@pytest.mark.parametrize("rule, shares", [("left_of_button", {2: 4, 3: 4, 4: 3}),
                                           ("high_card", {2: 3, 3: 4, 4: 4})])
def test_a_pot_split_three_ways_gives_the_odd_chips_one_each(rule: str, shares: dict[int, int]) -> None:
    # the board is a straight nobody improves; 11 in the pot (five antes, three big blinds) split by spots 2, 3
    # and 4: two odd chips, one each from the button's left (2, then 3), or from the highest hole card
    # (the three of spades at spot 3, then the three of hearts at spot 4)
    h = Hand({1: 100, 2: 100, 3: 100, 4: 100, 5: 100}, {"odd_chip": rule, "ante": 1})
    h.deal({2: "2C 3D", 3: "2H 3S", 4: "2D 3H", 5: "KS QC", 1: "KD QD"}, board="5C 6D 7S 8H 9S")
    h.act(4, "call")
    h.act(5, "fold")
    h.act(1, "fold")
    h.act(2, "call")
    h.act(3, "check")
    for _ in range(3):
        h.deal()
        for spot in (2, 3, 4):
            h.act(spot, "check")
    settlement = h.settle()
    assert awards(settlement)["main_pot"] == shares
    assert {r.outcome for r in settlement.results if r.returned} == {"split"}


@pytest.mark.parametrize("rule, odd", [("left_of_button", 2), ("high_card", 3)])
def test_a_pot_split_two_ways_and_the_odd_chip(rule: str, odd: int) -> None:
    # 9 in the pot (3 antes, two big blinds of 3); both play the board's king-high straight; the eight of
    # spades is the highest hole card
    h = Hand({1: 100, 2: 100, 3: 100}, {"odd_chip": rule, "ante": 1, "big_blind": 3})
    h.deal({2: "2C 3D", 3: "8S 4H", 1: "QC 7H"}, board="TC JD QS KH 9S")
    h.act(1, "fold")
    h.act(2, "call")
    h.act(3, "check")
    for _ in range(3):
        h.deal()
        for spot in (2, 3):
            h.act(spot, "check")
    assert awards(h.settle())["main_pot"] == {odd: 5, 5 - odd: 4}


def test_rake_percent_cap_main_pot_first() -> None:
    h = Hand({1: 3, 2: 100, 3: 100}, {"rake_percent": 10, "rake_cap": 5})
    h.deal({1: "AS AH", 2: "KS KH", 3: "2C 7D"}, board="3C 4D 8S 9H TC")
    h.act(1, "all_in")
    h.act(2, "call")
    h.act(3, "call")
    h.deal()
    h.act(2, "bet", 40)
    h.act(3, "call")
    h.deal()
    h.act(2, "check")
    h.act(3, "check")
    h.deal()
    h.act(2, "check")
    h.act(3, "check")
    settlement = h.settle()
    # pots: main 9 (3 each), side 80; rake min(5, 89 x 10% = 8) = 5: 5 from the main pot first
    rows = {(r.spot, r.box): r for r in settlement.results}
    main = rows[(1, "main_pot")]
    assert (main.paid, main.commission, main.returned) == (9, 5, 4)
    assert rows[(2, "side_pot_1")].commission == 0 and settlement.house_win == 5


def test_rake_rounds_down_and_stakes_equal_returns_plus_rake() -> None:
    h = Hand({1: 100, 2: 100}, {"rake_percent": 10, "rake_cap": 50})
    h.deal({1: "AS AH", 2: "KS KH"}, board="3C 4D 8S 9H TC")
    h.act(1, "raise", 13)          # heads-up: the button (1) first
    h.act(2, "call")
    for _ in range(3):
        h.deal()
        h.act(2, "check")
        h.act(1, "check")
    settlement = h.settle()
    assert settlement.house_win == 2            # 26 x 10% = 2.6: 2
    assert settlement.stakes == settlement.returned + settlement.commission


# ---------------------------------------------------------------------------------------------------
# Seating and refusals


def test_buy_ins_and_cash_outs_between_hands() -> None:
    state = GAME.new_table(GAME.rules({}))
    state, _ = GAME.apply(state, OpenBets())
    with pytest.raises(IllegalEvent, match="minimum buy-in is 40"):
        GAME.apply(state, PlaceBet(1, "stack", 20))
    with pytest.raises(IllegalEvent, match="maximum buy-in of 400"):
        GAME.apply(state, PlaceBet(1, "stack", 401))
    state, effects = GAME.apply(state, PlaceBet(1, "stack", 100))
    assert effects == (StackChanged(1, 100, 100),)
    state, _ = GAME.apply(state, PlaceBet(1, "stack", 10))           # an add-on may be small
    state, effects = GAME.apply(state, RemoveBet(1, "stack", 30))
    assert effects == (StackChanged(1, 80, -30),)
    with pytest.raises(IllegalEvent, match="at least two seats"):
        GAME.apply(state, CloseBets())


@pytest.mark.parametrize("event, reason", [
    (Decision("spot:2", "call"), "spot 1 is to act"),
    (Decision("spot:1", "check"), "may fold, call, raise, all_in"),
    (Decision("spot:1", "raise", 3), "raise to 4 to 100"),
    (Decision("spot:1", "raise", 101), "raise to 4 to 100"),
    (Decision("spot:1", "bet", 10), "not 'bet'"),
    (Decision("spot:1", "call", 5), "calls to 2"),
    (Decision("spot:1", "fold", 5), "takes no amount"),
    (Decision("spot:1", "all_in", 50), "all in is 100"),
    (Decision("dealer", "call"), "spot 1 is to act"),
    (PlaceBet(1, "stack", 10), "between hands"),
    (CardDealt(parse_cards("2C")[0]), "no card expected"),
    (Settle(), "cannot settle"),
])
def test_refusals_change_nothing(event: Event, reason: str) -> None:
    h = Hand({1: 100, 2: 100, 3: 100})
    h.deal()
    before = repr(h.state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(h.state, event)
    assert repr(h.state) == before


def test_a_void_gives_every_chip_back_and_keeps_the_button() -> None:
    h = Hand({1: 100, 2: 100, 3: 100}, {"ante": 1})
    h.deal()
    h.act(1, "raise", 10)
    h.apply(VoidRound("misdeal"))
    assert [h.state.stack(s) for s in (1, 2, 3)] == [100, 100, 100]
    assert next(e for e in h.effects if isinstance(e, RoundVoided)).returned == 16   # antes 3, blinds, 10
    assert h.state.button == 0 and GAME.expected_next(h.state).phase == "idle"


def test_hole_cards_stay_hidden_until_the_showdown() -> None:
    h = Hand({1: 100, 2: 100})
    h.deal({1: "AS AH", 2: "KS KH"}, board="3C 4D 8S 9H TC")
    h.act(1, "call")
    h.act(2, "check")
    h.deal()
    snap = GAME.snapshot(h.state)
    assert all(not c["up"] for seat in snap["seats"] for c in seat["cards"])
    assert all("hand" not in seat for seat in snap["seats"])
    assert snap["audit"]["hands"] == {"spot:1": "pair of aces", "spot:2": "pair of kings"}
    assert snap["to_act"] == {"spot": 2, "actions": ["check", "bet", "all_in"], "call": 0, "min_to": 2,
                              "max_to": 98, "all_in_to": 98}


# ---------------------------------------------------------------------------------------------------
# Conservation over random hands


@pytest.mark.parametrize("rules", [{}, {"structure": "pot_limit", "ante": 1}, {"structure": "fixed_limit", "spots": 4,
                                   "odd_chip": "high_card"}, {"spots": 2, "limits": {"stack": {"min": 3, "max": 30}}}])
@pytest.mark.slow
def test_money_is_conserved_and_refusals_change_nothing(rules: dict) -> None:
    play_rounds(GAME, GAME.rules(rules), legal_bets, seed=4, rounds=150, decide=random_decide, deck_per_round=True,
                void_chance=40, bets_from_state=True)


@settings(max_examples=60)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["no_limit", "pot_limit", "fixed_limit"]),
       st.lists(st.integers(1, 60), min_size=2, max_size=6))
@pytest.mark.slow
def test_chips_on_the_table_plus_rake_equal_the_buy_ins(seed: int, structure: str, stacks: Sequence[int]) -> None:
    """Every hand ends with the chips that sat down, less the rake; illegal decisions change nothing."""
    rng = SeededRng(seed)
    rules = {**WIDE, "structure": structure, "ante": rng.randbelow(2), "rake_percent": 10, "rake_cap": 3}
    h = Hand({s + 1: chips for s, chips in enumerate(stacks)}, rules)
    cards = iter(rng.shuffled(list(deck())))
    while (exp := GAME.expected_next(h.state)).phase != "settling":
        if exp.card_to is not None:
            h.apply(CardDealt(next(cards)))
            continue
        o = options(h.state)
        wild = Decision(f"spot:{rng.randbelow(8)}", rng.choice(["fold", "raise", "bet", "check", "call", "all_in"]),
                        rng.randbelow(80))
        before = repr(h.state)
        try:
            h.apply(wild)
        except IllegalEvent:
            assert repr(h.state) == before
        else:
            continue
        h.apply(random_decide(h.state, exp, rng))
        assert o.spot in h.state.players
    settlement = h.settle()
    assert sum(h.state.stack(s + 1) for s in range(len(stacks))) + settlement.house_win == sum(stacks)
    assert settlement.house_win <= 3


def test_legal_bets_seat_at_least_two() -> None:
    state, _ = GAME.apply(GAME.new_table(GAME.rules({})), OpenBets())
    for seed in range(20):
        bets = legal_bets(state, SeededRng(seed))
        assert len({b.spot for b in bets}) >= 2
