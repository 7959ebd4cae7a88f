"""Screens, issue 38: no burn card in any screen-facing view; the baccarat derived roads and their ask preview; a layout of its own for every game."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.games import game_names
from controller.games.texas_holdem import GAME as HOLDEM
from controller.screens.roads import ask, columns, derived, derived_roads
from controller.views import ScreenViews, leaks, project, screen_views
from tests.test_texas_holdem import Hand

# ---------------------------------------------------------------------------------------------------
# 1. A burn card is never shown


def _holdem_on_the_river() -> dict[str, Any]:
    """A runtime picture of a hold'em hand dealt to the river: three burns lie under the board."""
    h = Hand({2: 100, 5: 100, 7: 100})
    h.deal()
    h.act(2, "call")
    h.act(5, "call")
    h.act(7, "check")
    h.deal()
    for _ in ("flop", "turn"):
        for spot in (5, 7, 2):
            h.act(spot, "check")
        h.deal()
    game = HOLDEM.snapshot(h.state)
    assert len(game["burns"]) == 3 and len(game["board"]) == 5
    return {"table": "holdem-1", "seq": 9, "game": game, "last_round": game, "history": []}


def test_no_screen_view_of_holdem_carries_a_burn_card() -> None:
    picture = _holdem_on_the_river()
    views = [project(picture, "public"), project(picture, "dealer"), *screen_views(picture).values()]
    built, texts = ScreenViews()(picture)
    views += built.values()
    for view in views:
        assert "burns" not in view["game"] and "burns" not in view["last_round"]
        assert leaks(view) == []
        # nothing but the hole cards lies face down: no card back stands for a burn either
        downs = json.dumps(view).count('"up": false')
        assert downs == 2 * 2 * 3   # two hole cards of three seats, in the game and the last round
    for text in texts.values():
        assert '"burns"' not in text
    assert "burns" in project(picture, "audit")["game"]   # the audit view keeps them
    assert "the burn cards" in leaks(picture)


# ---------------------------------------------------------------------------------------------------
# 2. Baccarat's derived roads
#
# The rules as the published scoreboard guides state them:
# - OG's road map rules (https://og-plus.oss-accelerate.aliyuncs.com/v6/rule/roadmap.html): the big eye
#   road starts at column 2, row 2 of the big road, or column 3, row 1 when there is no mark there; a
#   mark going down is blue when the column before has no mark on that row, a new column is blue when the
#   two columns before it differ in length, red otherwise;
# - sikwin's "five road rules" (https://www.sikwin.in/sikwin-casino-baccarat-game-rules-five-road-rules/)
#   and the Wizard of Odds' "Baccarat Score Boards" (mirrored at
#   https://internetradiomercedes.com/games/baccarat/history): the small road and the cockroach pig are
#   the same rule one and two columns further left (start at column 3 and column 4, row 2), and an empty
#   cell under an empty cell ("straight drop") is red.
# The examples below are worked from those rules by hand, mark by mark (the guides show theirs as
# pictures); each comment names the big road cell (column, row, from 1) and the cell the rule looks at.

B, P, T = "banker", "player", "tie"

# Big road: col 1 B B | col 2 P P P | col 3 B | col 4 P P | col 5 B B B B | col 6 P
SHOE = [B, B, P, P, P, B, P, P, B, B, B, B, P]


def test_the_big_road_columns_are_the_streaks_and_ties_add_nothing() -> None:
    assert columns(SHOE) == [2, 3, 1, 2, 4, 1]
    assert columns([T, B, T, T, B, P, T]) == [2, 1]
    with pytest.raises(ValueError, match="winner: 'x'"):
        columns([B, "x"])


def test_big_eye_boy_worked_example() -> None:
    # c2r2 left c1r2 filled: red | c2r3 left c1r3 empty under c1r2 filled: blue | c3r1 c2(3) vs c1(2): blue
    # c4r1 c3(1) vs c2(3): blue | c4r2 left c3r2 empty under c3r1: blue | c5r1 c4(2) vs c3(1): blue
    # c5r2 left c4r2 filled: red | c5r3 left c4r3 empty under c4r2: blue | c5r4 c4r4, c4r3 empty: red
    # c6r1 c5(4) vs c4(2): blue
    assert derived(SHOE, 1) == ["red", "blue", "blue", "blue", "blue", "blue", "red", "blue", "red", "blue"]


