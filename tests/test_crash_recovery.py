"""Crash test: a simulated table SIGKILLed at 200 seeded points (mid-bet, mid-deal, mid-settlement) and restarted
each time loses no bet, pays none twice, resumes the round in progress, and its meters equal its settlements."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from controller.games.base import RoundSettled, RoundVoided, StakeChanged, event_from_json
from controller.journal import Journal
from controller.tablestate import new_state, step
from tests import crash_driver
from tests.table_helpers import table_config


@pytest.mark.parametrize("game, kills", [("baccarat", 200), ("blackjack", 40)])
def test_kill_and_restart(tmp_path: Path, game: str, kills: int) -> None:
    cfg = table_config(tmp_path, game, seed=2026)
    kill_lines = crash_driver.run(cfg, tmp_path, kills)

    # Where the kills landed: inside betting, dealing and settlement, not only between rounds.
    landed = Counter((x["record"] or {}).get("event", {}).get("kind") for x in kill_lines if x["record"])
    assert landed["place_bet"] and landed["card_dealt"], landed
    if kills >= 100:
        assert landed["settle"], landed  # a kill right after a settlement was journaled
    if game == "blackjack":
        assert landed["decision"], landed

    with Journal(cfg.journal, cfg.table_id) as j:   # the chain verifies after every crash
        records = [e.record for e in j.entries()]
    state = new_state(cfg.table_id, cfg.game, cfg.rules)
    settled: Counter[int] = Counter()
    opened = 0
    committed = stakes = returned = 0
    for r in records:
        state, effects = step(state, r)  # the journal replays cleanly
        if r["kind"] == "game" and r["event"]["kind"] == "open_bets":
            opened += 1
            assert opened == sum(settled.values()) + 1, "a new round opened before the last one settled"
        for e in effects:
            if isinstance(e, StakeChanged):
                committed += e.delta
            elif isinstance(e, RoundSettled):
                settled[e.round] += 1
                assert e.settlement.stakes == committed, f"round {e.round}: stakes lost or invented"
                committed = 0
                stakes += e.settlement.stakes
                returned += e.settlement.returned
            elif isinstance(e, RoundVoided):
                pytest.fail(f"round {e.round} was voided: a crash must resume, not void")
    assert settled and max(settled.values()) == 1, "a round was paid twice"
    assert sorted(settled) == list(range(1, len(settled) + 1))
    assert committed == 0 and opened == len(settled), "the last round was left unsettled"
    assert state.meters.rounds == len(settled)
    assert (state.meters.handle, state.meters.returned) == (stakes, returned)
    assert state.meters.power_ups == kills + 1
    assert all(event_from_json(r["event"]) for r in records if r["kind"] == "game")


def _damage(journal: Path, how: str) -> None:
    import sqlite3

    wal, shm = (journal.with_name(journal.name + suffix) for suffix in ("-wal", "-shm"))
    if how == "wal deleted":
        assert wal.stat().st_size > 0, "the kill left no WAL: nothing to lose"
        wal.unlink()
        shm.unlink(missing_ok=True)
        return
    db = sqlite3.connect(journal)
    if how == "last rows deleted":
        db.execute("DELETE FROM journal WHERE seq > (SELECT max(seq) - 5 FROM journal)")
        db.commit()
    else:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every row in the file itself, then it loses its end
    db.close()
    for f in (wal, shm):
        f.unlink(missing_ok=True)
    size = journal.stat().st_size
    if how == "truncated":
        with open(journal, "r+b") as fh:
            fh.truncate(size * 2 // 3)
    elif how == "zero bytes":
        journal.write_bytes(b"")
    elif how == "zeroed":
        journal.write_bytes(bytes(size))
    elif how == "deleted":
        journal.unlink()


TAIL_LOSS = {
    "wal deleted": r"(ends at row \d+|is empty \(0 bytes\)), but its anchor .* says (row \d+ was committed|\d+ rows were)",
    "last rows deleted": r"ends at row (\d+), but its anchor .* says row \d+ was committed: rows \d+ to \d+ are missing",
    "truncated": r"is truncated: \d+ bytes of the \d+ its header records \(the last \d+ pages are missing\)",
    "zero bytes": r"is empty \(0 bytes\), but its anchor .* says \d+ rows were committed: all \d+ rows are missing",
    "zeroed": r"is damaged: its SQLite header is gone \(the file was zeroed or overwritten\)",
    "deleted": r"is missing, but its anchor .* says \d+ rows were committed: all \d+ rows are missing",
}


def test_tail_loss_after_a_kill_refuses_to_start(tmp_path: Path) -> None:
    """After a SIGKILL, whatever takes the journal's tail (the WAL deleted, the last rows deleted, the file
    truncated, emptied, zeroed or deleted), every start refuses with exit 2 and one line naming what is missing,
    and leaves the evidence as it found it."""
    import re
    import shutil
    import subprocess
    import sys

    from controller.cli import main
    from controller.commands.table import _toml

    killed = tmp_path / "killed"
    killed.mkdir()
    cfg = table_config(killed, "baccarat", seed=2026)
    crash_driver.run(cfg, killed, 3, 30, end_killed=True)
    assert cfg.journal.with_name(cfg.journal.name + "-wal").exists(), "the last life was killed, its WAL is there"
    for how, message in TAIL_LOSS.items():
        folder = tmp_path / how.replace(" ", "-")
        shutil.copytree(killed, folder)
        damaged = table_config(folder, "baccarat", seed=2026)
        config = folder / "table.toml"
        config.write_text(_toml(dict(damaged.raw)))
        assert main(["journal", "verify", "--config", str(config)]) == 0, how  # the copy was whole
        _damage(damaged.journal, how)
        evidence = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
        out = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config", str(config)],
                             cwd=crash_driver.ROOT, capture_output=True, text=True, timeout=60, check=False)
        assert out.returncode == 2, (how, out.stderr[-2000:])
        assert re.search(message, out.stderr) and out.stderr.count("\n") == 1, (how, out.stderr)
        assert "will not run on a broken journal" in out.stderr
        assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == evidence, how
