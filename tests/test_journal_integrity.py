"""A journal that lost rows, was forged or is damaged refuses, with exit 2 and one line naming what is missing or
wrong: a keyed MAC chain, an anchor outside the database, read-only recall/meters, `croupier journal verify`."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.cli import main
from controller.config import load_config
from controller.journal import Journal, JournalIntegrityError
from controller.rng import SeededRng
from controller.table import Table
from tests.table_helpers import play_config, table_toml

ROOT = Path(__file__).resolve().parent.parent


def write_config(tmp: Path, extra: str = "", journal: str = "t.journal") -> Path:
    return table_toml(tmp, "t1", journal=journal, extra=extra)


play = play_config


def start(path: Path) -> None:
    """Start the table on its journal and stop it again; a refusal raises."""
    async def run() -> None:
        table = Table(load_config(path))
        try:
            await table.start()
        finally:
            await table.stop()

    asyncio.run(asyncio.wait_for(run(), 60))


def sql(path: Path, statement: str, *args: object) -> None:
    db = sqlite3.connect(path)
    db.execute(statement, args)
    db.commit()
    db.close()


def files(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


@pytest.fixture(autouse=True)
def served_briefly(monkeypatch: pytest.MonkeyPatch) -> None:
    """`croupier run` in these tests stops as soon as it has started: a start that should have been refused
    returns 0 instead of serving forever."""
    from controller.runtime import Runtime

    async def no_serving(self: Runtime) -> None:
        return None

    monkeypatch.setattr(Runtime, "run", no_serving)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a table config and the journal of 3 rounds (its anchor beside it), copied for each test."""
    folder = tmp_path_factory.mktemp("played")
    play(write_config(folder), 3)
    return folder


@pytest.fixture()
def table(played: Path, tmp_path: Path) -> Path:
    for f in played.iterdir():
        if f.is_file():
            shutil.copy2(f, tmp_path / f.name)
    return tmp_path / "table.toml"


def rows(path: Path) -> int:
    db = sqlite3.connect(path.parent / "t.journal")
    try:
        return db.execute("SELECT count(*) FROM journal").fetchone()[0]
    finally:
        db.close()


# ---------------------------------------------------------------------------------------------- point 4


