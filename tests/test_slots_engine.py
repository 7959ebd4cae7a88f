"""The slot engine on small hand-made titles: evaluation rules, virtual reels, the window and paylines, bets, errors, purity, JSON and replay."""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rng import SeededRng
from controller.slots import (
    Bet, Outcome, SlotError, State, TitleError, all_titles, cash_in, draw_pick, draw_stops, get_title, new_state, pick,
    spin,
)
from controller.slots.catalog import load_title, parse_title
from tests.stats import chi_square, chi_square_critical_99


def toy(**changes: Any) -> dict[str, Any]:
    """A small valid title as TOML data: wild W (2x, not for P), bars, cherry, piggy P."""
    data: dict[str, Any] = {
        "name": "Toy", "denominations": [25], "lines": 1, "max_coins": 2, "target_rtp": [0.93, 0.95],
        "symbols": {"-": {"name": "Blank", "blank": True}, "W": "Wild", "A": "Bar A", "B": "Bar B",
                    "C": "Cherry", "P": "Piggy"},
        "groups": {"AB": ["A", "B"]},
        "wild": {"symbol": "W", "excludes": ["P"], "multiplier": 2},
        "reels": [{"stops": [["W", 1], ["-", 2], ["A", 3], ["-", 1], ["B", 2], ["C", 1], ["P", 1]]}] * 3,
        "paytables": [{"name": "Only", "rows": [
            {"line": "W W W", "pays": [100, 300]},
            {"line": "A A A", "pays": [20, 40]},
            {"line": "AB AB AB", "pays": [5, 10]},
            {"line": "C * *", "pays": [3, 6]},
            {"anywhere": "C", "count": 2, "pays": [4, 8]},
            {"line": "P P P", "pays": [7, 9], "unmultiplied_with_wilds": 2},
        ]}],
    }
    data.update(changes)
    return data


def make(**changes: Any):  # noqa: ANN201 - a Title
    return parse_title("toy", toy(**changes))


# --- evaluation --------------------------------------------------------------------------------------

def test_positional_group_and_anything_rows() -> None:
    t = make()
    assert t.line_eval(("A", "A", "A")).at(1).credits == 20
    assert t.line_eval(("A", "B", "A")).at(2).credits == 10          # any bar
    assert t.line_eval(("C", "-", "-")).at(1).credits == 3           # cherry on reel 1, anything after
    assert t.line_eval(("-", "C", "-")).at(1) is None                # not on reel 1: nothing
    assert t.line_eval(("-", "C", "C")).at(1).credits == 4           # two cherries anywhere


def test_wild_stands_in_doubles_and_respects_exclusions_and_blanks() -> None:
    t = make()
    best = t.line_eval(("A", "W", "A")).at(1)
    assert (best.credits, best.multiplier, best.wilds) == (40, 2, (1,))
    assert t.line_eval(("W", "A", "W")).at(1).credits == 80          # two wilds: 4x
    assert t.line_eval(("P", "W", "P")).at(1) is None                # the wild is not a piggy
    assert t.line_eval(("A", "A", "-")).at(1) is None                # nor does anything stand in for a blank
    assert t.line_eval(("W", "-", "W")).at(1) is None


def test_three_wilds_pay_only_their_own_row_and_the_best_row_depends_on_the_coins() -> None:
    t = make()
    assert t.line_eval(("W", "W", "W")).at(1).credits == 100
    # C W W: "C * *" pays 3 (the wilds are "anything"), two cherries anywhere 4 x 4 = 16
    best = t.line_eval(("C", "W", "W")).at(1)
    assert (t.paytables[0].rows[best.row].text, best.credits) == ("2 C anywhere", 16)


def test_unmultiplied_with_wilds_exception() -> None:
    t = make(wild={"symbol": "W", "multiplier": 2})
    assert t.line_eval(("P", "W", "P")).at(1).credits == 14          # one wild: 2x
    assert t.line_eval(("W", "P", "W")).at(1).credits == 7           # two wilds: the row's exception, 1x


def test_ties_go_to_the_earlier_row() -> None:
    rows = [{"line": "AB AB AB", "pays": [5, 10]}, {"line": "A A A", "pays": [5, 10]}]
    t = make(paytables=[{"name": "Tie", "rows": rows}])
    assert t.line_eval(("A", "A", "A")).at(1).row == 0


