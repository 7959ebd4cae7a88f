"""Screens, issue 38: no burn card in any screen-facing view; the baccarat derived roads and their ask preview; a layout of its own for every game."""

from __future__ import annotations

import json
from typing import Any

import pytest

from controller.games.texas_holdem import GAME as HOLDEM
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
