"""The write-ahead journal: every event of a table or cabinet in SQLite (WAL, synchronous=FULL), chained by a keyed MAC, anchored outside the database, checked on open.

A row is (seq, table id, time, schema version, record JSON, previous MAC, MAC), where MAC = HMAC-SHA-256,
under the machine's journal key, over the previous MAC and the row's content. The key lives outside the
journal folder (deploy/install.sh makes /etc/croupier/journal.key, readable by the service user alone; a
demo or a test makes one on first use in the user's state folder), so whoever can edit the file cannot
recompute the chain. After each commit the journal writes its anchor, the last committed (seq, MAC),
to a small file outside the database, fsynced; a journal that ends before its anchor (a deleted WAL,
deleted rows, an older copy, a truncated or zeroed file) is missing committed rows.

Opening a journal verifies the whole chain and the anchor; anything wrong, a damaged SQLite file
included, raises JournalIntegrityError and the service refuses to run (regulatory practice: a journal
is never silently cleared or repaired). Records are plain JSON objects; the runtime decides what they
mean. Replaying the records in order rebuilds the state.

Limits, said plainly: someone holding the key can forge a journal; restoring an older anchor together
with the journal it matched (both genuine) is not noticed (that needs a monotonic counter in hardware).
Schema 1 journals (an unkeyed SHA-256 chain) are refused until `croupier journal migrate` keys them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sqlite3
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar
from urllib.parse import quote

from controller.journalseal import (Anchor, JournalIntegrityError, JournalKeyError, default_anchor, default_key_file,
                                   key_id, make_key, read_key)

if TYPE_CHECKING:
    from _hashlib import HASH

__all__ = ["Journal", "Entry", "JournalIntegrityError", "JournalKeyError", "canonical_json", "fold",
           "JOURNAL_SCHEMA", "default_key_file", "default_anchor", "make_key", "migrate", "open_journal",
           "write_copy"]

JOURNAL_SCHEMA = 2  # 1: SHA-256 chain (no key); 2: HMAC-SHA-256 chain under the machine's journal key

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


def canonical_json(record: Mapping[str, Any]) -> str:
    """The one byte-exact JSON form of a record that is stored and MACed."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


# ---------------------------------------------------------------------------------------------- the chain

def _genesis(mac: hmac.HMAC | None, table_id: str) -> str:
    if mac is None:  # schema 1
        return hashlib.sha256(f"croupier-journal:{table_id}".encode()).hexdigest()
    h = mac.copy()
    h.update(f"croupier-journal:{table_id}".encode())
    return h.hexdigest()


