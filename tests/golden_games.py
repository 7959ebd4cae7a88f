"""Golden record of every game's outputs: seeded rounds' events, effects, refusals, snapshots, expected-next and
screen views, so a refactor of the games can be checked byte for byte against the code that recorded them.

`record(name)` plays seeded rounds of one game through the game harness (voids included) and returns, per step,
the event's JSON and a digest of everything the step produced; `python -m tests.golden_games` rewrites the fixture
(only with code known to be right: the fixture is the reference).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any, Callable

from controller.games import game_names, get_game
from controller.games.base import Event, Expected, GameSpec, IllegalEvent, event_from_json
from controller.views import screen_views

FIXTURE = Path(__file__).parent / "data" / "games_golden.json"
# (seed, rounds, void chance) of each recorded play: whole rounds to settlement, and rounds voided on the way.
PLAYS = {"settled": (21, 2, 0), "voided": (22, 3, 25)}


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=False, separators=(",", ":"))


def _expected(exp: Expected) -> dict[str, Any]:
    return {f.name: getattr(exp, f.name) for f in dataclasses.fields(exp)}


def step_digest(game: GameSpec[Any], state: Any, effects: tuple[Any, ...]) -> str:
    """A digest of what one step shows the world: its effects, the snapshot, both screen views, what is expected."""
    snap = game.snapshot(state)
    views = screen_views(snap)
    text = _text([[e.to_json() for e in effects], snap, views["public"], views["dealer"],
                  _expected(game.expected_next(state))])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def record(name: str, play: str) -> dict[str, Any]:
    """Play the game's seeded rounds; every applied event with its step digest, and every refusal's reason."""
    from tests import game_harness

    refusals = hashlib.sha256()

    def wrap(game: GameSpec[Any]) -> Callable[[Any, Event], Any]:
        def apply(state: Any, event: Event) -> Any:
            try:
                return game.apply(state, event)
            except IllegalEvent as exc:
                refusals.update(_text([event.to_json(), exc.reason]).encode())
                raise
        return apply

    seed, rounds, void_chance = PLAYS[play]
    journal: list[Event] = []
    game_harness.play_game(name, seed, rounds, apply=wrap, journal=journal, void_chance=void_chance)
    events = [event.to_json() for event in journal]
    return {"steps": [[e, d] for e, d in zip(events, replay(name, events))], "refusals": refusals.hexdigest()[:16]}


def replay(name: str, events: list[dict[str, Any]]) -> list[str]:
    """The step digests of a recorded journal replayed through today's game."""
    game = get_game(name)
    state = game.new_table(game.rules({}))
    out = []
    for data in events:
        state, effects = game.apply(state, event_from_json(data))
        out.append(step_digest(game, state, effects))
    return out


def main() -> None:
    FIXTURE.parent.mkdir(exist_ok=True)
    data = {name: {play: record(name, play) for play in PLAYS} for name in game_names()}
    FIXTURE.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"{FIXTURE}: {len(data)} games, {sum(len(p['steps']) for d in data.values() for p in d.values())} steps")


if __name__ == "__main__":
    main()
