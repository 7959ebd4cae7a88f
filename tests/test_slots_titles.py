"""Every feature rule the seed gives, on the real title files, with scripted stops (what the reels show is named, not drawn)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from controller.rng import SeededRng
from controller.slots import (
    Bet, SlotError, State, cash_in, draw_pick, draw_stops, get_title, new_state, next_paytable, pick, select_paytable,
    spin, title_ids,
)
from controller.slots.engine import wins
from tests.slot_helpers import losing_stops, reel_stop, stops_for

MAX = Bet(3)
SEED_TITLES = {
    "bank-on-it": "Bank on It!", "the-big-heist": "The Big Heist", "bonkers": "Bonkers!",
    "crazy-dragon": "Crazy Dragon", "diamond-mine": "Diamond Mine", "diamond-mine-deluxe": "Diamond Mine Deluxe",
    "el-toro": "El Toro", "frozen-assets": "Frozen Assets", "high-rollers": "High Rollers",
    "its-good-to-be-bad": "It's Good to be Bad", "light-speed": "Light Speed", "lucky-lightnin": "Lucky Lightnin'",
    "operation-myow": "Operation M.Y.O.W.", "pharaohs-gold": "Pharaoh's Gold",
    "sevens-and-stripes": "7's and Stripes", "triple-7-inferno": "Triple 7 Inferno",
}


def with_meters(state: State, **meters: int) -> State:
    return replace(state, meters={**state.meters, **meters})


def test_all_sixteen_titles_of_the_seed_with_their_denominations_and_lines() -> None:
    assert set(title_ids()) == set(SEED_TITLES)
    for tid, name in SEED_TITLES.items():
        title = get_title(tid)
        assert title.name == name
        expected = {"crazy-dragon": (100,), "light-speed": (25,), "its-good-to-be-bad": (25, 100)}
        assert title.denominations == expected.get(tid, (5, 25, 50, 100, 500))
        lines = {"high-rollers": 5, "pharaohs-gold": 3}.get(tid, 1)
        assert title.lines == lines
        assert title.max_bet.total == (lines if lines > 1 else 3)
        assert 0.92 <= title.target_rtp[0] < title.target_rtp[1] <= 0.97
    # system-wide progressives and their reset values ($2,000, $100,000, $700)
    assert get_title("crazy-dragon").progressive.reset_cents == 200_000
    assert get_title("its-good-to-be-bad").progressive.reset_cents == 10_000_000
    assert get_title("light-speed").progressive.reset_cents == 70_000
    assert get_title("light-speed").progressive.reset_credits(25) == 2800


# --- Bank on It! ---------------------------------------------------------------------------------------

def test_piggy_bank_starts_at_150_and_takes_the_bet_on_three_blanks() -> None:
    t = get_title("bank-on-it")
    state = new_state(t)
    assert state.meters["piggy_bank"] == 150
    blanks = stops_for(t, "--", "--", "--")
    for coins, bank in ((1, 151), (3, 154), (2, 156)):
        state, out = spin(state, blanks, Bet(coins))
        assert state.meters["piggy_bank"] == bank and out.won == 0 and out.cost == coins
        assert out.meters[0].meter == "piggy_bank" and out.meters[0].after == bank


def test_three_piggies_win_the_bank_which_starts_again_and_the_wild_matches_a_piggy() -> None:
    t = get_title("bank-on-it")
    state = with_meters(new_state(t), piggy_bank=987)
    state, out = spin(state, stops_for(t, "PG", "PG", "PG"), Bet(1))
    assert out.won == 987 and out.awards[0].feature == "piggy_bank"
    assert state.meters["piggy_bank"] == 150
    state, out = spin(state, stops_for(t, "PG", "WD", "PG"), Bet(1))
    assert out.won == 150 and state.meters["piggy_bank"] == 150
    # the wild stands in for any paying symbol too, but a line of wilds is its own award
    _, out = spin(state, stops_for(t, "7R", "WD", "7R"), MAX)
    assert [w.combo for w in out.line_wins] == ["7R 7R 7R"]
    _, out = spin(state, stops_for(t, "WD", "WD", "WD"), MAX)
    assert [(w.combo, w.credits) for w in out.line_wins] == [("WD WD WD", 5000)]


# --- The Big Heist -------------------------------------------------------------------------------------

def test_each_safe_dial_is_one_click() -> None:
    t = get_title("the-big-heist")
    state = new_state(t)
    state, out = spin(state, stops_for(t, "SD", "--", "--"), Bet(1))
    assert state.meters["safe_clicks"] == 1 and out.won == 0
    state, _ = spin(state, stops_for(t, "SD", "SD", "--"), Bet(2))
    assert state.meters["safe_clicks"] == 3


@pytest.mark.parametrize("coins,bonus", [(1, 10), (2, 20), (3, 40)])
def test_fifty_clicks_crack_the_safe_for_the_secret_bonus_larger_at_max_coins(coins: int, bonus: int) -> None:
    t = get_title("the-big-heist")
    state = with_meters(new_state(t), safe_clicks=49)
    state, out = spin(state, stops_for(t, "--", "SD", "--"), Bet(coins))
    assert out.won == bonus and state.meters["safe_clicks"] == 0
    assert out.awards[0].what.startswith("50 clicks")


def test_three_dials_pay_ten_times_the_secret_bonus() -> None:
    t = get_title("the-big-heist")
    state = with_meters(new_state(t), safe_clicks=48)
    state, out = spin(state, stops_for(t, "SD", "SD", "SD"), MAX)
    assert out.won == 400 and len(out.awards) == 1 and state.meters["safe_clicks"] == 0
    bonus = t.features[0].bonus
    assert bonus[2] / 3 > bonus[1] / 2 >= bonus[0]  # max coins: a larger secret bonus per coin


# --- Bonkers! ------------------------------------------------------------------------------------------

def test_two_bonkers_give_3_and_three_give_10_guaranteed_free_winning_spins() -> None:
    t = get_title("bonkers")
    state, out = spin(new_state(t), stops_for(t, "BK", "--", "BK"), Bet(2))
    assert state.free.remaining == 3 and state.free.guaranteed and state.free.bet == Bet(2)
    assert out.free_spins_left == 3
    state, _ = spin(new_state(t), stops_for(t, "BK", "BK", "BK"), MAX)
    assert state.free.remaining == 10
    state, _ = spin(new_state(t), stops_for(t, "BK", "--", "--"), MAX)
    assert state.free is None


def test_free_winning_spins_must_win_cost_nothing_and_cannot_win_more() -> None:
    t = get_title("bonkers")
    state, _ = spin(new_state(t), stops_for(t, "BK", "BK", "BK"), MAX)
    with pytest.raises(SlotError, match="must win"):
        spin(state, losing_stops(t), MAX)
    with pytest.raises(SlotError, match="bet that won them"):
        spin(state, stops_for(t, "B1", "B1", "B1"), Bet(1))
    state, out = spin(state, stops_for(t, "B1", "B1", "B1"), MAX)
    assert out.free_spin and out.cost == 0 and out.won == 30 and state.free.remaining == 9
    # Bonkers! during the free spins win nothing more ("additional free spins may not be won")
    bk = stops_for(t, "BK", "CH", "BK")
    state, out = spin(state, bk, MAX)
    assert out.won > 0 and state.free.remaining == 8
    # draw_stops only ever gives winning stops while free winning spins are left
    rng = SeededRng(3)
    for _ in range(40):
        assert wins(t, 0, draw_stops(state, rng), MAX)


def test_three_red_sevens_end_the_free_spins_after_paying() -> None:
    t = get_title("bonkers")
    state, _ = spin(new_state(t), stops_for(t, "BK", "BK", "BK"), MAX)
    state, out = spin(state, stops_for(t, "7R", "7R", "7R"), MAX)
    assert out.won == 4000 and state.free is None and out.free_spins_left == 0
    state, out = spin(state, losing_stops(t), MAX)
    assert out.cost == 3  # back to regular play


# --- Crazy Dragon --------------------------------------------------------------------------------------

def test_dragon_parts_in_order_from_the_left_win_2_5_or_20_respins_at_max_bet() -> None:
    t = get_title("crazy-dragon")
    for centre, respins in ((("DH", "--", "DT"), 2), (("DH", "DB", "--"), 5), (("DH", "DB", "DT"), 20)):
        state, out = spin(new_state(t), stops_for(t, *centre), MAX)
        assert state.free.remaining == respins and not state.free.guaranteed
        assert state.meters["respins_total"] == respins
    # not in order from the left: nothing
    state, _ = spin(new_state(t), stops_for(t, "--", "DB", "DT"), MAX)
    assert state.free is None
    # below max bet the bonus does not play
    state, _ = spin(new_state(t), stops_for(t, "DH", "DB", "DT"), Bet(2))
    assert state.free is None and state.meters["respins_total"] == 0


def test_respins_won_during_respins_add_up_and_100_win_the_progressive() -> None:
    t = get_title("crazy-dragon")
    state, _ = spin(new_state(t), stops_for(t, "DH", "DB", "DT"), MAX)
    whole = stops_for(t, "DH", "DB", "DT")
    for _ in range(3):
        state, out = spin(state, whole, MAX)
        assert out.free_spin and out.cost == 0 and not out.progressive_hit
    assert state.meters["respins_total"] == 80 and state.free.remaining == 77
    state, out = spin(state, whole, MAX)
    assert out.progressive_hit and state.meters["respins_total"] == 0 and state.free.remaining == 96
    # the run goes on; when its re-spins are over the total starts again
    state = replace(state, free=replace(state.free, remaining=1), meters={"respins_total": 40})
    state, out = spin(state, losing_stops(t, avoid=("DH",)), MAX)
    assert state.free is None and state.meters["respins_total"] == 0


def test_yin_yang_matches_any_non_dragon_symbol() -> None:
    t = get_title("crazy-dragon")
    _, out = spin(new_state(t), stops_for(t, "PL", "YY", "PL"), MAX)
    assert [w.combo for w in out.line_wins] == ["PL PL PL"]
    assert t.line_eval(("DH", "YY", "DT")).at(3) is None
    assert t.features[0].line_fact(("DH", "YY", "DT")) == 1  # the yin-yang is not a dragon body


def test_progressive_contribution_is_whole_credits_with_the_fraction_carried() -> None:
    t = get_title("crazy-dragon")  # 1% of each 3-credit max bet
    state = new_state(t)
    fed = 0
    for _ in range(100):
        state, out = spin(state, losing_stops(t, avoid=("DH",)), MAX)
        fed += out.progressive_contribution
    assert fed == 3 and state.progressive_carry == 0
    state, out = spin(state, losing_stops(t, avoid=("DH",)), Bet(1))
    assert out.progressive_contribution == 0 and state.progressive_carry == 0  # max bet only


# --- Diamond Mine Deluxe -------------------------------------------------------------------------------

def test_one_2x_doubles_two_quadruple_except_three_double_diamonds() -> None:
    t = get_title("diamond-mine-deluxe")
    s = new_state(t)
    _, out = spin(s, stops_for(t, "7R", "2X", "7R"), MAX)
    assert (out.line_wins[0].combo, out.line_wins[0].multiplier, out.won) == ("7R 7R 7R", 2, 600)
    _, out = spin(s, stops_for(t, "2X", "7R", "2X"), MAX)
    assert (out.line_wins[0].multiplier, out.won) == (4, 1200)
    _, out = spin(s, stops_for(t, "2X", "CH", "--"), Bet(1))  # the 2x stands in for a second cherry
    assert (out.line_wins[0].combo, out.won) == ("2 CH anywhere", 10)
    # the exception: two 2x making three Double Diamonds pay the plain award
    _, out = spin(s, stops_for(t, "2X", "DD", "2X"), MAX)
    assert (out.line_wins[0].combo, out.line_wins[0].multiplier, out.won) == ("DD DD DD", 1, 1200)
    _, out = spin(s, stops_for(t, "DD", "2X", "DD"), MAX)
    assert out.won == 2400
    _, out = spin(s, stops_for(t, "2X", "2X", "2X"), MAX)
    assert (out.line_wins[0].combo, out.won) == ("2X 2X 2X", 5000)


# --- El Toro -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("choice,draw,credits", [("matador", 0, 200), ("bull", 1, 200), ("matador", 1, 10),
                                                 ("bull", 0, 10)])
def test_bullfight_pays_200_for_the_right_pick_and_10_for_the_wrong(choice: str, draw: int, credits: int) -> None:
    t = get_title("el-toro")
    state, out = spin(new_state(t), stops_for(t, "MT", "--", "BL"), MAX)
    assert state.pending == "bullfight" and out.pending == "bullfight"
    with pytest.raises(SlotError, match="pick"):
        spin(state, losing_stops(t), MAX)
    state, out = pick(state, choice, draw)
    assert out.won == credits and out.awards[0].feature == "bullfight" and state.pending is None
    spin(state, losing_stops(t), MAX)


def test_bullfight_needs_three_coins_and_a_fair_draw() -> None:
    t = get_title("el-toro")
    state, _ = spin(new_state(t), stops_for(t, "MT", "--", "BL"), Bet(2))
    assert state.pending is None
    state, _ = spin(new_state(t), stops_for(t, "MT", "--", "BL"), MAX)
    with pytest.raises(SlotError):
        pick(state, "picador", 0)
    with pytest.raises(SlotError):
        pick(state, "bull", 2)
    rng = SeededRng(5)
    draws = [draw_pick(state, rng) for _ in range(2000)]
    assert set(draws) == {0, 1} and 900 < sum(draws) < 1100


def test_the_rose_matches_anything_but_the_matador_and_the_bull() -> None:
    t = get_title("el-toro")
    assert t.line_eval(("SB", "RS", "SB")).at(3).credits == 600
    bullfight = t.features[0]
    assert bullfight.line_fact(("MT", "RS", "BL")) == 1
    assert bullfight.line_fact(("MT", "RS", "RS")) == 0 and bullfight.line_fact(("RS", "--", "BL")) == 0
    state, _ = spin(new_state(t), stops_for(t, "MT", "RS", "RS"), MAX)
    assert state.pending is None


# --- Frozen Assets -------------------------------------------------------------------------------------

def test_snowflakes_at_max_coins_fill_the_snowman_and_suns_move_credits_to_the_bonus() -> None:
    t = get_title("frozen-assets")
    state = new_state(t)
    assert dict(state.meters) == {"snowman": 0, "snowman_bonus": 500}
    state, _ = spin(state, stops_for(t, "SF", "SF", "--"), Bet(2))
    assert state.meters["snowman"] == 0  # not at max coins
    state, _ = spin(state, stops_for(t, "SF", "SF", "SF"), MAX)
    assert dict(state.meters) == {"snowman": 3, "snowman_bonus": 500}
    state, out = spin(state, stops_for(t, "SN", "SF", "SN"), MAX)
    assert dict(state.meters) == {"snowman": 2, "snowman_bonus": 502} and out.won == 0
    state = with_meters(new_state(t))
    state, _ = spin(state, stops_for(t, "SN", "--", "--"), MAX)
    assert dict(state.meters) == {"snowman": 0, "snowman_bonus": 500}  # nothing to move at zero


def test_the_snowman_at_200_wins_the_bonus_which_defaults_back_to_500() -> None:
    t = get_title("frozen-assets")
    state = with_meters(new_state(t), snowman=198, snowman_bonus=617)
    state, out = spin(state, stops_for(t, "SF", "SF", "SN"), MAX)
    # 198 + 2 flakes = 200, the sun moves one to the bonus first: 199, 618 -> not yet
    assert dict(state.meters) == {"snowman": 199, "snowman_bonus": 618} and out.won == 0
    state, out = spin(state, stops_for(t, "SF", "--", "--"), MAX)
    assert out.won == 618 and out.awards[0].feature == "snowman"
    assert dict(state.meters) == {"snowman": 0, "snowman_bonus": 500}


def test_the_penguin_matches_anything_but_the_snowflake_and_the_sun() -> None:
    t = get_title("frozen-assets")
    assert t.line_eval(("PB", "PN", "PB")).at(3).credits == 600
    assert t.features[0].line_fact(("SF", "PN", "PN")) == 4  # one snowflake; the penguins are not snowflakes


# --- High Rollers and Pharaoh's Gold ------------------------------------------------------------------

def test_high_rollers_plays_up_to_five_lines_of_one_coin() -> None:
    t = get_title("high-rollers")
    assert [b.total for b in t.bets()] == [1, 2, 3, 4, 5]
    with pytest.raises(SlotError):
        spin(new_state(t), losing_stops(t), Bet(2, 1))
    # a window with VW Bus on the top row and the diagonal down
    stops = (reel_stop(t, 0, "--", above="VW"), reel_stop(t, 1, "--", above="VW"), reel_stop(t, 2, "--", above="VW"))
    _, out = spin(new_state(t), stops, Bet(1, 5))
    assert [(w.line, w.combo) for w in out.line_wins] == [(2, "VW VW VW")]
    _, out = spin(new_state(t), stops, Bet(1, 1))
    assert out.line_wins == () and out.cost == 1  # line 2 is not played


def test_the_peace_sign_shows_as_vw_buses_when_it_makes_three_vw_buses() -> None:
    t = get_title("high-rollers")
    _, out = spin(new_state(t), stops_for(t, "VW", "PS", "VW"), Bet(1, 5))
    centre = [w for w in out.line_wins if w.line == 1][0]
    assert (centre.combo, centre.credits, centre.wilds, centre.morph) == ("VW VW VW", 600, (1,), "VW")
    _, out = spin(new_state(t), stops_for(t, "LL", "PS", "LL"), Bet(1, 1))
    assert (out.line_wins[0].combo, out.line_wins[0].morph) == ("LL LL LL", None)


def test_pharaohs_eye_morphs_into_the_winning_symbol_on_three_lines() -> None:
    t = get_title("pharaohs-gold")
    assert t.lines == 3 and t.max_bet == Bet(1, 3)
    _, out = spin(new_state(t), stops_for(t, "SC", "EY", "SC"), Bet(1, 3))
    centre = [w for w in out.line_wins if w.line == 1][0]
    assert (centre.combo, centre.morph, centre.credits) == ("SC SC SC", "SC", 100)
    _, out = spin(new_state(t), stops_for(t, "PY", "EY", "CM"), Bet(1, 1))
    assert (out.line_wins[0].combo, out.line_wins[0].morph) == ("AT AT AT", "PY")


# --- It's Good to be Bad -------------------------------------------------------------------------------

def test_four_losses_in_a_row_bank_a_free_winning_spin_and_a_win_clears_both_meters() -> None:
    t = get_title("its-good-to-be-bad")
    lose = losing_stops(t)
    state = new_state(t)
    for n in range(1, 9):
        state, _ = spin(state, lose, MAX)
        assert state.meters["loss_meter"] == n and state.meters["free_winning_spins"] == n // 4
    assert t.features[0].losses_to_next(state) == 4
    state, out = spin(state, stops_for(t, "CH", "--", "--"), MAX)
    assert dict(state.meters) == {"loss_meter": 0, "free_winning_spins": 0} and out.won == 3
    # below max bet losses do not count
    state, _ = spin(state, lose, Bet(1))
    assert state.meters["loss_meter"] == 0


def test_29_losses_in_a_row_win_the_progressive() -> None:
    t = get_title("its-good-to-be-bad")
    state = with_meters(new_state(t), loss_meter=28, free_winning_spins=7)
    state, out = spin(state, losing_stops(t), MAX)
    assert out.progressive_hit and dict(state.meters) == {"loss_meter": 0, "free_winning_spins": 0}


def test_cash_in_turns_banked_spins_into_free_winning_spins_and_ends_the_streak() -> None:
    t = get_title("its-good-to-be-bad")
    with pytest.raises(SlotError, match="no free winning spins"):
        cash_in(new_state(t))
    state = with_meters(new_state(t), loss_meter=9, free_winning_spins=2)
    state, out = cash_in(state)
    assert out.kind == "cash_in" and out.won == 0 and out.free_spins_left == 2
    assert dict(state.meters) == {"loss_meter": 0, "free_winning_spins": 0}
    assert state.free.guaranteed and state.free.bet == MAX
    with pytest.raises(SlotError):
        cash_in(state)
    rng = SeededRng(8)
    total = 0
    for _ in range(2):
        state, out = spin(state, draw_stops(state, rng), MAX)
        assert out.free_spin and out.won > 0
        total += out.won
    assert state.free is None


# --- Light Speed ---------------------------------------------------------------------------------------

def test_light_speed_icons_raise_the_meter_and_a_win_pays_times_the_level_then_resets() -> None:
    t = get_title("light-speed")
    state = new_state(t)
    assert state.meters["light_speed"] == 1
    state, _ = spin(state, stops_for(t, "LS", "--", "LS"), MAX)
    assert state.meters["light_speed"] == 3
    state, _ = spin(state, stops_for(t, "LS", "LS", "LS"), MAX)
    state, _ = spin(state, stops_for(t, "LS", "LS", "LS"), MAX)
    assert state.meters["light_speed"] == 7  # the top level
    state, out = spin(state, stops_for(t, "UF", "UF", "UF"), MAX)
    assert (out.line_wins[0].multiplier, out.won) == (7, 7 * 180) and state.meters["light_speed"] == 1
    # the level reached on the winning spin itself counts
    state, out = spin(state, stops_for(t, "ST", "LS", "--"), MAX)
    assert out.won == 2 * 6 and state.meters["light_speed"] == 1
    # below max bet the meter neither moves nor multiplies
    state, out = spin(with_meters(state, light_speed=5), stops_for(t, "UF", "UF", "UF"), Bet(1))
    assert out.won == 60 and state.meters["light_speed"] == 5


def test_three_laser_guns_at_7x_win_the_progressive_the_robot_is_not_light_speed() -> None:
    t = get_title("light-speed")
    state, out = spin(with_meters(new_state(t), light_speed=7), stops_for(t, "LG", "RB", "LG"), MAX)
    assert out.progressive_hit and out.won == 0 and state.meters["light_speed"] == 1
    state, out = spin(with_meters(new_state(t), light_speed=6), stops_for(t, "LG", "LG", "LG"), MAX)
    assert not out.progressive_hit and out.won == 6 * 150
    assert t.features[0].line_fact(("RB", "RB", "--")) == 0


# --- Operation M.Y.O.W. --------------------------------------------------------------------------------

def test_five_paytables_on_the_same_reels_and_next_paytable_cycles() -> None:
    t = get_title("operation-myow")
    assert [(p.name, p.color) for p in t.paytables] == [
        ("Lucky", "White"), ("Catman", "Purple"), ("Kung Fu Kitty", "Yellow"), ("Catzilla", "Green"),
        ("The King", "Pink")]
    state = new_state(t)
    pays = []
    for expected in (1, 2, 3, 4, 0):
        _, out = spin(state, stops_for(t, "CK", "CK", "CK"), MAX)
        pays.append(out.won)
        state, out = next_paytable(state)
        assert state.paytable == expected and out.kind == "paytable"
    assert pays[4] == 10_000 and len(set(pays)) > 1
    for i, lucky in enumerate(("CW", "CP", "CY", "CG", "CK")):
        assert t.paytables[i].rows[0].text == f"{lucky} {lucky} {lucky}"
    with pytest.raises(SlotError):
        select_paytable(state, 5)