def _row_hash(mac: hmac.HMAC | None, prev_hash: str, seq: int, table_id: str, ts_ns: int, schema: int,
              record: str) -> str:
    h: HASH | hmac.HMAC = hashlib.sha256() if mac is None else mac.copy()
    for part in (prev_hash, str(seq), table_id, str(ts_ns), str(schema), record):
        h.update(part.encode())
        h.update(b"\x1f")  # unit separator: no two different rows MAC the same bytes
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------- the journal

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
    """One table's (or cabinet's) journal file. Not thread-safe: the runtime's single writer owns it.

    `key_file`: the journal key (default `default_key_file()`), made on first use when the journal is new.
    `anchor`: the anchor file (None: no anchor is kept or checked; the runtime always names one).
    `readonly`: open with SQLite's mode=ro, never create or write a file (recall, meters, verify).
    `verify`: check every row's MAC (False: only the last row against the anchor).
    """

    def __init__(self, path: str | Path, table_id: str, *, key_file: str | Path | None = None,
                 anchor: str | Path | None = None, verify: bool = True, readonly: bool = False) -> None:
        if not table_id or not isinstance(table_id, str):
            raise ValueError("a journal belongs to a table: table_id must be a non-empty string")
        self.path = Path(path)
        self.table_id = table_id
        self.readonly = readonly
        self.key_file = Path(key_file) if key_file is not None else default_key_file()
        self.anchor_path = Path(anchor) if anchor is not None else None
        self._db: sqlite3.Connection | None = None
        self._anchor: Anchor | None = None
        self.anchored_seq: int | None = None  # the seq the anchor held when opened (None: no anchor)
        self.key_id = ""
        self._new_meta = False
        self._anchor_to: str | None = None  # after the checks: "create" or "catch up" the anchor
        try:
            self._open(verify)
        except BaseException:
            self.close()
            raise

    # -------------------------------------------------------------------------------------- opening

    def _open(self, verify: bool) -> None:
        size = self.path.stat().st_size if self.path.exists() else None
        wal = self.path.with_name(self.path.name + "-wal")
        in_wal = wal.exists() and wal.stat().st_size > 0  # rows not yet copied into the file: SQLite reads them
        key = read_key(self.key_file)
        anchored = None
        if self.anchor_path is not None and self.anchor_path.exists():
            if key is None:
                raise JournalKeyError(f"journal key {self.key_file} is missing, but anchor {self.anchor_path} "
                                      f"exists: the journal cannot be verified without the key it was made with")
            # the anchor is read before the journal: a journal only grows, so one read after it is never behind
            self._anchor = Anchor(self.anchor_path, self.table_id, hmac.new(key, digestmod=hashlib.sha256))
            anchored = self._anchor.read()
            self.anchored_seq = anchored[0] if anchored else None
        if size is None or (size == 0 and not in_wal):
            what = "missing" if size is None else "empty (0 bytes)"
            if anchored is not None and anchored[0] > 0:
                raise JournalIntegrityError(
                    f"journal {self.path} is {what}, but its anchor {self.anchor_path} says {anchored[0]} rows were "
                    f"committed: all {anchored[0]} rows are missing")
            if self.readonly:
                raise JournalIntegrityError(f"journal {self.path} is {what}: nothing to read")
        elif not in_wal:
            self._check_header(size)
        fresh = size is None or (size == 0 and not in_wal)
        # An existing journal is checked over a read-only connection, so a refused one is left exactly as found
        # (a writer's close would checkpoint its WAL into the file); only then is it opened for writing.
        self._db = self._connect(write=fresh)
        try:
            self._open_db(key, anchored, verify)
            if not self.readonly:
                if not fresh:
                    self._db.close()
                    self._db = self._connect(write=True)
                self._prepare()
        except sqlite3.DatabaseError as exc:  # a damaged file: bit flips, truncation, not a database at all
            raise JournalIntegrityError(f"journal {self.path} is damaged: {exc}") from None

    def _check_header(self, size: int) -> None:
        """Name a zeroed or truncated file before SQLite calls it 'malformed'. Only with no WAL beside it: during a
        checkpoint the file and its header may disagree until the WAL is copied in."""
        with open(self.path, "rb") as fh:
            head = fh.read(100)
        if not head.startswith(b"SQLite format 3\0"):
            raise JournalIntegrityError(f"journal {self.path} is damaged: its SQLite header is gone (the file was "
                                        f"zeroed or overwritten)")
        if len(head) < 100:
            raise JournalIntegrityError(f"journal {self.path} is truncated: {size} bytes, not even its header")
        page_size = int.from_bytes(head[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        pages = int.from_bytes(head[28:32], "big")
        expected = page_size * pages
        if head[92:96] == head[24:28] and size < expected:  # the header's page count is valid (SQLite >= 3.7.0)
            lost = -(-(expected - size) // max(page_size, 1))
            raise JournalIntegrityError(f"journal {self.path} is truncated: {size} bytes of the {expected} its "
                                        f"header records (the last {lost} pages are missing)")

    def _connect(self, write: bool) -> sqlite3.Connection:
        try:
            if not write:
                # mode=ro creates no file; with no WAL beside it (a clean stop) immutable=1 keeps SQLite from
                # making an empty WAL and its index as a read-only WAL connection would
                wal = self.path.with_name(self.path.name + "-wal").exists()
                uri = f"file:{quote(str(self.path.resolve()))}?mode=ro" + ("" if wal else "&immutable=1")
                return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                # FULL: each commit is fsynced before append() returns, so a journaled event survives power loss.
                db.execute("PRAGMA synchronous=FULL")
            except BaseException:
                db.close()
                raise
            return db
        except sqlite3.DatabaseError as exc:
            raise JournalIntegrityError(f"journal {self.path} is damaged or not a journal: {exc}") from None

    def _open_db(self, key: bytes | None, anchored: tuple[int, str] | None, verify: bool) -> None:
        db = self._db
        assert db is not None
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and not {"meta", "journal"} <= tables:
            raise JournalIntegrityError(f"{self.path} is an SQLite file but not a journal (tables: "
                                        f"{', '.join(sorted(tables))})")
        meta = dict(db.execute("SELECT key, value FROM meta")) if tables else {}
        owner = meta.get("table_id")
        if owner is not None and owner != self.table_id:
            raise JournalIntegrityError(f"{self.path} is the journal of table {owner!r}, not {self.table_id!r}")
        last = db.execute("SELECT max(seq) FROM journal").fetchone()[0] if tables else None
        rows = last is not None
        if anchored is not None and anchored[0] > (last or 0):  # before anything is written to the evidence
            self._behind(last or 0, anchored[0])
        if not tables and self.readonly:
            raise JournalIntegrityError(f"journal {self.path} holds no journal yet (an empty database)")
        schema = meta.get("schema", str(JOURNAL_SCHEMA))
        if schema == "1" and rows:
            raise JournalIntegrityError(
                f"journal {self.path} is an unkeyed (schema 1) journal: anyone can recompute its SHA-256 chain. "
                f"Keep a copy, then key it to this machine once with `croupier journal migrate --config FILE`")
        if schema not in ("1", str(JOURNAL_SCHEMA)):
            raise JournalIntegrityError(f"journal {self.path} has schema {schema!r}; this croupier reads "
                                        f"{JOURNAL_SCHEMA} (a newer croupier wrote it?)")
        if key is None:
            if rows:
                raise JournalKeyError(f"journal key {self.key_file} is missing: the {last} rows of {self.path} cannot "
                                      f"be verified without the key they were made with")
            if self.readonly:
                raise JournalKeyError(f"journal key {self.key_file} is missing")
            try:
                key = make_key(self.key_file)
            except OSError as exc:
                raise JournalKeyError(f"journal key {self.key_file} is missing and cannot be made: {exc.strerror} "
                                      f"(deploy/install.sh makes it; a config names it as journal_key)") from None
        self.key_id = key_id(key)
        self._mac = hmac.new(key, digestmod=hashlib.sha256)
        if rows and meta.get("key_id") not in (None, self.key_id):
            raise JournalKeyError(f"journal {self.path} was made with journal key {meta['key_id']}, but "
                                  f"{self.key_file} is key {self.key_id}: the wrong key file, or a journal from "
                                  f"another machine")
        # a new journal (or a schema 1 one with no rows): this key's from now on
        self._new_meta = not tables or meta.get("schema") != str(JOURNAL_SCHEMA) or meta.get("key_id") != self.key_id
        self._last_seq, self._last_hash = 0, _genesis(self._mac, self.table_id)
        if verify and tables:
            self.verify()
        elif rows:
            self._last_seq, self._last_hash = db.execute(
                "SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
        self._check_anchor(anchored)

    def _check_anchor(self, anchored: tuple[int, str] | None) -> None:
        if self.anchor_path is None:
            return
        if anchored is None:
            if self._last_seq:
                raise JournalIntegrityError(
                    f"anchor {self.anchor_path} is missing, but journal {self.path} has {self._last_seq} rows: "
                    f"whether rows after them were lost cannot be told (the anchor was deleted or moved)")
            self._anchor_to = "create"  # a new journal: its anchor exists before its first row
            return
        seq, mac = anchored
        if seq > self._last_seq:
            self._behind(self._last_seq, seq)
        assert self._db is not None
        row = (0, _genesis(self._mac, self.table_id)) if seq == 0 else \
            self._db.execute("SELECT seq, hash FROM journal WHERE seq = ?", (seq,)).fetchone()
        if row is None or not isinstance(row[1], str) or not hmac.compare_digest(row[1], mac):
            raise JournalIntegrityError(f"journal {self.path} row {seq} is not the row its anchor "
                                        f"{self.anchor_path} recorded (the file was replaced or rewritten)")
        if seq < self._last_seq:
            self._anchor_to = "catch up"  # the last commit before a crash had not reached it

    def _prepare(self) -> None:
        """Make a checked journal ready to write: its tables and key id if new, its anchor made or caught up."""
        assert self._db is not None
        if self._new_meta:
            self._db.executescript(_DDL)
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('table_id', ?), ('schema', ?), ('key_id', ?)",
                             (self.table_id, str(JOURNAL_SCHEMA), self.key_id))
        if self._anchor_to == "create":
            assert self.anchor_path is not None
            self._anchor = Anchor(self.anchor_path, self.table_id, self._mac)
            self._anchor.create(0, self._last_hash)
            self.anchored_seq = 0
        elif self._anchor_to == "catch up":
            assert self._anchor is not None
            self._anchor.write(self._last_seq, self._last_hash)

    def _behind(self, last: int, anchored: int) -> None:
        rows = f"row {anchored} is" if last + 1 == anchored else f"rows {last + 1} to {anchored} are"
        raise JournalIntegrityError(
            f"journal {self.path} ends at row {last}, but its anchor {self.anchor_path} says row {anchored} was "
            f"committed: {rows} missing (a deleted WAL, deleted rows, or an older copy of the file)")

    # -------------------------------------------------------------------------------------- reading and writing

    @property
    def last_seq(self) -> int:
        return self._last_seq

    def _writable(self) -> sqlite3.Connection:
        if self.readonly or self._db is None:
            raise RuntimeError(f"journal {self.path} is open read-only")
        return self._db

    def append(self, record: Mapping[str, Any], ts_ns: int | None = None) -> Entry:
        """Write one record durably and return its entry; nothing may act on the record before this returns."""
        return self.append_many([record], ts_ns)[0]

    def append_many(self, records: Sequence[Mapping[str, Any]], ts_ns: int | None = None) -> list[Entry]:
        """Write several records in one durable transaction (group commit): all of them or none; then the anchor."""
        db = self._writable()
        ts = time.time_ns() if ts_ns is None else ts_ns
        rows, entries = [], []
        seq, prev = self._last_seq, self._last_hash
        for record in records:
            text = canonical_json(record)
            seq += 1
            digest = _row_hash(self._mac, prev, seq, self.table_id, ts, JOURNAL_SCHEMA, text)
            rows.append((seq, self.table_id, ts, JOURNAL_SCHEMA, text, prev, digest))
            entries.append(Entry(seq, self.table_id, ts, JOURNAL_SCHEMA, json.loads(text), digest))
            prev = digest
        if len(rows) == 1:
            db.execute("INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?)", rows[0])  # autocommit: fsynced
        else:
            with db:  # one transaction: BEGIN ... COMMIT (fsynced once)
                db.execute("BEGIN")
                db.executemany("INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        self._last_seq, self._last_hash = seq, prev
        if self._anchor is not None:
            self._anchor.write(seq, prev)
        return entries

    def entries(self, after: int = 0) -> Iterator[Entry]:
        """Entries with seq > after, in order."""
        assert self._db is not None
        try:
            cur = self._db.execute("SELECT seq, table_id, ts_ns, schema, record, hash FROM journal WHERE seq > ? "
                                   "ORDER BY seq", (after,))
            for seq, table_id, ts, schema, record, digest in cur:
                yield Entry(seq, table_id, ts, schema, json.loads(record), digest)
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
            raise JournalIntegrityError(f"journal {self.path} is damaged: {exc}") from None

    def verify(self) -> int:
        """Check every row's chain link and MAC; return the row count or raise JournalIntegrityError."""
        assert self._db is not None
        prev, expected_seq = _genesis(self._mac, self.table_id), 1
        try:
            cur = self._db.execute("SELECT seq, table_id, ts_ns, schema, record, prev_hash, hash FROM journal "
                                   "ORDER BY seq")
            for seq, table_id, ts, schema, record, prev_hash, digest in cur:
                where = f"{self.path} row {seq}"
                if seq != expected_seq:
                    raise JournalIntegrityError(f"{where}: expected row {expected_seq} (rows missing)")
                if table_id != self.table_id:
                    raise JournalIntegrityError(f"{where}: belongs to table {table_id!r}")
                if not all(isinstance(v, str) for v in (record, prev_hash, digest)) or \
                        not all(isinstance(v, int) for v in (ts, schema)):
                    raise JournalIntegrityError(f"{where}: damaged (a column holds the wrong type)")
                if prev_hash != prev:
                    raise JournalIntegrityError(f"{where}: chain broken (previous MAC does not match)")
                if not hmac.compare_digest(_row_hash(self._mac, prev, seq, table_id, ts, schema, record), digest):
                    raise JournalIntegrityError(f"{where}: content does not match its MAC (altered or forged)")
                try:
                    json.loads(record)
                except ValueError:
                    raise JournalIntegrityError(f"{where}: record is not valid JSON") from None
                prev, expected_seq = digest, seq + 1
        except sqlite3.DatabaseError as exc:
            raise JournalIntegrityError(f"journal {self.path} is damaged: {exc}") from None
        self._last_seq, self._last_hash = expected_seq - 1, prev
        return expected_seq - 1

    def close(self) -> None:
        if self._anchor is not None:
            self._anchor.close()
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_journal(cfg: Any, *, readonly: bool = False, verify: bool = True) -> Journal:
    """The journal a table's, cabinet's or link's config names, with its key and its anchor."""
    return Journal(cfg.journal, cfg.table_id, key_file=getattr(cfg, "journal_key", None),
                   anchor=getattr(cfg, "journal_anchor", None) or default_anchor(cfg.journal), readonly=readonly,
                   verify=verify)


def migrate(path: str | Path, table_id: str, *, key_file: str | Path | None = None,
            anchor: str | Path | None = None) -> int:
    """Key an unkeyed (schema 1) journal to this machine, once: verify its SHA-256 chain, rewrite every row's
    MAC under the journal key in one transaction, make its anchor. Returns the row count. Whoever runs it
    vouches for the file as it is now (a schema 1 chain proves nothing against someone who could edit it)."""
    path = Path(path)
    if not path.exists() or not path.stat().st_size:
        raise JournalIntegrityError(f"journal {path} is missing or empty: nothing to migrate")
    key_path = Path(key_file) if key_file is not None else default_key_file()
    db = sqlite3.connect(str(path), isolation_level=None)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        if meta.get("table_id") != table_id:
            raise JournalIntegrityError(f"{path} is the journal of table {meta.get('table_id')!r}, not {table_id!r}")
        if meta.get("schema") != "1":
            raise JournalIntegrityError(f"journal {path} has schema {meta.get('schema')!r}: only schema 1 is migrated")
        key = read_key(key_path)
        if key is None:
            key = make_key(key_path)
        mac = hmac.new(key, digestmod=hashlib.sha256)
        old_prev, new_prev, expected, updates = _genesis(None, table_id), _genesis(mac, table_id), 1, []
        for seq, tid, ts, schema, record, prev_hash, digest in db.execute(
                "SELECT seq, table_id, ts_ns, schema, record, prev_hash, hash FROM journal ORDER BY seq"):
            if seq != expected or tid != table_id or prev_hash != old_prev or \
                    _row_hash(None, old_prev, seq, tid, ts, schema, record) != digest:
                raise JournalIntegrityError(f"{path} row {seq}: its schema 1 chain is broken; not migrated")
            new = _row_hash(mac, new_prev, seq, tid, ts, schema, record)
            updates.append((new_prev, new, seq))
            old_prev, new_prev, expected = digest, new, seq + 1
        with db:
            db.execute("BEGIN")
            db.executemany("UPDATE journal SET prev_hash = ?, hash = ? WHERE seq = ?", updates)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?), ('key_id', ?)",
                       (str(JOURNAL_SCHEMA), key_id(key)))
    except sqlite3.DatabaseError as exc:
        raise JournalIntegrityError(f"journal {path} is damaged: {exc}") from None
    finally:
        db.close()
    if anchor is not None:
        Anchor(Path(anchor), table_id, mac).create(expected - 1, new_prev)
    return expected - 1


def write_copy(path: Path, table_id: str, rows: list[tuple[int, str, int, int, str, str, str]], *, key_file: Path,
               anchor: Path) -> int:
    """Write a new journal at `path` from another copy's rows (seq, table id, ts_ns, schema, record, previous MAC,
    MAC), byte for byte, and make its anchor; returns the row count. Every MAC is verified under `key_file` before
    the file is put in place, so only a genuine copy of this machine's journal is ever written (the floor's copy
    of a replaced machine, say). Refuses to write over an existing journal or anchor."""
    for existing in (path, anchor):
        if existing.exists():
            raise FileExistsError(f"{existing} exists: a copy is written as a new journal, never over one "
                                  f"(keep the old file for the regulator, move it away, then write the copy)")
    if not rows:
        raise JournalIntegrityError(f"no row of {table_id} to write")
    key = read_key(key_file)
    if key is None:
        raise JournalKeyError(f"journal key {key_file} is missing: a copy verifies only under the key of the "
                              f"machine whose journal it is (restore that key from its backup first)")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.copy-{os.getpid()}")
    leftovers = (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm"))
    for leftover in leftovers:
        leftover.unlink(missing_ok=True)
    db = sqlite3.connect(str(tmp), isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        with db:
            db.execute("BEGIN")
            for statement in _DDL.split(";"):  # not executescript: it would commit this transaction first
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT INTO meta VALUES ('table_id', ?), ('schema', ?), ('key_id', ?)",
                       (table_id, str(JOURNAL_SCHEMA), key_id(key)))
            db.executemany("INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    try:
        with Journal(tmp, table_id, key_file=key_file, anchor=None, readonly=True) as check:
            count = check.last_seq
    except JournalIntegrityError:
        for leftover in leftovers:
            leftover.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    Anchor(anchor, table_id, hmac.new(key, digestmod=hashlib.sha256)).create(rows[-1][0], rows[-1][6])
    return count
