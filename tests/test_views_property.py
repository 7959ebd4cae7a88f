"""Property: over a thousand random rounds of every game (5,000 with --long; the games with long rounds fewer), no face-down card reaches a screen-facing view."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from controller.games.base import Event, GameSpec
from controller.views import ScreenViews, leaks, project
from tests.game_harness import play_game

GAMES = ["blackjack", "baccarat", "chemin-de-fer", "three-card-poker", "let-it-ride", "caribbean-stud",
         "trente-et-quarante", "faro", "stuss", "in-between", "red-dog", "high-card-pool", "pontoon",
         "pai-gow", "pusoy", "texas-holdem", "big-two"]
# Games whose rounds are long (a whole pack dealt, dozens of plays) run fewer rounds (ten times as many with --long).
SHORTER = {"pusoy": 100, "big-two": 40, "pai-gow": 150, "texas-holdem": 250}
CARD = re.compile(r'"card": "([2-9TJQKA][CDHS]|JK)"')


def _face_down_and_up(node: Any, down: list[str], up: list[str]) -> None:
    if isinstance(node, dict):
        if "card" in node and isinstance(node.get("up"), bool) and node["card"]:
            (up if node["up"] else down).append(node["card"])
        for value in node.values():
            _face_down_and_up(value, down, up)
    elif isinstance(node, list):
        for value in node:
            _face_down_and_up(value, down, up)


def check_views(game: GameSpec, state: Any, screens: ScreenViews) -> None:
    # The game's part of the picture is what can hold cards; the runtime adds none (tested in test_table).
    pic = {"game": game.snapshot(state)}
    down: list[str] = []
    up: list[str] = []
    _face_down_and_up(pic, down, up)
    view = project(pic, "public")  # the dealer view masks cards identically
    assert leaks(view) == [], f"{game.name} view leaks {leaks(view)}"
    # What the runtime publishes, record after record (it masks a section at once while it needed masking
    # last time, and shares one that shows no face-down card): the same view, and exactly its JSON.
    published, texts = screens(pic)
    assert published["public"] == view and texts["public"] == json.dumps(view)
    hidden = set(down) - set(up)
    if hidden:
        # A card's identity may appear in a screen view only where that card (or an identical one from
        # another deck) lies face up: not in a hand name, a total, or any other field.
        shown = set(CARD.findall(json.dumps(view)))
        assert not hidden & shown, f"{game.name} view shows face-down {sorted(hidden & shown)}"


def _rounds_for(name: str, long: bool) -> int:
    if name in SHORTER:
        return 10 * SHORTER[name] if long else SHORTER[name]
    return 5000 if long else 1000


@pytest.mark.slow
@pytest.mark.parametrize("name", GAMES)
def test_no_face_down_card_on_a_screen(name: str, request: pytest.FixtureRequest) -> None:
    screens = ScreenViews()

    def checking(game: GameSpec) -> Any:
        def apply(state: Any, event: Event) -> Any:
            new, effects = game.apply(state, event)
            check_views(game, new, screens)
            return new, effects
        return apply

    play_game(name, 11, _rounds_for(name, request.config.getoption("--long")), checking)