# --- reels, window, paylines -----------------------------------------------------------------------

def test_virtual_stops_map_to_physical_stops_by_weight_and_the_window_wraps() -> None:
    t = make()
    reel = t.reels[0]
    assert reel.virtual_size == 11 and Counter(reel.physical) == {0: 1, 1: 2, 2: 3, 3: 1, 4: 2, 5: 1, 6: 1}
    assert t.window(t.physical((0, 0, 0))) == (("P", "P", "P"), ("W", "W", "W"), ("-", "-", "-"))
    assert t.physical((10, 1, 2)) == (6, 1, 1)


def test_draw_stops_is_uniform_over_virtual_stops() -> None:
    t = make()
    rng = SeededRng(17)
    state = new_state(t)
    counts = Counter(draw_stops(state, rng)[1] for _ in range(22_000))
    assert chi_square([counts[v] for v in range(11)], [2000.0] * 11) < chi_square_critical_99(10)


def test_five_paylines_read_rows_and_diagonals() -> None:
    from controller.slots.title import LINES, Title

    window = (("a", "b", "c"), ("d", "e", "f"), ("g", "h", "i"))
    assert [Title.line_symbols(window, n) for n in range(1, 6)] == [
        ("d", "e", "f"), ("a", "b", "c"), ("g", "h", "i"), ("a", "e", "i"), ("g", "e", "c")]
    assert len(LINES) == 5


# --- bets and errors -------------------------------------------------------------------------------

@pytest.mark.parametrize("stops,message", [((0, 0), "three reel stops"), ((0, 0, 11), "virtual stops 0..10"),
                                           ((0, True, 0), "virtual"), ((-1, 0, 0), "virtual"), ("abc", "virtual")])
def test_bad_stops_are_refused(stops: Any, message: str) -> None:
    with pytest.raises(SlotError, match=message):
        spin(new_state(make()), stops, Bet(1))


@pytest.mark.parametrize("bet", [Bet(0), Bet(3), Bet(1, 2), 2])
def test_bad_bets_are_refused(bet: Any) -> None:
    with pytest.raises(SlotError):
        spin(new_state(make()), (0, 0, 0), bet)


def test_spin_is_pure() -> None:
    t = get_title("frozen-assets")
    state = new_state(t)
    before = copy.deepcopy(state.to_json())
    a = spin(state, (3, 4, 5), Bet(3))
    b = spin(state, (3, 4, 5), Bet(3))
    assert a == b and state.to_json() == before
    with pytest.raises(TypeError):
        state.meters["snowman"] = 5  # type: ignore[index]


# --- title files ------------------------------------------------------------------------------------

@pytest.mark.parametrize("change,message", [
    ({"colour": 1}, "unknown key"),
    ({"lines": 2}, "1, 3 or 5 paylines"),
    ({"target_rtp": [0.90, 0.95]}, "target_rtp"),
    ({"groups": {"A": ["B"]}}, "not a symbol code"),
    ({"reels": [{"stops": [["Q", 1], ["-", 1], ["A", 1]]}] * 3}, "unknown symbol 'Q'"),
    ({"reels": [{"stops": [["A", 0], ["-", 1], ["A", 1]]}] * 3}, "weight"),
    ({"paytables": [{"name": "x", "rows": [{"line": "A A A", "pays": [5]}]}]}, "2 whole numbers"),
    ({"paytables": [{"name": "x", "rows": [{"line": "A A A", "pays": [5, 4]}]}]}, "never pay less"),
    ({"paytables": [{"name": "x", "rows": [{"line": "A A", "pays": [5, 6]}]}]}, "three positions"),
    ({"paytables": [{"name": "x", "rows": [{"anywhere": "C", "count": 4, "pays": [5, 6]}]}]}, "three symbols"),
    ({"wild": {"symbol": "-"}}, "wild.symbol"),
    ({"wild": {"symbol": "W", "morph": ["Q Q Q"]}}, "not a paytable combination"),
    ({"features": [{"kind": "jackpot_party"}]}, "unknown feature"),
    ({"features": [{"kind": "safe", "symbol": "A", "clicks": 5, "bonus": [1, 2], "three_dials": 2, "x": 1}]},
     "unknown key"),
    ({"features": [{"kind": "safe", "symbol": "Z", "clicks": 5, "bonus": [1, 2], "three_dials": 2}]},
     "unknown symbol"),
    ({"features": [{"kind": "safe", "symbol": "A", "clicks": 5, "bonus": [1, 2, 3], "three_dials": 2}]},
     "list of 2 whole numbers"),
    ({"features": [{"kind": "snowman", "flake": "A", "sun": "B", "target": 5, "bonus": 5}] * 2}, "same name"),
    ({"lines": 3, "features": [{"kind": "snowman", "flake": "A", "sun": "B", "target": 5, "bonus": 5}]}, "one-line"),
])
def test_broken_title_files_are_refused_naming_the_key(change: dict[str, Any], message: str) -> None:
    with pytest.raises(TitleError, match=message):
        make(**change)