def test_a_forged_record_with_its_chain_recomputed_is_refused(table: Path) -> None:
    # The forger knows the row format and the SHA-256 chain of schema 1, but not the machine's key.
    journal = table.parent / "t.journal"
    db = sqlite3.connect(journal)
    found = db.execute("SELECT seq, record FROM journal WHERE record LIKE '%place_bet%' ORDER BY seq").fetchone()
    assert found is not None
    forged_at, record = found
    record = record.replace('"amount":', '"amount":9')
    prev = db.execute("SELECT prev_hash FROM journal WHERE seq = ?", (forged_at,)).fetchone()[0]
    later = db.execute("SELECT seq, table_id, ts_ns, schema, record FROM journal WHERE seq >= ? ORDER BY seq",
                       (forged_at,)).fetchall()
    for seq, tid, ts, schema, text in later:
        text = record if seq == forged_at else text
        h = hashlib.sha256()
        for part in (prev, str(seq), tid, str(ts), str(schema), text):
            h.update(part.encode())
            h.update(b"\x1f")
        db.execute("UPDATE journal SET record = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                   (text, prev, h.hexdigest(), seq))
        prev = h.hexdigest()
    db.commit()
    db.close()
    with pytest.raises(JournalIntegrityError, match=f"row {forged_at}: content does not match its MAC"):
        start(table)
    assert main(["run", "--config", str(table)]) == 2


def test_rows_deleted_with_sql_are_missed(table: Path, capsys: pytest.CaptureFixture[str]) -> None:
    last = rows(table)
    sql(table.parent / "t.journal", "DELETE FROM journal WHERE seq > ?", last - 3)
    assert main(["run", "--config", str(table)]) == 2
    err = capsys.readouterr().err
    assert f"ends at row {last - 3}, but its anchor" in err and f"rows {last - 2} to {last} are missing" in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("damage, message", [
    ("zero bytes", "is empty (0 bytes), but its anchor"),
    ("deleted", "is missing, but its anchor"),
])
def test_an_empty_or_missing_journal_with_an_anchor_refuses(table: Path, damage: str, message: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    last = rows(table)
    journal = table.parent / "t.journal"
    if damage == "zero bytes":
        journal.write_bytes(b"")
    else:
        journal.unlink()
    assert main(["run", "--config", str(table)]) == 2
    err = capsys.readouterr().err
    assert message in err and f"says {last} rows were committed: all {last} rows are missing" in err
    assert not journal.exists() or journal.stat().st_size == 0  # the refusal wrote nothing


@pytest.mark.parametrize("command", ["recall", "meters"])
def test_recall_and_meters_open_the_journal_read_only(table: Path, command: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    before = files(table.parent)
    assert main([command, "--config", str(table)]) == 0
    assert files(table.parent) == before  # no file made, none written
    (table.parent / "t.journal").write_bytes(b"")
    before = files(table.parent)
    capsys.readouterr()
    assert main([command, "--config", str(table)]) == 2
    err = capsys.readouterr().err
    assert "is empty (0 bytes), but its anchor" in err and "0 rounds" not in err
    assert files(table.parent) == before


def test_recall_on_an_empty_journal_without_anchor_is_an_error(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path)
    (tmp_path / "t.journal").write_bytes(b"")
    assert main(["meters", "--config", str(path)]) == 2
    assert "t.journal is empty (0 bytes): nothing to read" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.journal", "table.toml"]
    assert (tmp_path / "t.journal").stat().st_size == 0


def test_journal_verify(table: Path, capsys: pytest.CaptureFixture[str]) -> None:
    last = rows(table)
    before = files(table.parent)
    assert main(["journal", "verify", "--config", str(table)]) == 0
    out = capsys.readouterr().out
    assert f"{last} rows, last seq {last}; every MAC verifies" in out and f"anchor {table.parent / 't.anchor'}" in out
    assert files(table.parent) == before
    sql(table.parent / "t.journal", "UPDATE journal SET ts_ns = ts_ns + 1 WHERE seq = 5")
    assert main(["journal", "verify", "--config", str(table)]) == 2
    assert "does NOT verify" in capsys.readouterr().err


def test_the_anchor_survives_a_torn_copy_and_catches_up_after_a_crash(tmp_path: Path) -> None:
    key, anchor, path = tmp_path / "key" / "k", tmp_path / "t.anchor", tmp_path / "t.journal"
    with Journal(path, "t", key_file=key, anchor=anchor) as j:
        j.append_many([{"i": i} for i in range(3)])
        j.append({"i": 3})
        kept = anchor.read_bytes()      # the anchor as a crash between the commit and its write leaves it
        j.append({"i": 4})
    anchor.write_bytes(kept)
    with Journal(path, "t", key_file=key, anchor=anchor) as j:   # one commit ahead of the anchor: allowed
        assert (j.anchored_seq, j.last_seq) == (4, 5)
    with Journal(path, "t", key_file=key, anchor=anchor) as j:   # and the anchor caught up on opening
        assert j.anchored_seq == 5
        j.append({"i": 5})                                        # writes the other copy
    data = bytearray(anchor.read_bytes())
    newest = 0 if b" 6 " in data[:4096] else 4096
    data[newest + 20:newest + 30] = b"\xff" * 10                  # a torn write of the newest copy
    anchor.write_bytes(bytes(data))
    with Journal(path, "t", key_file=key, anchor=anchor, readonly=True) as j:
        assert (j.anchored_seq, j.last_seq) == (5, 6)
    other = 4096 - newest
    data[other + 20:other + 30] = b"\xff" * 10                    # both copies gone
    anchor.write_bytes(bytes(data))
    with pytest.raises(JournalIntegrityError, match="anchor .* is damaged .*neither copy verifies"):
        Journal(path, "t", key_file=key, anchor=anchor)


def test_an_anchor_that_does_not_match_its_row_refuses(tmp_path: Path) -> None:
    key, path = tmp_path / "key" / "k", tmp_path / "t.journal"
    with Journal(path, "t", key_file=key, anchor=tmp_path / "t.anchor") as j:
        j.append_many([{"i": i} for i in range(3)])
    # another journal of the same table, made with the same key, put in its place
    other = tmp_path / "other"
    with Journal(other / "t.journal", "t", key_file=key, anchor=other / "t.anchor") as j:
        j.append_many([{"i": i} for i in range(5)])
    shutil.copy(other / "t.journal", path)
    with pytest.raises(JournalIntegrityError, match="row 3 is not the row its anchor .* recorded"):
        Journal(path, "t", key_file=key, anchor=tmp_path / "t.anchor")


def test_an_anchor_without_its_journal_rows_or_a_journal_without_its_anchor(tmp_path: Path) -> None:
    key, path, anchor = tmp_path / "key" / "k", tmp_path / "t.journal", tmp_path / "t.anchor"
    with Journal(path, "t", key_file=key, anchor=anchor) as j:
        assert anchor.exists() and j.anchored_seq == 0  # the anchor is there before the first row
        j.append({"i": 0})
    anchor.unlink()
    with pytest.raises(JournalIntegrityError, match="anchor .* is missing, but journal .* has 1 rows"):
        Journal(path, "t", key_file=key, anchor=anchor)


# ---------------------------------------------------------------------------------------------- the key


def test_the_key(tmp_path: Path) -> None:
    from controller.journal import JournalKeyError, make_key

    key, path, anchor = tmp_path / "keys" / "journal.key", tmp_path / "j" / "t.journal", tmp_path / "j" / "t.anchor"
    with Journal(path, "t", key_file=key, anchor=anchor) as j:  # made on first use, for the service alone
        j.append({"i": 0})
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_text().strip()) == 64
    other = tmp_path / "other.key"
    make_key(other)
    with pytest.raises(JournalKeyError, match=r"was made with journal key \w{16}, but .*other.key is key \w{16}"):
        Journal(path, "t", key_file=other)
    key.chmod(0o644)
    with pytest.raises(JournalKeyError, match=r"may be read by others \(mode 0644\): chmod 0400"):
        Journal(path, "t", key_file=key, anchor=anchor)
    key.unlink()
    with pytest.raises(JournalKeyError, match="journal key .* is missing, but anchor .* exists"):
        Journal(path, "t", key_file=key, anchor=anchor)
    with pytest.raises(JournalKeyError, match="journal key .* is missing: the 1 rows of .* cannot be verified"):
        Journal(path, "t", key_file=key)
    with pytest.raises(JournalKeyError, match="cannot be made"):
        Journal(tmp_path / "new.journal", "t", key_file=tmp_path / "j" / "t.journal" / "k")  # not a folder


def test_the_config_names_the_key_and_the_anchor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path, 'journal_key = "etc/journal.key"\njournal_anchor = "anchors/t1.anchor"',
                        journal="state/t.journal")
    cfg = load_config(path)
    assert (cfg.journal_key, cfg.journal_anchor) == (tmp_path / "etc/journal.key", tmp_path / "anchors/t1.anchor")
    play(path, 1)
    assert (tmp_path / "anchors" / "t1.anchor").exists() and not (tmp_path / "state" / "t.anchor").exists()
    assert main(["journal", "verify", "--config", str(path)]) == 0
    (tmp_path / "etc" / "journal.key").unlink()
    capsys.readouterr()
    assert main(["run", "--config", str(path)]) == 2
    assert "journal key" in capsys.readouterr().err
    bad = write_config(tmp_path, 'journal_key = "state/keys/journal.key"', journal="state/t.journal")
    assert main(["meters", "--config", str(bad)]) == 2
    assert "journal_key: keep the key outside the journal's folder" in capsys.readouterr().err


def test_an_unkeyed_schema_1_journal_is_refused_until_migrated(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from controller.journal import migrate

    key = tmp_path / "key" / "journal.key"
    path = write_config(tmp_path, f'journal_key = "{key}"', journal="state/t.journal")
    play(path, 1)
    journal = tmp_path / "state" / "t.journal"
    # rewrite it as the old code wrote it: SHA-256 chain, schema 1, no anchor
    db = sqlite3.connect(journal)
    prev = hashlib.sha256(b"croupier-journal:t1").hexdigest()
    for seq, tid, ts, schema, text in db.execute(
            "SELECT seq, table_id, ts_ns, schema, record FROM journal ORDER BY seq").fetchall():
        h = hashlib.sha256()
        for part in (prev, str(seq), tid, str(ts), "1", text):
            h.update(part.encode())
            h.update(b"\x1f")
        db.execute("UPDATE journal SET schema = 1, prev_hash = ?, hash = ? WHERE seq = ?", (prev, h.hexdigest(), seq))
        prev = h.hexdigest()
    db.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
    db.execute("DELETE FROM meta WHERE key = 'key_id'")
    db.commit()
    db.close()
    (tmp_path / "state" / "t.anchor").unlink()
    assert main(["run", "--config", str(path)]) == 2
    assert "unkeyed (schema 1) journal" in capsys.readouterr().err
    assert main(["journal", "migrate", "--config", str(path)]) == 0
    assert main(["journal", "verify", "--config", str(path)]) == 0
    play(path, 1)  # runs on, the old rows replaying
    assert main(["journal", "migrate", "--config", str(path)]) == 2
    sql(journal, "UPDATE journal SET record = record WHERE seq = 1")
    with pytest.raises(JournalIntegrityError, match="only schema 1 is migrated"):
        migrate(journal, "t1", key_file=key)


def test_a_cabinet_and_a_link_refuse_too(tmp_path: Path) -> None:
    from controller.cabinet import Cabinet
    from controller.progressive import LinkController
    from tests.cabinet_helpers import cabinet_config
    from tests.test_progressive import link_config

    cfg = cabinet_config(tmp_path)

    async def cabinet_life() -> None:
        cab = Cabinet(cfg)
        await cab.start()
        await cab.stop()

    asyncio.run(cabinet_life())
    asyncio.run(cabinet_life())
    sql(cfg.journal, "DELETE FROM journal WHERE seq = (SELECT max(seq) FROM journal)")
    with pytest.raises(JournalIntegrityError, match=r"row \d+ is missing"):
        asyncio.run(cabinet_life())

    link = link_config(tmp_path / "link")

    async def link_life() -> None:
        ctl = LinkController(link)
        await ctl.start()
        await ctl.stop()

    asyncio.run(link_life())
    link.journal.write_bytes(b"")
    with pytest.raises(JournalIntegrityError, match="empty \\(0 bytes\\), but its anchor"):
        asyncio.run(link_life())


# ---------------------------------------------------------------------------------------------- point 9


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 7)), min_size=1, max_size=3))
def test_bit_flips_are_refused_or_harmless(table: Path, flips: list[tuple[int, int]]) -> None:
    journal = table.parent / "t.journal"
    original = journal.read_bytes()
    try:
        data = bytearray(original)
        for offset, bit in flips:
            data[offset % len(data)] ^= 1 << bit
        journal.write_bytes(bytes(data))
        try:
            with Journal(journal, "t1", anchor=table.parent / "t.anchor", readonly=True) as j:
                entries = list(j.entries())
        except JournalIntegrityError as exc:
            assert str(exc).startswith(("journal ", str(journal))) and "\n" not in str(exc)
        else:  # a flip in free space or in a page SQLite does not read: the journal is as it was
            with Journal(journal, "t1", readonly=True, anchor=None) as j:
                assert len(entries) == j.last_seq == rows(table)
    finally:
        journal.write_bytes(original)


