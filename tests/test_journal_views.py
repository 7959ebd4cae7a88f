"""The journal survives reopening, refuses a tampered chain, commits groups atomically; views hide face-down cards."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from controller.journal import Journal, JournalIntegrityError, canonical_json
from controller.views import ScreenViews, leaks, project


def test_append_reopen_and_replay(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with Journal(path, "bj-1") as j:
        e1 = j.append({"kind": "game", "event": {"kind": "open_bets"}})
        e2 = j.append({"kind": "game", "event": {"kind": "place_bet", "spot": 1, "box": "main", "amount": 5}})
        assert (e1.seq, e2.seq) == (1, 2) and e1.hash != e2.hash
        group = j.append_many([{"kind": "a"}, {"kind": "b"}])
        assert [e.seq for e in group] == [3, 4]
    with Journal(path, "bj-1") as j:
        assert j.last_seq == 4
        assert [e.record["kind"] for e in j.entries()] == ["game", "game", "a", "b"]
        assert [e.seq for e in j.entries(after=2)] == [3, 4]
        assert j.append({"kind": "c"}).seq == 5


def _tamper(path: Path, sql: str, *args: object) -> None:
    db = sqlite3.connect(path)
    db.execute(sql, args)
    db.commit()
    db.close()


@pytest.mark.parametrize("sql, args, message", [
    ("UPDATE journal SET record = ? WHERE seq = 2", ('{"kind":"game","amount":500}',), "altered"),
    ("DELETE FROM journal WHERE seq = 2", (), "rows missing"),
    ("UPDATE journal SET prev_hash = ? WHERE seq = 3", ("0" * 64,), "chain broken"),
    ("UPDATE journal SET ts_ns = ts_ns + 1 WHERE seq = 1", (), "altered"),
])
def test_a_broken_chain_refuses_to_open(tmp_path: Path, sql: str, args: tuple, message: str) -> None:
    path = tmp_path / "t.db"
    with Journal(path, "t") as j:
        for i in range(4):
            j.append({"kind": "x", "i": i})
    _tamper(path, sql, *args)
    with pytest.raises(JournalIntegrityError, match=message):
        Journal(path, "t")


def test_a_journal_belongs_to_one_table(tmp_path: Path) -> None:
    Journal(tmp_path / "t.db", "table-a").close()
    with pytest.raises(JournalIntegrityError, match="table 'table-a'"):
        Journal(tmp_path / "t.db", "table-b")


def test_truncated_tail_is_consistent(tmp_path: Path) -> None:
    # Deleting the newest rows leaves a valid shorter chain: what was never committed never happened.
    path = tmp_path / "t.db"
    with Journal(path, "t") as j:
        for i in range(5):
            j.append({"i": i})
    _tamper(path, "DELETE FROM journal WHERE seq > 3")
    with Journal(path, "t") as j:
        assert j.last_seq == 3 and j.append({"i": 3}).seq == 4


def test_canonical_json() -> None:
    assert canonical_json({"b": 1, "a": [1, "é"]}) == '{"a":[1,"é"],"b":1}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


STATE = {
    "game": {"game": "blackjack", "round": 3, "phase": "deciding", "bets": [],
             "dealer": {"cards": [{"card": "AS", "up": True}, {"card": "KD", "up": False}]},
             "spots": [{"cards": [{"card": "9H", "up": True}, {"card": "2C", "up": True}]}],
             "audit": {"dealer_total": 21}},
    "dealer_only": {"alerts": ["misdeal"]},
}


def test_screen_views_hide_face_down_cards_and_audit() -> None:
    for audience in ("public", "dealer"):
        view = project(STATE, audience)
        assert leaks(view) == []
        assert view["game"]["dealer"]["cards"][1] == {"card": None, "up": False}
        assert view["game"]["dealer"]["cards"][0] == {"card": "AS", "up": True}
        assert "audit" not in view["game"]
    assert "dealer_only" in project(STATE, "dealer") and "dealer_only" not in project(STATE, "public")
    audit = project(STATE, "audit")
    assert sorted(leaks(audit)) == ["KD", "an audit section"]
    with pytest.raises(ValueError, match="unknown view"):
        project(STATE, "player")


def test_screen_views_encode_a_list_section_entry_by_entry() -> None:
    # The history gains an entry a round and drops the oldest; the runtime keeps the others' masked copies and
    # texts. Whatever the list does, the views and their texts must be exactly a fresh projection's.
    screens = ScreenViews()
    down = {"round": 3, "cards": [{"card": "KD", "up": False}], "audit": {"total": 10}}
    entries = [{"round": 1, "won": 5}, {"round": 2, "won": -5}, down, 7, "text", None, []]
    history: list = []
    for step in range(3 * len(entries)):
        if step < len(entries):
            history = history + [entries[step]]          # a new entry, the others the same objects
        elif step % 3:
            history = history[1:]                         # the oldest dropped
        else:
            history = history + [history[0]]              # the same entry twice
        pic = {"game": {"round": step}, "history": history, "scoreboard": [] if step % 2 else [down]}
        views, texts = screens(pic)
        for audience in ("public", "dealer"):
            assert views[audience] == project(pic, audience) and texts[audience] == json.dumps(views[audience])
            assert leaks(views[audience]) == []
    # an entry with nothing to hide is shared, not copied
    views, _ = screens({"history": [entries[0], down]})
    assert views["public"]["history"][0] is entries[0] and views["public"]["history"][1] is not down