def test_a_title_file_with_bad_toml_is_refused(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "bad.toml"
    path.write_text("name = \n")
    with pytest.raises(TitleError, match="not valid TOML"):
        load_title(path)
    with pytest.raises(TitleError, match="unknown title"):
        get_title("no-such-title")


# --- JSON, journal and replay -------------------------------------------------------------------------

def test_state_from_json_refuses_a_changed_title_and_bad_meters() -> None:
    t = get_title("bank-on-it")
    data = new_state(t).to_json()
    assert State.from_json(json.loads(json.dumps(data))) == new_state(t)
    with pytest.raises(SlotError, match="title file changed"):
        State.from_json({**data, "digest": "0" * 64})
    with pytest.raises(SlotError, match="meters"):
        State.from_json({**data, "meters": {"snowman": 1}})
    with pytest.raises(SlotError, match="schema"):
        State.from_json({**data, "v": 99})
    with pytest.raises(SlotError, match="add up"):
        Outcome.from_json({**spin(new_state(t), (0, 0, 0), Bet(1))[1].to_json(), "won": 12345})


def _play(title_id: str, seed: int, spins: int, coins: int) -> list[dict[str, Any]]:
    """Play a cabinet and write a journal: every input (stops, bet, picks, cash-ins) as JSON."""
    t = get_title(title_id)
    rng = SeededRng(seed)
    state = new_state(t)
    journal = []
    for i in range(spins):
        if state.pending:
            draw = draw_pick(state, rng)
            state, out = pick(state, ("matador", "bull")[i % 2], draw)
            journal.append({"pick": ("matador", "bull")[i % 2], "draw": draw, "state": state.to_json(), "out": out.to_json()})
        elif state.free is None and state.meters.get("free_winning_spins"):
            state, out = cash_in(state)
            journal.append({"cash_in": True, "state": state.to_json(), "out": out.to_json()})
        else:
            bet = state.free.bet if state.free else Bet(coins, 1) if t.lines == 1 else Bet(1, coins)
            stops = draw_stops(state, rng)
            state, out = spin(state, stops, bet)
            journal.append({"stops": list(stops), "bet": bet.to_json(), "state": state.to_json(), "out": out.to_json()})
    return json.loads(json.dumps(journal))


def _replay(title_id: str, journal: list[dict[str, Any]]) -> None:
    state = new_state(get_title(title_id))
    for entry in journal:
        if "pick" in entry:
            state, out = pick(state, entry["pick"], entry["draw"])
        elif "cash_in" in entry:
            state, out = cash_in(state)
        else:
            state, out = spin(state, tuple(entry["stops"]), Bet.from_json(entry["bet"]))
        assert state.to_json() == entry["state"] and out.to_json() == entry["out"]
        assert Outcome.from_json(entry["out"]) == out and State.from_json(entry["state"]) == state


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(title=st.sampled_from(sorted(t.id for t in all_titles())), seed=st.integers(0, 2**32), coins=st.integers(1, 3))
def test_replaying_the_journal_rebuilds_every_state_and_outcome(title: str, seed: int, coins: int) -> None:
    coins = min(coins, get_title(title).max_bet.total)
    _replay(title, _play(title, seed, 300, coins))


@pytest.mark.slow
def test_a_long_journal_of_every_title_replays() -> None:
    for t in all_titles():
        _replay(t.id, _play(t.id, 99, 2_000, t.max_bet.total))