@pytest.mark.parametrize("keep", [0.25, 0.5, 0.9])
def test_a_partly_truncated_journal_is_refused_with_exit_2(table: Path, keep: float,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    journal = table.parent / "t.journal"
    data = journal.read_bytes()
    journal.write_bytes(data[:int(len(data) * keep)])
    for command in (["meters"], ["recall"], ["journal", "verify"], ["run"]):
        assert main([*command, "--config", str(table)]) == 2, command
        err = capsys.readouterr().err
        assert "t.journal" in err and "Traceback" not in err and err.count("\n") == 1, err
    assert journal.read_bytes() == data[:int(len(data) * keep)]


def test_seeded_bit_flips_at_the_command_line(table: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = table.parent / "t.journal"
    original = journal.read_bytes()
    rng = SeededRng(20)
    refused = 0
    for _ in range(20):
        data = bytearray(original)
        data[rng.randbelow(len(data))] ^= 1 << rng.randbelow(8)
        journal.write_bytes(bytes(data))
        code = main(["meters", "--config", str(table)])
        err = capsys.readouterr().err
        assert code in (0, 2) and "Traceback" not in err
        refused += code == 2
    assert refused  # most flips land in the rows


# ---------------------------------------------------------------------------------------------- point 19


def test_recall_given_a_journal_for_its_config(table: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recall", "--config", str(table.parent / "t.journal")]) == 2
    err = capsys.readouterr().err
    assert "t.journal: not a TOML config (not UTF-8 text" in err and err.count("\n") == 1


def test_meters_into_a_closed_pipe(table: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "meters", "--config", str(table)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # `| head` that has read all it wants before the first line comes
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 0 and err == ""
