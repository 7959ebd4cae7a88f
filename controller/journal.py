"""The write-ahead journal: every event of a table or cabinet in SQLite (WAL, synchronous=FULL), hash-chained, checked on open.

A row is (seq, table id, time, schema version, record JSON, previous hash, hash), where
hash = SHA-256 over the previous hash and the row's content. Opening a journal verifies the whole
chain; a broken chain raises JournalIntegrityError and the service refuses to run (regulatory
practice: a journal is never silently cleared or repaired). Records are plain JSON objects; the
runtime decides what they mean. Replaying the records in order rebuilds the state.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from dataclasses import replace
from typing import Any, Callable, Iterable, Iterator, Mapping, TypeVar

__all__ = ["Journal", "Entry", "JournalIntegrityError", "canonical_json", "fold", "JOURNAL_SCHEMA"]

JOURNAL_SCHEMA = 1

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS journal (
    seq       INTEGER PRIMARY KEY,
    table_id  TEXT    NOT NULL,
    ts_ns     INTEGER NOT NULL,
    schema    INTEGER NOT NULL,
    record    TEXT    NOT NULL,
    prev_hash TEXT    NOT NULL,
    hash      TEXT    NOT NULL
);
"""


S = TypeVar("S")


def fold(step: Callable[[S, dict[str, Any]], tuple[S, Any]], state: S,
         records: Iterable[tuple[int, dict[str, Any]]]) -> S:
    """Replay (seq, record) pairs through a runtime's pure `step` into its state (a frozen dataclass with a `seq`):
    what recovery, recall and meters of a table, a cabinet and a progressive link all start from."""
    for seq, record in records:
        state, _ = step(state, record)
        state = replace(state, seq=seq)  # type: ignore[type-var]
    return state


class JournalIntegrityError(RuntimeError):
    """The journal's hash chain or content is broken; the service must not run on it."""


def canonical_json(record: Mapping[str, Any]) -> str:
    """The one byte-exact JSON form of a record that is stored and hashed."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _genesis(table_id: str) -> str:
    return hashlib.sha256(f"croupier-journal:{table_id}".encode()).hexdigest()


def _row_hash(prev_hash: str, seq: int, table_id: str, ts_ns: int, schema: int, record: str) -> str:
    h = hashlib.sha256()
    for part in (prev_hash, str(seq), table_id, str(ts_ns), str(schema), record):
        h.update(part.encode())
        h.update(b"\x1f")  # unit separator: no two different rows hash the same bytes
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class Entry:
    seq: int
    table_id: str
    ts_ns: int
    schema: int
    record: dict[str, Any]
    hash: str

    @property
    def time(self) -> float:
        return self.ts_ns / 1e9


class Journal:
    """One table's (or cabinet's) journal file. Not thread-safe: the runtime's single writer owns it."""

    def __init__(self, path: str | Path, table_id: str, *, verify: bool = True) -> None:
        if not table_id or not isinstance(table_id, str):
            raise ValueError("a journal belongs to a table: table_id must be a non-empty string")
        self.path = Path(path)
        self.table_id = table_id
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        # FULL: each commit is fsynced before append() returns, so a journaled event survives power loss.
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_DDL)
        owner = self._db.execute("SELECT value FROM meta WHERE key='table_id'").fetchone()
        if owner is None:
            self._db.execute("INSERT INTO meta VALUES ('table_id', ?), ('schema', ?)", (table_id, str(JOURNAL_SCHEMA)))
        elif owner[0] != table_id:
            raise JournalIntegrityError(f"{self.path} is the journal of table {owner[0]!r}, not {table_id!r}")
        self._last_seq, self._last_hash = 0, _genesis(table_id)
        if verify:
            self.verify()
        else:
            row = self._db.execute("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
            if row:
                self._last_seq, self._last_hash = row

    @property
    def last_seq(self) -> int:
        return self._last_seq

    def append(self, record: Mapping[str, Any], ts_ns: int | None = None) -> Entry:
        """Write one record durably and return its entry; nothing may act on the record before this returns."""
        text = canonical_json(record)
        seq = self._last_seq + 1
        ts = time.time_ns() if ts_ns is None else ts_ns
        digest = _row_hash(self._last_hash, seq, self.table_id, ts, JOURNAL_SCHEMA, text)
        self._db.execute("INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (seq, self.table_id, ts, JOURNAL_SCHEMA, text, self._last_hash, digest))
        self._last_seq, self._last_hash = seq, digest
        return Entry(seq, self.table_id, ts, JOURNAL_SCHEMA, json.loads(text), digest)

    def append_many(self, records: list[Mapping[str, Any]], ts_ns: int | None = None) -> list[Entry]:
        """Write several records in one durable transaction (group commit): all of them or none."""
        ts = time.time_ns() if ts_ns is None else ts_ns
        rows, entries = [], []
        seq, prev = self._last_seq, self._last_hash
        for record in records:
            text = canonical_json(record)
            seq += 1
            digest = _row_hash(prev, seq, self.table_id, ts, JOURNAL_SCHEMA, text)
            rows.append((seq, self.table_id, ts, JOURNAL_SCHEMA, text, prev, digest))
            entries.append(Entry(seq, self.table_id, ts, JOURNAL_SCHEMA, json.loads(text), digest))
            prev = digest
        with self._db:  # one transaction: BEGIN ... COMMIT (fsynced once)
            self._db.execute("BEGIN")
            self._db.executemany("INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        self._last_seq, self._last_hash = seq, prev
        return entries

    def entries(self, after: int = 0) -> Iterator[Entry]:
        """Entries with seq > after, in order."""
        cur = self._db.execute("SELECT seq, table_id, ts_ns, schema, record, hash FROM journal WHERE seq > ? "
                               "ORDER BY seq", (after,))
        for seq, table_id, ts, schema, record, digest in cur:
            yield Entry(seq, table_id, ts, schema, json.loads(record), digest)

    def verify(self) -> int:
        """Check every row's chain link and hash; return the row count or raise JournalIntegrityError."""
        prev, expected_seq = _genesis(self.table_id), 1
        cur = self._db.execute("SELECT seq, table_id, ts_ns, schema, record, prev_hash, hash FROM journal ORDER BY seq")
        for seq, table_id, ts, schema, record, prev_hash, digest in cur:
            where = f"{self.path} row {seq}"
            if seq != expected_seq:
                raise JournalIntegrityError(f"{where}: expected row {expected_seq} (rows missing)")
            if table_id != self.table_id:
                raise JournalIntegrityError(f"{where}: belongs to table {table_id!r}")
            if prev_hash != prev:
                raise JournalIntegrityError(f"{where}: chain broken (previous hash does not match)")
            if _row_hash(prev, seq, table_id, ts, schema, record) != digest:
                raise JournalIntegrityError(f"{where}: content does not match its hash (altered)")
            try:
                json.loads(record)
            except ValueError:
                raise JournalIntegrityError(f"{where}: record is not valid JSON") from None
            prev, expected_seq = digest, seq + 1
        self._last_seq, self._last_hash = expected_seq - 1, prev
        return expected_seq - 1

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