def test_small_road_worked_example() -> None:
    # c3r1 is column 3's first mark with no second: starts at c4r1 | c4r1 c3(1) vs c1(2): blue
    # c4r2 left two, c2r2 filled: red | c5r1 c4(2) vs c2(3): blue | c5r2 c3r2 empty under c3r1: blue
    # c5r3 c3r3, c3r2 empty: red | c5r4 red | c6r1 c5(4) vs c3(1): blue
    assert derived(SHOE, 2) == ["blue", "red", "blue", "blue", "red", "red", "blue"]


def test_cockroach_pig_worked_example() -> None:
    # starts at c4r2: left three, c1r2 filled: red | c5r1 c4(2) vs c1(2): red | c5r2 c2r2 filled: red
    # c5r3 c2r3 filled: red | c5r4 c2r4 empty under c2r3: blue | c6r1 c5(4) vs c2(3): blue
    assert derived(SHOE, 3) == ["red", "red", "red", "red", "blue", "blue"]


def test_derived_roads_start_where_the_guides_say() -> None:
    assert derived([B, P], 1) == []                     # c2r1: column 2 has no second mark yet
    assert derived([B, P, P], 1) == ["blue"]            # c2r2: c1r2 empty under c1r1
    assert derived([B, P, B], 1) == ["red"]             # c3r1: c2(1) and c1(1) equal
    assert derived([B, P, P, P], 1) == ["blue", "red"]  # c2r3: c1r3 and c1r2 empty: straight drop, red
    assert derived([B, P, B], 2) == [] and derived([B, P, B, B], 2) == ["blue"]   # c3r2: c1r2 empty
    assert derived([B, P, B, P], 2) == ["red"]          # c4r1: c3(1), c1(1)
    assert derived([B, P, B, P], 3) == [] and derived([B, P, B, P, B], 3) == ["red"]
    # a dragon tail is still its streak's column; ties change nothing
    assert derived([B] * 8 + [P, P], 1) == ["red"]      # c2r2: column 1 is eight long
    tied = [T, B, B, T, P, P, T, P, B, T, P, P, B, B, B, B, P, T]
    assert derived_roads(tied) == derived_roads(SHOE)


def test_ask_is_what_the_next_banker_or_player_win_adds() -> None:
    # next banker: c7r1: c6(1) vs c5(4) blue, vs c4(2) blue, vs c3(1) red
    # next player: c6r2: c5r2 filled red, c4r2 filled red, c3r2 empty under c3r1 blue
    assert ask(SHOE) == {"banker": {"big_eye_boy": "blue", "small_road": "blue", "cockroach_pig": "red"},
                         "player": {"big_eye_boy": "red", "small_road": "red", "cockroach_pig": "blue"}}
    assert ask([B]) == {"banker": dict.fromkeys(("big_eye_boy", "small_road", "cockroach_pig")),
                        "player": dict.fromkeys(("big_eye_boy", "small_road", "cockroach_pig"))}
    for side in (B, P):
        after = derived_roads([*SHOE, side])
        assert {name: marks[-1] for name, marks in after.items()} == ask(SHOE)[side]


# ---------------------------------------------------------------------------------------------------
# 3. A layout of its own for every game (tests/test_screens_fit.py checks each in Chromium)

def test_every_game_has_a_layout_module_of_its_own() -> None:
    from controller.screens.pages import GAME_LAYOUTS, PAGES, render_page

    games = game_names()
    assert sorted(GAME_LAYOUTS) == sorted(games)
    shell = render_page(PAGES["table"], "t-1", {})
    for name in games:
        assert f'<script src="/static/games/{name}.js"></script>' in shell
        text = (Path(__file__).resolve().parents[1] / "controller/screens/static/games" / f"{name}.js").read_text()
        assert f'Felt.register("{name}"' in text
    felt = (Path(__file__).resolve().parents[1] / "controller/screens/static/felt.js").read_text()
    assert "function generic(" not in felt
