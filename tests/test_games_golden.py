"""Every game's outputs stay byte for byte what tests/data/games_golden.json recorded: recorded journals replay to the
same effects, snapshots, views and expected-next, and the same seeded play takes the same events and refusals."""

from __future__ import annotations

import json

import pytest

from controller.games import game_names
from tests.golden_games import FIXTURE, PLAYS, record, replay

GOLDEN = json.loads(FIXTURE.read_text())


def test_the_fixture_covers_every_game() -> None:
    assert sorted(GOLDEN) == game_names()


CASES = [(name, play) for name in sorted(GOLDEN) for play in PLAYS]


@pytest.mark.parametrize(("name", "play"), CASES)
def test_a_recorded_journal_replays_to_the_same_outputs(name: str, play: str) -> None:
    steps = GOLDEN[name][play]["steps"]
    assert replay(name, [event for event, _ in steps]) == [digest for _, digest in steps]


@pytest.mark.parametrize(("name", "play"), CASES)
def test_seeded_play_takes_the_same_events_and_refusals(name: str, play: str) -> None:
    assert record(name, play) == GOLDEN[name][play]
